package deliveryapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/apptest"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/delivery/deliverystore"
	"github.com/esign-svc/esign/shared/notify/outbox"
	"github.com/esign-svc/esign/shared/otp"
	"github.com/esign-svc/esign/shared/pii"
	"github.com/esign-svc/esign/shared/tokens"
)

func TestMain(m *testing.M) { azuritetest.Main(m) }

var codeInText = regexp.MustCompile(`\bis (\d{6})\.`)

// lastCode is the 6-digit code of the last message the outbox holds for to.
func (e *recipientEnv) lastCode(t *testing.T, to string) string {
	t.Helper()
	rows, err := e.mail.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for i := len(rows) - 1; i >= 0; i-- {
		if rows[i].Recipient != to {
			continue
		}
		if g := codeInText.FindStringSubmatch(rows[i].Text); g != nil {
			return g[1]
		}
	}
	t.Fatalf("no code was sent to the recipient (%d messages)", len(rows))
	return ""
}

type answer struct {
	status int
	header http.Header
	body   map[string]any
}

func (a answer) code() string { s, _ := a.body["code"].(string); return s }

// recipientEnv serves the recipient routes over a delivery store on Azurite, with a clock the
// test moves.
type recipientEnv struct {
	api   *API
	mux   *http.ServeMux
	clock *apptest.Clock
	mail  *outbox.Outbox
	store *deliverystore.Store
	// cipher encrypts the recipients' addresses
	cipher *pii.Cipher
}

func newRecipientEnv(t *testing.T, block time.Duration) *recipientEnv {
	t.Helper()
	x := apptest.New(t)
	e := &recipientEnv{clock: x.Clock, mail: x.Outbox(), mux: http.NewServeMux(), store: x.Deliveries(), cipher: x.Cipher}
	e.api = &API{Deliveries: &delivery.Deliveries{Store: e.store, Cipher: x.Cipher, OTPBlock: block, Now: x.Now},
		Tokens: x.Tokens, Hasher: x.Hasher, Email: e.mail, PortalURL: "https://portal.example.test", PortalOrigin: "https://portal.example.test", Now: x.Now}
	e.api.Routes(e.mux)
	return e
}

const recipient = "rita.recipient@example.test"

// otpDelivery stores a secure-email delivery with requireOtp for recipient and returns its id
// and access token.
func (e *recipientEnv) otpDelivery(t *testing.T) (string, string) {
	t.Helper()
	now := e.clock.Now()
	id := uuid.NewString()
	enc, err := e.cipher.EncryptString(recipient, pii.AAD(id, "recipient"))
	if err != nil {
		t.Fatal(err)
	}
	s := &delivery.Session{DeliveryID: id, TenantID: "t1", CorrelationID: "C-" + id, DocumentID: "D-1", DocumentName: "Offer.pdf",
		PDFBlobPath: "documents/t1/rendered/offer.pdf", Mode: delivery.ModeSecureEmail, RecipientHash: "h", RecipientEnc: enc,
		RequireOTP: true, ExpiresAt: now.Add(72 * time.Hour)}
	ch := delivery.Start(s, now)
	ch.By(delivery.Actor{Kind: "initiator", ID: "oid"})
	if err := e.store.Create(context.Background(), s, ch); err != nil {
		t.Fatal(err)
	}
	tok, err := e.api.Tokens.IssueDelivery(tokens.Delivery{DeliveryID: id, ExpiresAt: s.ExpiresAt})
	if err != nil {
		t.Fatal(err)
	}
	return id, tok
}

func (e *recipientEnv) do(t *testing.T, method, id, path, tok, body string) answer {
	t.Helper()
	var req *http.Request
	target := "/api/delivery/" + id + path + "?t=" + tok
	if body == "" {
		req = httptest.NewRequest(method, target, nil)
	} else {
		req = httptest.NewRequest(method, target, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	e.mux.ServeHTTP(rec, req)
	a := answer{status: rec.Code, header: rec.Header()}
	if rec.Body.Len() > 0 {
		if err := json.Unmarshal(rec.Body.Bytes(), &a.body); err != nil {
			t.Fatalf("%s %s: %d %q is not JSON", method, path, rec.Code, rec.Body.String())
		}
	}
	return a
}

func (a answer) want(t *testing.T, what string, status int, code string) {
	t.Helper()
	if a.status != status || a.code() != code {
		t.Fatalf("%s: %d %v, want %d %q", what, a.status, a.body, status, code)
	}
}

// TestRecipientOTPBlockIsA400ThatLifts drives the recipient routes through three locked codes
// (spec 001 Errors: a verify after the maximum attempts is 400 with details; DESIGN 14: the block
// lifts after OTP_BLOCK_MINUTES, never by the recipient's own link early). Every refusal is a
// 400 (no 403 otp_blocked); the block names its end (blockedUntil, Retry-After); at its end the
// recipient asks a new code, passes it and may download.
func TestRecipientOTPBlockIsA400ThatLifts(t *testing.T) {
	t.Parallel()
	const block = 7 * time.Minute // a configured OTP_BLOCK_MINUTES, not the default
	e := newRecipientEnv(t, block)
	id, tok := e.otpDelivery(t)
	start := e.clock.Now()

	var blockedAt time.Time
	for lock := 1; lock <= otp.MaxLocks; lock++ {
		e.clock.Set(start.Add(time.Duration(lock-1) * (otp.SendInterval + time.Second)))
		e.do(t, "POST", id, "/otp/send", tok, "").want(t, fmt.Sprintf("send %d", lock), http.StatusOK, "")
		code := e.lastCode(t, recipient)
		wrong := "000000"
		if code == wrong {
			wrong = "000001"
		}
		for try := 1; try <= otp.MaxAttempts; try++ {
			a := e.do(t, "POST", id, "/otp/verify", tok, `{"otp":"`+wrong+`"}`)
			switch {
			case try < otp.MaxAttempts:
				a.want(t, fmt.Sprintf("lock %d try %d", lock, try), http.StatusBadRequest, "otp_invalid")
				if a.body["attemptsLeft"] != float64(otp.MaxAttempts-try) {
					t.Fatalf("attemptsLeft %v after try %d", a.body["attemptsLeft"], try)
				}
			case lock < otp.MaxLocks:
				a.want(t, fmt.Sprintf("lock %d try %d", lock, try), http.StatusBadRequest, "otp_locked")
			default:
				a.want(t, "the try that locks the third code", http.StatusBadRequest, "otp_blocked")
				blockedAt = e.clock.Now()
				if a.body["blockedUntil"] != blockedAt.Add(block).UTC().Format(time.RFC3339) {
					t.Fatalf("blockedUntil %v, want %s", a.body["blockedUntil"], blockedAt.Add(block).UTC().Format(time.RFC3339))
				}
			}
		}
	}

	// Blocked: send and verify (even of the last code) are 400 with the block's end; the
	// download stays closed (403 otp_required, the spec's row for an unverified recipient).
	e.clock.Set(blockedAt.Add(block - time.Second))
	for _, c := range []struct{ what, path, body string }{
		{"send while blocked", "/otp/send", ""},
		{"verify while blocked", "/otp/verify", `{"otp":"` + e.lastCode(t, recipient) + `"}`},
	} {
		a := e.do(t, "POST", id, c.path, tok, c.body)
		a.want(t, c.what, http.StatusBadRequest, "otp_blocked")
		if ra, err := strconv.Atoi(a.header.Get("Retry-After")); err != nil || ra < 1 || ra > 1 {
			t.Fatalf("%s: Retry-After %q, want 1", c.what, a.header.Get("Retry-After"))
		}
	}
	e.do(t, "GET", id, "/sas", tok, "").want(t, "download while blocked", http.StatusForbidden, "otp_required")
	if m := e.do(t, "GET", id, "", tok, ""); m.status != http.StatusOK || m.body["otpVerified"] != false {
		t.Fatalf("metadata while blocked: %d %v", m.status, m.body)
	}

	// The block has run its time: a new code, the right code, verified.
	e.clock.Set(blockedAt.Add(block))
	e.do(t, "POST", id, "/otp/send", tok, "").want(t, "send once the block ran its time", http.StatusOK, "")
	a := e.do(t, "POST", id, "/otp/verify", tok, `{"otp":"`+e.lastCode(t, recipient)+`"}`)
	a.want(t, "verify once the block ran its time", http.StatusOK, "")
	if a.body["ok"] != true || a.body["verified"] != true {
		t.Fatalf("verify answer %v", a.body)
	}
	if m := e.do(t, "GET", id, "", tok, ""); m.body["otpVerified"] != true {
		t.Fatalf("metadata after the block: %v", m.body)
	}
}
