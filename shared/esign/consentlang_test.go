package esign

import (
	"testing"

	"github.com/esign-svc/esign/shared/i18n"
)

// TestConsentRecordsTheLanguageShown: the acceptance keeps the language and the verbatim text
// of the statement as shown, the slot's locale when the page names none, and the audit event
// says the language.
func TestConsentRecordsTheLanguageShown(t *testing.T) {
	t.Parallel()
	s, slots := newSession(ModeSingle, Required)
	slots[0].Locale = "de"
	Start(s, slots, t0)
	Activate(s, slots, 0, t0, nil)
	MarkViewed(s, slots, 0, t0, nil)
	c, err := Consent(s, slots, 0, t0, []string{"document_reviewed"})
	if err != nil {
		t.Fatal(err)
	}
	de, _, _ := i18n.Consent(ConsentVersion, "de")
	if a := slots[0].Consents[0]; a.Language != "de" || a.Text != de[0].Text {
		t.Fatalf("acceptance %+v; want German %q", a, de[0].Text)
	}
	if got := c.Events[0].Data["language"]; got != "de" {
		t.Errorf("audit meta language = %v", got)
	}
	if _, err := ConsentIn(s, slots, 0, t0, []string{"electronic_signature", "legally_binding"}, "ar"); err != nil {
		t.Fatal(err)
	}
	ar := StatementsIn("ar")
	if a := slots[0].Consents[2]; a.Language != "ar" || a.Text != ar[2].Text || a.Text == ConsentStatements[2].Text {
		t.Fatalf("acceptance %+v; want Arabic %q", a, ar[2].Text)
	}
	if _, err := Sign(s, slots, 0, t0, SignInput{SignerName: "n"}); err != nil {
		t.Fatalf("sign after consents in two languages: %v", err)
	}
}

func TestStatementsInEveryLanguage(t *testing.T) {
	t.Parallel()
	for _, l := range i18n.Supported {
		st := StatementsIn(l)
		if len(st) != 3 || st[0].Language != l || st[1].ID != "electronic_signature" || st[2].Version != ConsentVersion {
			t.Errorf("%s: %+v", l, st)
		}
	}
	if st := StatementsIn("ja"); st[0].Language != "en" {
		t.Errorf("unsupported language: %+v", st[0])
	}
}
