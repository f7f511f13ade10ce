package notify

import (
	"strings"
	"testing"
)

func TestInvitationHoldsOnlyLinkNameAndDocument(t *testing.T) {
	t.Parallel()
	m, err := InvitationMessage("signer@example.com", Invitation{
		SignerName: "Zoë <b>Ö</b>", DocumentName: "Contract\r\nBcc: x@evil.test", PortalURL: "https://portal.test/sign?token=abc",
		Requester: "Ann", Organization: "Acme",
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(m.Subject, "\r\n") {
		t.Errorf("subject carries a line break: %q", m.Subject)
	}
	for _, want := range []string{"Zoë", "https://portal.test/sign?token=abc", "Contract Bcc", "Requested by Ann, Acme"} {
		if !strings.Contains(m.Text, want) {
			t.Errorf("text lacks %q:\n%s", want, m.Text)
		}
	}
	if strings.Contains(m.HTML, "<b>Ö</b>") {
		t.Errorf("HTML does not escape the name: %s", m.HTML)
	}
	if !strings.Contains(m.HTML, `href="https://portal.test/sign?token=abc"`) {
		t.Errorf("HTML lacks the link: %s", m.HTML)
	}
	if strings.Contains(m.Text, "signer@example.com") || strings.Contains(m.HTML, "signer@example.com") {
		t.Error("the body repeats the recipient's address")
	}
}

func TestInvitationWithoutNameOrRequester(t *testing.T) {
	t.Parallel()
	m, err := InvitationMessage("s@example.com", Invitation{DocumentName: "D", PortalURL: "https://p/x", Reminder: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(m.Text, "Hello,") || strings.Contains(m.Text, "Requested by") || !strings.HasPrefix(m.Subject, "New signing link") {
		t.Errorf("text:\n%s\nsubject %q", m.Text, m.Subject)
	}
}
