package browser

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/audit"
	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/esign/sessionstore"
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/notify/outbox"
)

// The service side of the browser tests: what an API caller does (upload, create, read the
// status) and what a signer's mailbox shows (the outbox rows of the outbox provider).

const tenant = "11111111-1111-4111-8111-111111111111"

// reply is a JSON answer of the service.
type reply struct {
	Status int
	Raw    []byte
	JSON   map[string]any
}

func (r reply) str(k string) string { s, _ := r.JSON[k].(string); return s }

func apiCall(t testing.TB, method, path string, body any, headers map[string]string) reply {
	t.Helper()
	var rd io.Reader
	ctype := "application/json"
	switch b := body.(type) {
	case nil:
	case []byte:
		rd, ctype = bytes.NewReader(b), "application/pdf"
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, svc.URL(path), rd)
	if err != nil {
		t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", ctype)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := reply{Status: resp.StatusCode, Raw: raw}
	_ = json.Unmarshal(raw, &r.JSON)
	return r
}

// asInitiator calls a requester route with a dev JWT of role Esign.Initiator.
func asInitiator(t testing.TB, method, path string, body any) reply {
	t.Helper()
	jwt, err := svc.JWT(tenant, "Esign.Initiator")
	if err != nil {
		t.Fatal(err)
	}
	return apiCall(t, method, path, body, map[string]string{"Authorization": "Bearer " + jwt})
}

// upload stores a fixture PDF through POST /api/documents.
func upload(t testing.TB, file string) (path, hash string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "e2e", "testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	r := asInitiator(t, "POST", "documents", b)
	if r.Status != http.StatusCreated {
		t.Fatalf("upload %s: %d %s", file, r.Status, r.Raw)
	}
	return r.str("pdfBlobPath"), r.str("pdfHash")
}

// signer is one signer of a session the test creates.
type signer struct {
	Email, Role, Name, OTP string // OTP: the slot's otpChannel ("" none)
	Phone                  string // E.164, for otpChannel sms or signer-choice
	Locale                 string // the signer's language ("": none given)
}

func newEmail(who string) string {
	e := fmt.Sprintf("%s-%s@example.test", who, uuid.NewString()[:8])
	remember("e-mail address", e)
	return e
}

// createSigning creates a signing session on the three-page template (buyer, seller fields).
func createSigning(t testing.TB, mode string, expiresInMinutes int, signers ...signer) (corr string, created reply) {
	t.Helper()
	path, hash := upload(t, "template-3p.pdf")
	var list []any
	for i, s := range signers {
		m := map[string]any{"slotIndex": i, "role": s.Role, "email": s.Email, "namePrefill": s.Name}
		if s.OTP != "" {
			m["otpChannel"] = s.OTP
		}
		if s.Phone != "" {
			m["phoneNumber"] = s.Phone
		}
		if s.Locale != "" {
			m["locale"] = s.Locale
		}
		list = append(list, m)
	}
	corr = "browser-" + uuid.NewString()
	body := map[string]any{"correlationId": corr, "documentId": "Purchase agreement", "docType": "contract",
		"pdfBlobPath": path, "pdfHash": hash, "signingMode": mode, "signers": list}
	if expiresInMinutes > 0 {
		body["expiresInMinutes"] = expiresInMinutes
	}
	created = asInitiator(t, "POST", "esign/session", body)
	if created.Status != http.StatusCreated {
		t.Fatalf("create session: %d %s", created.Status, created.Raw)
	}
	return corr, created
}

func sessionStatus(t testing.TB, corr string) reply {
	t.Helper()
	r := asInitiator(t, "GET", "esign/session/"+corr+"/status", nil)
	if r.Status != http.StatusOK {
		t.Fatalf("status: %d %s", r.Status, r.Raw)
	}
	return r
}

// waitStatus polls the session's status until ok accepts it.
func waitStatus(t testing.TB, corr string, limit time.Duration, what string, ok func(reply) bool) reply {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		r := sessionStatus(t, corr)
		if ok(r) {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s; last status %s", limit, what, r.Raw)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

var mailbox = func() func(t testing.TB) *outbox.Outbox {
	var box *outbox.Outbox
	return func(t testing.TB) *outbox.Outbox {
		t.Helper()
		if box == nil {
			acct, err := azconn.New(azconn.Config{ConnectionString: svc.Azurite.ConnectionString()})
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

// mail waits until recipient has n messages of kind and answers them in send order.
func mail(t testing.TB, recipient string, kind notify.Kind, n int) []outbox.Row {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		rows, err := mailbox(t).List(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var got []outbox.Row
		for _, r := range rows {
			if r.Recipient == recipient && r.Kind == kind {
				got = append(got, r)
			}
		}
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited for %d %s messages, have %d", n, kind, len(got))
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// linkIn is the first portal link (portalURL + path...) in a message's text.
func linkIn(t testing.TB, row outbox.Row, path string) string {
	t.Helper()
	re := regexp.MustCompile(regexp.QuoteMeta(portalURL+path) + `\S+`)
	link := re.FindString(row.Text)
	if link == "" {
		t.Fatalf("no %s link in the %s message", path, row.Kind)
	}
	link = strings.TrimRight(link, ".,)>")
	rememberLink(link)
	return link
}

var codeIn = regexp.MustCompile(`\b(\d{6})\b`)

// otpCode is the code of the n-th OTP message to recipient.
func otpCode(t testing.TB, recipient string, n int) string {
	t.Helper()
	rows := mail(t, recipient, notify.KindOTP, n)
	g := codeIn.FindStringSubmatch(rows[n-1].Text)
	if g == nil {
		t.Fatal("an OTP message without a 6-digit code")
	}
	remember("OTP code", g[1])
	return g[1]
}

func eventKinds(r reply) map[string]int {
	out := map[string]int{}
	evs, _ := r.JSON["events"].([]any)
	for _, e := range evs {
		if m, ok := e.(map[string]any); ok {
			out[fmt.Sprint(m["kind"])]++
		}
	}
	return out
}

// auditTrail is a session's audit trail as stored (the status shows the kinds only).
func auditTrail(t testing.TB, groupID string) []audit.Record {
	t.Helper()
	acct, err := azconn.New(azconn.Config{ConnectionString: svc.Azurite.ConnectionString()})
	if err != nil {
		t.Fatal(err)
	}
	store, err := sessionstore.New(acct, "esignsessions", "esignindex")
	if err != nil {
		t.Fatal(err)
	}
	evs, err := store.Events(context.Background(), groupID)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// eventOf is the first event of kind in the trail.
func eventOf(t testing.TB, trail []audit.Record, kind string) audit.Record {
	t.Helper()
	for _, e := range trail {
		if e.Kind == kind {
			return e
		}
	}
	t.Fatalf("no %s event in the audit trail", kind)
	return audit.Record{}
}
