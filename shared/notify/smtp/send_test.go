package smtp

import (
	"bytes"
	"context"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"strings"
	"testing"
	"time"

	gosmtp "github.com/emersion/go-smtp"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/notify"
)

const (
	testTo      = "signer.private@example.org"
	testSubject = "Bitte unterschreiben: Vertrag für Zoë — Ärger über Größenänderungen und weitere Überraschungen"
	testText    = "Hallo Zoë,\n\nbitte unterschreiben Sie hier: https://portal.test/sign?token=abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz0123456789\n.\nFrom the team\n"
	testHTML    = "<!doctype html><p>Hallo Zoë,</p>\n<p><a href=\"https://portal.test/sign?token=abc\">Öffnen</a></p>\n"
)

func testMessage() notify.Message {
	return notify.Message{Channel: notify.Email, Kind: notify.KindInvitation, To: testTo, Subject: testSubject, Text: testText, HTML: testHTML}
}

func senderFor(t *testing.T, ts *testServer, mutate func(*Config)) *Sender {
	t.Helper()
	cfg := Config{
		Host: "127.0.0.1", Port: ts.port, Username: ts.user, Password: ts.pass,
		From:    mail.Address{Name: "E-Sign Dienst", Address: "no-reply@esign.example"},
		RootCAs: ts.roots, Timeout: 10 * time.Second,
		Now: func() time.Time { return time.Date(2024, 3, 5, 10, 20, 30, 0, time.FixedZone("CET", 3600)) },
	}
	if mutate != nil {
		mutate(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func assertSafe(t *testing.T, err error) {
	t.Helper()
	for _, secret := range []string{testTo, "s3cret-pässword", "portal.test"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error exposes a secret: %v", err)
		}
	}
}

func TestSendOverSTARTTLSWithAuth(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		mechs []string
		want  string
	}{
		{"PLAIN preferred", []string{"LOGIN", "PLAIN"}, "PLAIN"},
		{"LOGIN only", []string{"LOGIN"}, "LOGIN"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ts := startServer(t, serverOptions{tls: true, mechs: tc.mechs})
			if err := senderFor(t, ts, nil).Send(context.Background(), testMessage()); err != nil {
				t.Fatal(err)
			}
			msgs := ts.messages()
			if len(msgs) != 1 {
				t.Fatalf("server received %d messages", len(msgs))
			}
			got := msgs[0]
			if !got.TLS || got.AuthMech != tc.want || got.AuthUser != "mailer" {
				t.Errorf("TLS=%v mech=%q user=%q", got.TLS, got.AuthMech, got.AuthUser)
			}
			if got.From != "no-reply@esign.example" || len(got.To) != 1 || got.To[0] != testTo {
				t.Errorf("envelope from %q to %v", got.From, got.To)
			}
			checkMessage(t, got.Data)
		})
	}
}

// checkMessage parses the received message as a mail reader would.
func checkMessage(t *testing.T, data []byte) {
	t.Helper()
	for i, line := range bytes.Split(data, []byte("\r\n")) {
		if len(line) > 998 || bytes.ContainsAny(line, "\r\n") {
			t.Fatalf("line %d is not a proper SMTP line: %q", i, line)
		}
	}
	msg, err := mail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	h := msg.Header
	subject, err := new(mime.WordDecoder).DecodeHeader(h.Get("Subject"))
	if err != nil || subject != testSubject {
		t.Errorf("Subject = %q (%v), raw %q", subject, err, h.Get("Subject"))
	}
	for _, line := range strings.Split(string(data[:bytes.Index(data, []byte("\r\n\r\n"))]), "\r\n") {
		if len(line) > 78 {
			t.Errorf("header line longer than 78: %q", line)
		}
	}
	from, err := h.AddressList("From")
	if err != nil || len(from) != 1 || from[0].Address != "no-reply@esign.example" || from[0].Name != "E-Sign Dienst" {
		t.Errorf("From = %v (%v)", from, err)
	}
	to, err := h.AddressList("To")
	if err != nil || len(to) != 1 || to[0].Address != testTo {
		t.Errorf("To = %v (%v)", to, err)
	}
	if d, err := h.Date(); err != nil || !d.Equal(time.Date(2024, 3, 5, 9, 20, 30, 0, time.UTC)) {
		t.Errorf("Date = %v (%v)", d, err)
	}
	if id := h.Get("Message-ID"); !strings.HasPrefix(id, "<") || !strings.HasSuffix(id, "@esign.example>") || len(id) < 20 {
		t.Errorf("Message-ID = %q", id)
	}
	if h.Get("MIME-Version") != "1.0" {
		t.Errorf("MIME-Version = %q", h.Get("MIME-Version"))
	}
	mt, params, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil || mt != "multipart/alternative" {
		t.Fatalf("Content-Type = %q (%v)", h.Get("Content-Type"), err)
	}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for _, want := range []struct{ ctype, body string }{{"text/plain", testText}, {"text/html", testHTML}} {
		p, err := mr.NextRawPart()
		if err != nil {
			t.Fatalf("part %s: %v", want.ctype, err)
		}
		pt, pp, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
		if pt != want.ctype || !strings.EqualFold(pp["charset"], "utf-8") || p.Header.Get("Content-Transfer-Encoding") != "quoted-printable" {
			t.Errorf("part header %v", p.Header)
		}
		body, err := io.ReadAll(quotedprintable.NewReader(p))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.ReplaceAll(string(body), "\r\n", "\n"); got != want.body {
			t.Errorf("%s part = %q, want %q", want.ctype, got, want.body)
		}
	}
	if _, err := mr.NextRawPart(); err != io.EOF {
		t.Errorf("a third part or a broken end: %v", err)
	}
}

func TestTextOnlyMessage(t *testing.T) {
	t.Parallel()
	ts := startServer(t, serverOptions{tls: true})
	m := testMessage()
	m.HTML = ""
	m.Subject = "Plain subject"
	if err := senderFor(t, ts, func(c *Config) { c.Username, c.Password = "", "" }).Send(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	msgs := ts.messages()
	if len(msgs) != 1 || !msgs[0].TLS || msgs[0].AuthMech != "" {
		t.Fatalf("messages %+v", msgs)
	}
	msg, err := mail.ReadMessage(bytes.NewReader(msgs[0].Data))
	if err != nil {
		t.Fatal(err)
	}
	if ct := msg.Header.Get("Content-Type"); ct != "text/plain; charset=utf-8" || msg.Header.Get("Subject") != "Plain subject" {
		t.Errorf("Content-Type %q Subject %q", ct, msg.Header.Get("Subject"))
	}
	body, _ := io.ReadAll(quotedprintable.NewReader(msg.Body))
	if got := strings.ReplaceAll(string(body), "\r\n", "\n"); got != testText {
		t.Errorf("body = %q", got)
	}
}

func TestPlaintextServer(t *testing.T) {
	t.Parallel()
	t.Run("refused without SMTP_INSECURE, password never sent", func(t *testing.T) {
		t.Parallel()
		ts := startServer(t, serverOptions{mechs: []string{"PLAIN", "LOGIN"}})
		err := senderFor(t, ts, nil).Send(context.Background(), testMessage())
		if e, ok := apperr.As(err); !ok || e.Kind != apperr.KindUnavailable || !strings.Contains(e.Detail, "STARTTLS") {
			t.Fatalf("err = %v", err)
		}
		ts.mu.Lock()
		defer ts.mu.Unlock()
		if len(ts.received) != 0 || len(ts.authSeen) != 0 {
			t.Errorf("received %d messages, auth attempts %v", len(ts.received), ts.authSeen)
		}
	})
	t.Run("allowed with SMTP_INSECURE on loopback", func(t *testing.T) {
		t.Parallel()
		ts := startServer(t, serverOptions{})
		s := senderFor(t, ts, func(c *Config) { c.Insecure, c.Username, c.Password = true, "", "" })
		if err := s.Send(context.Background(), testMessage()); err != nil {
			t.Fatal(err)
		}
		if msgs := ts.messages(); len(msgs) != 1 || msgs[0].TLS {
			t.Fatalf("messages %+v", msgs)
		}
	})
}

func TestSessionFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		opts   serverOptions
		rcpt   *gosmtp.SMTPError
		mutate func(*Config)
		kind   apperr.Kind
		code   string
	}{
		{name: "untrusted certificate", opts: serverOptions{tls: true}, mutate: func(c *Config) { c.RootCAs = nil },
			kind: apperr.KindUnavailable, code: CodeUnavailable},
		{name: "wrong password", opts: serverOptions{tls: true, mechs: []string{"PLAIN"}}, mutate: func(c *Config) { c.Password = "wrong" },
			kind: apperr.KindInvalid, code: CodeAuthRefused},
		{name: "wrong password over LOGIN", opts: serverOptions{tls: true, mechs: []string{"LOGIN"}}, mutate: func(c *Config) { c.Password = "wrong" },
			kind: apperr.KindInvalid, code: CodeAuthRefused},
		{name: "credentials set but no AUTH offered", opts: serverOptions{tls: true},
			kind: apperr.KindUnavailable, code: CodeUnavailable},
		{name: "recipient refused 550", opts: serverOptions{tls: true, mechs: []string{"PLAIN"}},
			rcpt: &gosmtp.SMTPError{Code: 550, EnhancedCode: gosmtp.EnhancedCode{5, 1, 1}, Message: "<" + testTo + ">: no such user"},
			kind: apperr.KindInvalid, code: CodeRefused},
		{name: "recipient deferred 451", opts: serverOptions{tls: true, mechs: []string{"PLAIN"}},
			rcpt: &gosmtp.SMTPError{Code: 451, EnhancedCode: gosmtp.EnhancedCode{4, 3, 0}, Message: "try later " + testTo},
			kind: apperr.KindUnavailable, code: CodeUnavailable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ts := startServer(t, tc.opts)
			ts.rcptErr = tc.rcpt
			err := senderFor(t, ts, tc.mutate).Send(context.Background(), testMessage())
			e, ok := apperr.As(err)
			if !ok || e.Kind != tc.kind || e.Code != tc.code {
				t.Fatalf("err = %v, want kind %v code %s", err, tc.kind, tc.code)
			}
			assertSafe(t, err)
			if n := len(ts.messages()); n != 0 {
				t.Errorf("server received %d messages", n)
			}
		})
	}
}

func TestNetworkFailures(t *testing.T) {
	t.Parallel()
	t.Run("connection refused", func(t *testing.T) {
		t.Parallel()
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		s, _ := New(Config{Host: "127.0.0.1", Port: port, From: mail.Address{Address: "a@b.example"}})
		if e, ok := apperr.As(s.Send(context.Background(), testMessage())); !ok || e.Kind != apperr.KindUnavailable {
			t.Fatalf("err = %v", e)
		}
	})
	t.Run("silent server times out", func(t *testing.T) {
		t.Parallel()
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				t.Cleanup(func() { c.Close() })
			}
		}()
		s, _ := New(Config{Host: "127.0.0.1", Port: l.Addr().(*net.TCPAddr).Port, From: mail.Address{Address: "a@b.example"}, Timeout: 150 * time.Millisecond})
		if e, ok := apperr.As(s.Send(context.Background(), testMessage())); !ok || e.Kind != apperr.KindUnavailable {
			t.Fatalf("err = %v", e)
		}
	})
}

func TestInvalidMessagesNeverReachTheServer(t *testing.T) {
	t.Parallel()
	ts := startServer(t, serverOptions{tls: true, mechs: []string{"PLAIN"}})
	s := senderFor(t, ts, nil)
	cases := map[string]func(*notify.Message){
		"CRLF in subject":   func(m *notify.Message) { m.Subject = "Hi\r\nBcc: victim@example.com" },
		"LF in subject":     func(m *notify.Message) { m.Subject = "Hi\nBcc: victim@example.com" },
		"CRLF in recipient": func(m *notify.Message) { m.To = testTo + "\r\nRCPT TO:<x@y.example>" },
		"named recipient":   func(m *notify.Message) { m.To = "Zoë <" + testTo + ">" },
		"two recipients":    func(m *notify.Message) { m.To = testTo + ", other@example.org" },
		"not an address":    func(m *notify.Message) { m.To = "nobody" },
		"sms channel":       func(m *notify.Message) { m.Channel = notify.SMS },
		"empty body":        func(m *notify.Message) { m.Text = "" },
	}
	for name, mutate := range cases {
		m := testMessage()
		mutate(&m)
		err := s.Send(context.Background(), m)
		if e, ok := apperr.As(err); !ok || e.Kind != apperr.KindInvalid || e.Code != CodeInvalidMessage {
			t.Errorf("%s: err = %v", name, err)
		} else {
			assertSafe(t, err)
		}
	}
	if n := len(ts.messages()); n != 0 {
		t.Errorf("server received %d messages", n)
	}
}
