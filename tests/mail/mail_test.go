// Package mail runs the packaged apps under the local Functions host once per e-mail provider
// (SMTP, Azure Communication Services, the operator's notification service), each against its
// local stand-in (tests/standins), and walks a signer from the e-mailed invitation through the
// one-time code: the processor's invitation and the dispatcher's code both leave through the
// provider the settings name, in the form the provider documents.
package mail

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/http"
	"net/mail"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/tests/servicetest"
	"github.com/esign-svc/esign/tests/standins"
)

const tenant = "5b0c3a5e-1d3f-4f60-9a51-7c2e8d4b6a10"

// dist is the apps packaged once for the package; each provider's service starts them.
var dist string

func TestMain(m *testing.M) {
	d, err := os.MkdirTemp("", "mail-dist-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	dist = d
	code := m.Run()
	os.RemoveAll(d)
	os.Exit(code)
}

// start runs the service with the provider's settings over the dev ones.
func start(t *testing.T, settings map[string]string) *servicetest.Service {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s, err := servicetest.Start(ctx, servicetest.Options{Dist: dist, Settings: settings})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("host output (tail):\n%s", s.Tail(8000))
		}
		s.Close()
		cancel()
	})
	return s
}

type answer struct {
	Status int
	Raw    []byte
	JSON   map[string]any
}

func call(t *testing.T, method, u string, body any, header map[string]string) answer {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	c := &http.Client{Timeout: 30 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	a := answer{Status: resp.StatusCode}
	a.Raw, _ = io.ReadAll(resp.Body)
	_ = json.Unmarshal(a.Raw, &a.JSON)
	return a
}

func (a answer) str(k string) string { s, _ := a.JSON[k].(string); return s }

// signer is one signer walked from the e-mail on.
type signer struct {
	svc          *servicetest.Service
	email, phone string
	access       string
}

// createSession uploads the fixture through POST /api/documents and creates a one-signer
// session whose signer proves herself with a code on channel.
func createSession(t *testing.T, s *servicetest.Service, channel string) *signer {
	t.Helper()
	jwt, err := s.JWT(tenant, "Esign.Initiator")
	if err != nil {
		t.Fatal(err)
	}
	auth := map[string]string{"Authorization": "Bearer " + jwt}
	root, err := azuritetest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	pdf, err := os.ReadFile(filepath.Join(root, "tests", "e2e", "testdata", "template-3p.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	up := call(t, "POST", s.URL("documents"), pdf, map[string]string{"Authorization": auth["Authorization"], "Content-Type": "application/pdf"})
	if up.Status != http.StatusCreated && up.Status != http.StatusOK {
		t.Fatalf("upload: %d %s", up.Status, up.Raw)
	}
	sg := &signer{svc: s, email: "signer-" + uuid.NewString()[:8] + "@example.test", phone: "+447900900123"}
	body := map[string]any{"correlationId": "mail-" + uuid.NewString(), "documentId": "Contract 42", "docType": "contract",
		"pdfBlobPath": up.str("pdfBlobPath"), "pdfHash": up.str("pdfHash"), "signingMode": "single",
		"signers": []any{map[string]any{"slotIndex": 0, "role": "buyer", "email": sg.email, "namePrefill": "Ada Signer",
			"otpChannel": channel, "phoneNumber": sg.phone}}}
	r := call(t, "POST", s.URL("esign/session"), body, auth)
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Raw)
	}
	return sg
}

var linkInText = regexp.MustCompile(`https?://[^\s"<>]*[?&]token=[A-Za-z0-9._~%-]+`)
var codeInText = regexp.MustCompile(`\b(\d{6})\b`)

// activate opens the session with the token of the e-mailed link, as the portal does.
func (sg *signer) activate(t *testing.T, link string) {
	t.Helper()
	if !strings.HasPrefix(link, sg.svc.Settings["PORTAL_URL"]) {
		t.Fatalf("the e-mailed link %q is not on the portal %q", link, sg.svc.Settings["PORTAL_URL"])
	}
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	a := call(t, "POST", sg.svc.URL("esign/portal/activate"), map[string]any{"token": u.Query().Get("token")}, nil)
	if a.Status != http.StatusOK || a.JSON["otpRequired"] != true {
		t.Fatalf("activate with the e-mailed link: %d %s", a.Status, a.Raw)
	}
	sg.access = a.str("accessToken")
}

// sendCode asks for a code.
func (sg *signer) sendCode(t *testing.T) {
	t.Helper()
	r := call(t, "POST", sg.svc.URL("esign/portal/otp/send"), nil, map[string]string{"Authorization": "Bearer " + sg.access})
	if r.Status != http.StatusOK {
		t.Fatalf("otp/send: %d %s", r.Status, r.Raw)
	}
	if tok := r.str("accessToken"); tok != "" {
		sg.access = tok
	}
}

// verifyCode verifies a code and fails unless the service accepts it.
func (sg *signer) verifyCode(t *testing.T, code string) {
	t.Helper()
	r := call(t, "POST", sg.svc.URL("esign/portal/otp/verify"), map[string]any{"code": code}, map[string]string{"Authorization": "Bearer " + sg.access})
	if r.Status != http.StatusOK || r.JSON["verified"] != true {
		t.Fatalf("otp/verify with the code the provider carried: %d %s", r.Status, r.Raw)
	}
}

// eventually polls ok for up to 60 s.
func eventually[T any](t *testing.T, what string, get func() (T, bool)) T {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if v, ok := get(); ok {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s within 60 s", what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitFor polls list for up to 60 s and returns the first item match accepts.
func waitFor[T any](t *testing.T, what string, list func() []T, match func(T) bool) T {
	t.Helper()
	return eventually(t, what, func() (T, bool) {
		for _, m := range list() {
			if match(m) {
				return m, true
			}
		}
		var zero T
		return zero, false
	})
}

// portalLink is the invitation's portal link; the test fails without one.
func portalLink(t *testing.T, text string) string {
	t.Helper()
	link := linkInText.FindString(text)
	if link == "" {
		t.Fatalf("the invitation carries no portal link:\n%s", text)
	}
	return link
}

// codeIn is the six-digit code of a message; the test fails without one.
func codeIn(t *testing.T, what, text string) string {
	t.Helper()
	code := codeInText.FindStringSubmatch(text)
	if code == nil {
		t.Fatalf("no six-digit code in the %s", what)
	}
	return code[1]
}

// mimeParts reads an e-mail and returns its decoded text/plain and text/html parts.
func mimeParts(t *testing.T, raw []byte) (*mail.Message, string, string) {
	t.Helper()
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	mt, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/alternative" {
		t.Fatalf("Content-Type %q: want multipart/alternative (%v)", msg.Header.Get("Content-Type"), err)
	}
	var text, html string
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		p, err := mr.NextRawPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		var body io.Reader = p
		if strings.EqualFold(p.Header.Get("Content-Transfer-Encoding"), "quoted-printable") {
			body = quotedprintable.NewReader(p)
		}
		b, err := io.ReadAll(body)
		if err != nil {
			t.Fatal(err)
		}
		pt, pp, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
		if !strings.EqualFold(pp["charset"], "utf-8") {
			t.Errorf("part %s charset %q, want utf-8", pt, pp["charset"])
		}
		switch pt {
		case "text/plain":
			text = string(b)
		case "text/html":
			html = string(b)
		}
	}
	if text == "" || html == "" {
		t.Fatalf("want a text and an HTML part; text %d bytes, html %d bytes", len(text), len(html))
	}
	return msg, text, html
}

func TestSMTP(t *testing.T) {
	relay, err := standins.StartSMTP("mailer", "s3cret-pässword-for-relay")
	if err != nil {
		t.Fatal(err)
	}
	defer relay.Close()
	s := start(t, map[string]string{"EMAIL_PROVIDER": "smtp", "SMTP_HOST": "127.0.0.1", "SMTP_PORT": relay.PortString(),
		"SMTP_USERNAME": relay.User, "SMTP_PASSWORD": relay.Pass, "SMTP_FROM": "E-Sign <no-reply@esign.example>",
		// loopback relay with a self-signed certificate: STARTTLS still runs, the certificate is not checked
		"SMTP_INSECURE": "true"})
	sg := createSession(t, s, "email")

	inv := waitFor(t, "invitation through the SMTP relay", relay.Messages,
		func(m standins.SMTPMessage) bool { return len(m.To) == 1 && m.To[0] == sg.email })
	if !inv.TLS || inv.AuthMech != "PLAIN" || inv.AuthUser != relay.User {
		t.Errorf("session: TLS %v, AUTH %q as %q; want STARTTLS then AUTH PLAIN as %q", inv.TLS, inv.AuthMech, inv.AuthUser, relay.User)
	}
	if inv.From != "no-reply@esign.example" {
		t.Errorf("MAIL FROM %q, want SMTP_FROM's address", inv.From)
	}
	msg, text, html := mimeParts(t, inv.Data)
	for _, h := range []string{"From", "To", "Subject", "Date", "Message-Id", "Mime-Version"} {
		if msg.Header.Get(h) == "" {
			t.Errorf("header %s missing", h)
		}
	}
	if got, _ := mail.ParseAddress(msg.Header.Get("To")); got == nil || got.Address != sg.email {
		t.Errorf("To %q, want the signer", msg.Header.Get("To"))
	}
	link := linkInText.FindString(text)
	if link == "" || !strings.Contains(html, strings.ReplaceAll(link, "&", "&amp;")) && !strings.Contains(html, link) {
		t.Fatalf("the invitation carries no portal link in both parts:\n%s", text)
	}
	sg.activate(t, link)
	sg.sendCode(t)
	codeMail := eventually(t, "code e-mail through the SMTP relay", func() (string, bool) {
		ms := relay.Messages() // the invitation first, then the code
		if len(ms) < 2 || ms[1].To[0] != sg.email {
			return "", false
		}
		_, text, _ := mimeParts(t, ms[1].Data)
		return text, true
	})
	sg.verifyCode(t, codeIn(t, "code e-mail", codeMail))
	if r := relay.Refused(); len(r) > 0 {
		t.Errorf("the relay refused steps of the conversation: %v", r)
	}
}

func TestACS(t *testing.T) {
	acs, err := standins.StartACS()
	if err != nil {
		t.Fatal(err)
	}
	defer acs.Close()
	s := start(t, map[string]string{"EMAIL_PROVIDER": "customer-acs", "SMS_PROVIDER": "customer-acs",
		"ACS_ENDPOINT": acs.Endpoint(), "ACS_ACCESS_KEY": acs.AccessKey(),
		"ACS_EMAIL_SENDER": "DoNotReply@esign.example", "ACS_SMS_FROM": "+15550100"})
	sg := createSession(t, s, "sms")
	inv := waitFor(t, "invitation through ACS e-mail", acs.Emails,
		func(m standins.ACSEmail) bool { return len(m.To) == 1 && m.To[0] == sg.email })
	if inv.SenderAddress != "DoNotReply@esign.example" || inv.Subject == "" || inv.HTML == "" {
		t.Errorf("e-mail: sender %q, subject %q, html %d bytes", inv.SenderAddress, inv.Subject, len(inv.HTML))
	}
	sg.activate(t, portalLink(t, inv.PlainText))
	sg.sendCode(t)
	sms := waitFor(t, "code SMS through ACS", acs.SMS, func(m standins.ACSSMS) bool { return m.To == sg.phone })
	if sms.From != "+15550100" {
		t.Errorf("SMS from %q, want ACS_SMS_FROM", sms.From)
	}
	sg.verifyCode(t, codeIn(t, "SMS", sms.Message))
	if d := acs.Denied(); len(d) > 0 {
		t.Errorf("ACS refused requests: %v", d)
	}
}

func TestOperator(t *testing.T) {
	op := standins.StartOperator("operator-notification-key-0123456789abcdef")
	defer op.Close()
	s := start(t, map[string]string{"EMAIL_PROVIDER": "operator", "NOTIFICATION_SERVICE_URL": op.URL(),
		"NOTIFICATION_SERVICE_KEY": op.Key})
	sg := createSession(t, s, "email")
	inv := waitFor(t, "invitation through the operator's service", op.Messages,
		func(m standins.OperatorMessage) bool { return m.To == sg.email && m.Kind == "invitation" })
	if inv.Channel != "email" || inv.Subject == "" || inv.HTML == "" {
		t.Errorf("invitation: channel %q, subject %q, html %d bytes", inv.Channel, inv.Subject, len(inv.HTML))
	}
	sg.activate(t, portalLink(t, inv.Text))
	sg.sendCode(t)
	otp := waitFor(t, "code e-mail through the operator's service", op.Messages,
		func(m standins.OperatorMessage) bool { return m.To == sg.email && m.Kind != "invitation" })
	sg.verifyCode(t, codeIn(t, otp.Kind+" message", otp.Text))
	if d := op.Denied(); len(d) > 0 {
		t.Errorf("the operator's service refused requests: %v", d)
	}
}
