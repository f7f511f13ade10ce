package browser

import (
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/i18n"
	"github.com/esign-svc/esign/shared/notify"
)

// TestDeliveryInTheRecipientsLanguage: a recipient created with locale ar gets the invitation in
// Arabic and the page right to left in Arabic (the page checks and screenshots included).
func TestDeliveryInTheRecipientsLanguage(t *testing.T) {
	t.Parallel()
	path, _ := upload(t, "plain-1p.pdf")
	email := newEmail("recipient")
	r := asInitiator(t, "POST", "delivery", map[string]any{"correlationId": "browser-dlv-ar-" + time.Now().Format("150405.000000"),
		"documentName": "Statement 2026.pdf", "pdfBlobPath": path, "mode": "secure-email", "requesterOrg": "Contoso Legal",
		"recipients": []any{map[string]any{"email": email, "name": "Rita Recipient", "locale": "ar-EG"}}})
	if r.Status != 201 {
		t.Fatalf("create delivery: %d %s", r.Status, r.Raw)
	}
	inv := mail(t, email, notify.Kind("delivery_invitation"), 1)[0]
	if want := i18n.T("ar", "email.delivery.subject", map[string]string{"document": "Statement 2026.pdf"}); inv.Subject != want {
		t.Errorf("invitation subject %q, want %q", inv.Subject, want)
	}
	b := newTab(t)
	b.open(linkIn(t, inv, "/deliver/"))
	b.settle("the page in Arabic", `document.documentElement.lang === "ar" && document.documentElement.dir === "rtl" && !!document.getElementById("download")`)
	if got, want := b.text("#download"), i18n.T("ar", "deliver.download", nil); got != want {
		t.Errorf("download button %q, want %q", got, want)
	}
	b.shot("deliver-lang-ar")
}
