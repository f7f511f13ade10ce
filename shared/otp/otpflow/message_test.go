package otpflow

import (
	"strings"
	"testing"

	"github.com/esign-svc/esign/shared/notify"
)

func TestMessage(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		target  Target
		purpose Purpose
		text    string // the first paragraph, both channels
		subject string
		inHTML  []string
	}{
		{"email", Target{Channel: notify.Email, To: "a@b.test", DocumentName: "Statement 2026.pdf"}, Access,
			"Your access code for Statement 2026.pdf is 123456. It is valid for 10 minutes. Do not share it with anyone.",
			"Your access code for Statement 2026.pdf",
			[]string{"<strong>Statement 2026.pdf</strong>", "<strong>123456</strong>", "10 minutes", "did not ask"}},
		{"escaped and on one line", Target{Channel: notify.Email, To: "a@b.test", DocumentName: " <b>Q&A</b>\r\nBcc: x@y.test "}, Signing,
			"Your signing code for <b>Q&A</b> Bcc: x@y.test is 123456. It is valid for 10 minutes. Do not share it with anyone.",
			"Your signing code for <b>Q&A</b> Bcc: x@y.test",
			[]string{"<strong>&lt;b&gt;Q&amp;A&lt;/b&gt; Bcc: x@y.test</strong>"}},
		{"no name", Target{Channel: notify.Email, To: "a@b.test"}, Signing,
			"Your signing code for your document is 123456. It is valid for 10 minutes. Do not share it with anyone.",
			"Your signing code for your document", nil},
		{"sms", Target{Channel: notify.SMS, To: "+33612345678", DocumentName: "Contract.pdf", CorrelationID: "c"}, Signing,
			"Your signing code for Contract.pdf is 123456. It is valid for 10 minutes. Do not share it with anyone.", "", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			m := Message(c.target, c.purpose, "123456")
			if err := m.Validate(); err != nil {
				t.Fatal(err)
			}
			if m.Channel != c.target.Channel || m.Kind != notify.KindOTP || m.To != c.target.To ||
				m.CorrelationID != c.target.CorrelationID || m.Subject != c.subject {
				t.Fatalf("message %+v", m)
			}
			if strings.ContainsAny(m.Subject, "\r\n") {
				t.Fatalf("subject on two lines: %q", m.Subject)
			}
			if c.target.Channel == notify.SMS {
				if m.Text != c.text || m.HTML != "" {
					t.Fatalf("sms %q %q", m.Text, m.HTML)
				}
				return
			}
			if m.Text != c.text+"\n\nIf you did not ask for it, ignore this e-mail.\n" {
				t.Fatalf("text %q", m.Text)
			}
			if strings.Contains(m.HTML, "<b>") {
				t.Fatalf("HTML not escaped: %s", m.HTML)
			}
			for _, want := range c.inHTML {
				if !strings.Contains(m.HTML, want) {
					t.Errorf("HTML lacks %q: %s", want, m.HTML)
				}
			}
		})
	}
}

// TestMessageInTheTargetsLanguage: the code's e-mail and SMS are in the target's language.
func TestMessageInTheTargetsLanguage(t *testing.T) {
	t.Parallel()
	m := Message(Target{Channel: notify.Email, To: "a@b.test", DocumentName: "Vertrag.pdf", Locale: "de"}, Signing, "123456")
	if m.Subject != "Ihr Unterschriftscode für Vertrag.pdf" || !strings.HasPrefix(m.Text, "Ihr Unterschriftscode für Vertrag.pdf lautet 123456. Er ist 10 Minuten gültig.") ||
		!strings.Contains(m.HTML, "<strong>Vertrag.pdf</strong>") || !strings.Contains(m.HTML, `lang="de"`) {
		t.Errorf("German e-mail: %q\n%s\n%s", m.Subject, m.Text, m.HTML)
	}
	s := Message(Target{Channel: notify.SMS, To: "+33612345678", Locale: "fr"}, Access, "654321")
	if s.Text != "Votre code d’accès pour votre document est 654321. Il est valable 10 minutes. Ne le communiquez à personne." {
		t.Errorf("French SMS: %q", s.Text)
	}
}
