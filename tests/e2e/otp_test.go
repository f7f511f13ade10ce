package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/callbacksig"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/notify/outbox"
)

// The helpers of this file are prefixed otp so that they cannot collide with other files'.

// otpSigner is one signer of a session made by otpStart, walked as a portal would.
type otpSigner struct {
	email, phone string
	groupID      string
	sessionID    string
	access       string // latest access token
	fields       []any  // the role's manifest fields
	consents     []any  // as the consent answer reported them
}

// otpPhone is a fresh E.164 test number, remembered for the log check.
func otpPhone() string {
	p := fmt.Sprintf("+4479%08d", rand.IntN(100_000_000))
	remember("phone number", p)
	return p
}

// otpStart creates a one-signer session with the OTP channel ch (and a phone number) and
// activates its link.
func otpStart(t *testing.T, ch string) *otpSigner {
	t.Helper()
	body := createBody(t, "single", 1)
	signer := body["signers"].([]any)[0].(map[string]any)
	s := &otpSigner{email: signer["email"].(string), phone: otpPhone()}
	signer["otpChannel"], signer["phoneNumber"] = ch, s.phone
	created := createSession(t, tenantA, body)
	slots := created.JSON["slots"].([]any)
	link := slots[0].(map[string]any)["portalUrl"].(string)
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	a := call(t, "POST", svc.url("esign/portal/activate"), map[string]any{"token": u.Query().Get("token")}, nil)
	if a.Status != http.StatusOK || a.JSON["otpRequired"] != (ch != "none") {
		t.Fatalf("activate %d %s", a.Status, a.Raw)
	}
	s.groupID, s.sessionID, s.access = a.str("groupId"), a.str("sessionId"), a.str("accessToken")
	s.fields, _ = a.JSON["fields"].([]any)
	return s
}

// otpPortal calls a portal route (under esign/portal/) with the signer's latest token and keeps
// the refreshed one of a 200 answer.
func (s *otpSigner) otpPortal(t *testing.T, path string, body any) reply {
	t.Helper()
	r := call(t, "POST", svc.url("esign/portal/"+path), body, bearer(s.access))
	if r.Status == http.StatusOK && r.str("accessToken") != "" {
		s.access = r.str("accessToken")
	}
	return r
}

func (s *otpSigner) otpDocument(t *testing.T) reply {
	t.Helper()
	return call(t, "GET", svc.url("esign/document/"+url.PathEscape(s.access)), nil, nil)
}

var otpOutbox = func() func(t *testing.T) *outbox.Outbox {
	var box *outbox.Outbox
	return func(t *testing.T) *outbox.Outbox {
		t.Helper()
		if box == nil {
			acct, err := azconn.New(azconn.Config{ConnectionString: svc.azurite.ConnectionString()})
			if err != nil {
				t.Fatal(err)
			}
			if box, err = outbox.New(acct, outbox.DefaultTable); err != nil {
				t.Fatal(err)
			}
		}
		return box
	}
}()

var otpCodeInText = regexp.MustCompile(`\bis (\d{6})\.`)

// otpCode is the code of the n-th (1-based) OTP message to recipient on channel, read from
// the outbox; it fails when there are not n of them. The code is checked against the logs when
// the test ends (otpNotLogged).
func otpCode(t *testing.T, channel notify.Channel, recipient string, n int) string {
	t.Helper()
	rows, err := otpOutbox(t).List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	for _, r := range rows {
		if r.Kind == notify.KindOTP && r.Channel == channel && r.Recipient == recipient {
			g := otpCodeInText.FindStringSubmatch(r.Text)
			if g == nil {
				t.Fatalf("OTP message without a code: %q", r.Text)
			}
			codes = append(codes, g[1])
		}
	}
	if len(codes) != n {
		t.Fatalf("%d OTP messages by %s to the signer, want %d", len(codes), channel, n)
	}
	if n == 0 {
		return ""
	}
	otpNotLogged(t, codes[n-1])
	return codes[n-1]
}

// otpNotLogged fails the test when code shows in the host's or handlers' logs as a number of its
// own. The package's remember/checkLogs matches plain substrings, which suits tokens and
// addresses but not 6-digit codes: the logs hold hundreds of distinct 6-digit runs (nanosecond
// timestamps, elapsed times), so a random code would match by chance in a few per cent of runs.
// A leaked code stands alone (`code=123456`, `"123456"`, `is 123456.`); this check looks for
// exactly that, at the end of the test that saw the code.
func otpNotLogged(t *testing.T, code string) {
	t.Helper()
	alone := regexp.MustCompile(`(^|[^0-9A-Za-z.])` + regexp.QuoteMeta(code) + `([^0-9A-Za-z]|$)`)
	t.Cleanup(func() {
		if alone.MatchString(svc.logs.String()) {
			t.Errorf("an OTP code this test received appears in the logs")
		}
	})
}

func otpWrong(code string) string {
	if code == "000000" {
		return "000001"
	}
	return "000000"
}

func otpWant(t *testing.T, what string, r reply, status int, code string) {
	t.Helper()
	if r.Status != status || (code != "" && r.code() != code) {
		t.Fatalf("%s: %d %s, want %d %s", what, r.Status, r.Raw, status, code)
	}
}

var otpSignature = func() string {
	b, err := os.ReadFile(filepath.Join("testdata", "signature.png"))
	if err != nil {
		panic(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}()

// otpCallbackBody is the portal's signed callback for the signer with access token tok.
func (s *otpSigner) otpCallbackBody(tok string) []byte {
	fields := []esign.CompletedField{}
	yes := true
	for _, f := range s.fields {
		m := f.(map[string]any)
		name := m["name"].(string)
		switch m["kind"] {
		case esign.FieldSignature:
		case esign.FieldCheckbox:
			fields = append(fields, esign.CompletedField{Name: name, Checked: &yes})
		case esign.FieldDate:
			fields = append(fields, esign.CompletedField{Name: name, Value: time.Now().UTC().Format("2006-01-02")})
		default:
			fields = append(fields, esign.CompletedField{Name: name, Value: "AB"})
		}
	}
	consents := s.consents
	if consents == nil {
		// Before OTP the signer cannot have consented in the portal; a portal could still claim
		// acceptances, which must not get past the OTP gate.
		at := time.Now().UTC().Format(time.RFC3339Nano)
		for _, st := range esign.ConsentStatements {
			consents = append(consents, map[string]any{"id": st.ID, "version": esign.ConsentVersion, "acceptedAt": at})
		}
	}
	b, _ := json.Marshal(map[string]any{"callbackId": uuid.NewString(), "sessionId": s.sessionID, "accessToken": tok,
		"signerName": "Pat Signer", "signaturePng": otpSignature, "fields": fields, "consents": consents,
		"ip": "203.0.113.9", "userAgent": "e2e-otp/1.0"})
	return b
}

// otpCallback posts a signed callback body.
func otpCallback(t *testing.T, raw []byte) reply {
	t.Helper()
	secret := ""
	for _, c := range []byte(svc.settings["PORTAL_CALLBACK_SECRETS"]) {
		if c == ',' {
			break
		}
		secret += string(c)
	}
	remember("callback secret", secret)
	return call(t, "POST", svc.url("esign/callback"), raw,
		map[string]string{callbacksig.Header: callbacksig.Sign(secret, time.Now(), raw)})
}

// otpPass sends a code on the slot's channel, reads it from the outbox and verifies it.
func (s *otpSigner) otpPass(t *testing.T, body any, channel notify.Channel, n int) {
	t.Helper()
	r := s.otpPortal(t, "otp/send", body)
	otpWant(t, "send", r, http.StatusOK, "")
	to := s.email
	if channel == notify.SMS {
		to = s.phone
	}
	r = s.otpPortal(t, "otp/verify", map[string]any{"code": otpCode(t, channel, to, n)})
	otpWant(t, "verify", r, http.StatusOK, "")
	if r.JSON["verified"] != true {
		t.Fatalf("verify answer %s", r.Raw)
	}
}

// otpViewAndConsent reports the document viewed and accepts the three statements.
func (s *otpSigner) otpViewAndConsent(t *testing.T) {
	t.Helper()
	otpWant(t, "viewed", s.otpPortal(t, "viewed", nil), http.StatusOK, "")
	var ids []string
	for _, st := range esign.ConsentStatements {
		ids = append(ids, st.ID)
	}
	r := s.otpPortal(t, "consent", map[string]any{"statements": ids, "version": esign.ConsentVersion})
	otpWant(t, "consent", r, http.StatusOK, "")
	s.consents, _ = r.JSON["consentsAccepted"].([]any)
}

func TestOTPEachChannelGatesDocumentAndCallback(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, channel string
		body          any
		via           notify.Channel
	}{
		{"email", "email", nil, notify.Email},
		{"sms", "sms", nil, notify.SMS},
		{"choice-email", "signer-choice", map[string]any{"channel": "email"}, notify.Email},
		{"choice-sms", "signer-choice", map[string]any{"channel": "sms"}, notify.SMS},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := otpStart(t, c.channel)
			otpWant(t, "document before OTP", s.otpDocument(t), http.StatusForbidden, "otp_required")
			otpWant(t, "callback before OTP", otpCallback(t, s.otpCallbackBody(s.access)), http.StatusForbidden, "otp_required")

			r := s.otpPortal(t, "otp/send", c.body)
			otpWant(t, "send", r, http.StatusOK, "")
			if r.str("channel") != string(c.via) || r.str("destination") == "" || r.str("destination") == s.email ||
				r.str("destination") == s.phone || r.str("expiresAt") == "" || r.str("resendAfter") == "" {
				t.Fatalf("send answer %s", r.Raw)
			}
			to := s.email
			if c.via == notify.SMS {
				to = s.phone
			}
			code := otpCode(t, c.via, to, 1)
			other := notify.SMS
			if c.via == notify.SMS {
				other = notify.Email
			}
			otpCode(t, other, map[notify.Channel]string{notify.Email: s.email, notify.SMS: s.phone}[other], 0)

			// The 60-second send limit.
			r = s.otpPortal(t, "otp/send", c.body)
			otpWant(t, "second send", r, http.StatusTooManyRequests, "otp_rate_limited")
			if ra, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || ra < 1 || ra > 60 {
				t.Fatalf("Retry-After %q", r.Header.Get("Retry-After"))
			}

			r = s.otpPortal(t, "otp/verify", map[string]any{"code": otpWrong(code)})
			otpWant(t, "wrong code", r, http.StatusBadRequest, "otp_invalid")
			if r.JSON["attemptsLeft"] != float64(4) {
				t.Fatalf("attemptsLeft %s", r.Raw)
			}
			r = s.otpPortal(t, "otp/verify", map[string]any{"code": code})
			otpWant(t, "right code", r, http.StatusOK, "")

			d := s.otpDocument(t)
			otpWant(t, "document after OTP", d, http.StatusOK, "")
			if len(d.Raw) < 5 || string(d.Raw[:5]) != "%PDF-" {
				t.Fatal("the document proxy did not stream the PDF")
			}
			// OTP passed, the document fetched but never reported viewed: no consent and no
			// signature yet (spec 000 timeline pending, activated, viewed, signed).
			var ids []string
			for _, st := range esign.ConsentStatements {
				ids = append(ids, st.ID)
			}
			otpWant(t, "consent before viewed", s.otpPortal(t, "consent", map[string]any{"statements": ids, "version": esign.ConsentVersion}),
				http.StatusConflict, "not_viewed")
			otpWant(t, "callback before viewed", otpCallback(t, s.otpCallbackBody(s.access)), http.StatusConflict, "not_viewed")
			s.otpViewAndConsent(t)
			r = otpCallback(t, s.otpCallbackBody(s.access))
			otpWant(t, "callback after OTP", r, http.StatusOK, "")
			if r.str("slotState") != "signed" {
				t.Fatalf("callback answer %s", r.Raw)
			}
		})
	}
}

func TestOTPLocksAfterFiveWrongCodes(t *testing.T) {
	t.Parallel()
	s := otpStart(t, "email")
	otpWant(t, "send", s.otpPortal(t, "otp/send", nil), http.StatusOK, "")
	code := otpCode(t, notify.Email, s.email, 1)
	for try := 1; try <= 4; try++ {
		otpWant(t, "wrong", s.otpPortal(t, "otp/verify", map[string]any{"code": otpWrong(code)}), http.StatusBadRequest, "otp_invalid")
	}
	otpWant(t, "fifth wrong", s.otpPortal(t, "otp/verify", map[string]any{"code": otpWrong(code)}), http.StatusBadRequest, "otp_locked")
	otpWant(t, "right code once locked", s.otpPortal(t, "otp/verify", map[string]any{"code": code}), http.StatusBadRequest, "otp_locked")
	otpWant(t, "document", s.otpDocument(t), http.StatusForbidden, "otp_required")
	otpWant(t, "bad code shape", s.otpPortal(t, "otp/verify", map[string]any{"code": "12 456"}), http.StatusBadRequest, "invalid_request")
}
