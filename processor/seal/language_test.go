package seal

import (
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/esign/sessionstore"
)

// TestConsentsKeepTheLanguage: the certificate's consents carry the language each statement was
// accepted in, with its verbatim text.
func TestConsentsKeepTheLanguage(t *testing.T) {
	t.Parallel()
	ar := esign.StatementsIn("ar")
	sl := esign.Slot{Consents: []esign.ConsentAcceptance{{ID: ar[0].ID, Version: ar[0].Version, Language: "ar", Text: ar[0].Text,
		AcceptedAt: time.Date(2026, 11, 27, 3, 0, 0, 5, time.UTC).Format(time.RFC3339Nano)}}}
	got, err := consents(sl, sessionstore.Signature{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Language != "ar" || got[0].Text != ar[0].Text || got[0].Key != "document_reviewed" {
		t.Fatalf("consents %+v", got)
	}
}
