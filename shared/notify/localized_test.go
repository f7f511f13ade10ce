package notify

import (
	"strings"
	"testing"
	"time"
)

// TestInvitationInTheSignersLanguage: the invitation's subject and body are in the signer's
// locale, the HTML part says its language and direction, values stay escaped.
func TestInvitationInTheSignersLanguage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ locale, subject, body, dir string }{
		{"", "Please sign: Vertrag", "You are invited to sign", "ltr"},
		{"de", "Bitte unterschreiben: Vertrag", "Sie sind eingeladen, das Dokument „Vertrag“ zu unterschreiben.", "ltr"},
		{"fr", "À signer : Vertrag", "Vous êtes invité à signer le document « Vertrag ».", "ltr"},
		{"ar", "يرجى التوقيع: Vertrag", "أنت مدعو لتوقيع المستند «Vertrag».", "rtl"},
	} {
		m, err := InvitationMessage("s@example.com", Invitation{SignerName: "Zoë <i>", DocumentName: "Vertrag", PortalURL: "https://p.test/sign?token=a&b", Locale: tc.locale})
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Validate(); err != nil {
			t.Fatal(err)
		}
		if m.Subject != tc.subject || !strings.Contains(m.Text, tc.body) || !strings.Contains(m.HTML, `dir="`+tc.dir+`"`) {
			t.Errorf("%q: subject %q, text:\n%s\nHTML %s", tc.locale, m.Subject, m.Text, m.HTML)
		}
		if strings.Contains(m.HTML, "<i>") || !strings.Contains(m.HTML, `href="https://p.test/sign?token=a&amp;b"`) {
			t.Errorf("%q: HTML not escaped: %s", tc.locale, m.HTML)
		}
	}
}

func TestDeliveryAndWorkflowInTheRecipientsLanguage(t *testing.T) {
	t.Parallel()
	d := DeliveryInvitationMessage("delivery_invitation", "r@example.com", DeliveryInvitation{Locale: "fr", Name: "Anne", Document: "Facture\r\n7",
		Message: "Voir <b>ci-joint</b>", Link: "https://p.test/deliver/x?t=y", Expires: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)})
	for _, want := range []string{"Bonjour Anne,", "Un expéditeur a partagé le document « Facture 7 » avec vous.", "Message de l’expéditeur :\nVoir <b>ci-joint</b>",
		"Le lien fonctionne jusqu’au 2026-12-01 10:00 UTC."} {
		if !strings.Contains(d.Text, want) {
			t.Errorf("delivery text lacks %q:\n%s", want, d.Text)
		}
	}
	if d.Subject != "Document partagé avec vous : Facture 7" || strings.Contains(d.HTML, "<b>") || d.Kind != "delivery_invitation" {
		t.Errorf("delivery: %q %s", d.Subject, d.HTML)
	}
	r := DeliveryInvitationMessage("delivery_reminder", "r@example.com", DeliveryInvitation{Locale: "de", Document: "Rechnung", Org: "Acme",
		Link: "https://p.test/deliver/x?t=y", Expires: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), Reminder: true})
	if r.Subject != "Erinnerung: Mit Ihnen geteiltes Dokument: Rechnung" || !strings.Contains(r.Text, "Acme hat das Dokument „Rechnung“ mit Ihnen geteilt, und Sie haben es noch nicht geöffnet.") ||
		!strings.Contains(r.Text, "https://p.test/deliver/x?t=y") {
		t.Errorf("delivery reminder: %q\n%s", r.Subject, r.Text)
	}
	w := WorkflowInvitationMessage("workflow_changes", "p@example.com", WorkflowInvitation{Locale: "ar", Changes: true, Org: "Acme", Link: "https://p.test/workflow/w?pt=z"})
	if !strings.HasPrefix(w.Text, "مرحبا،") || !strings.Contains(w.Text, "طلب أحد المراجعين") || w.Subject != "طلب تعديلات على نموذجك (Acme)" || !strings.Contains(w.HTML, `lang="ar" dir="rtl"`) {
		t.Errorf("workflow: %q\n%s\n%s", w.Subject, w.Text, w.HTML)
	}
}
