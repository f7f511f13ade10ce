package pdf

import (
	"strings"
	"testing"

	"github.com/esign-svc/esign/shared/i18n"
	"github.com/esign-svc/esign/shared/pdf/certificate"
	"github.com/esign-svc/esign/shared/pdf/internal/fixture"
)

// TestCertificateInTheSignersLanguage: each signer's heading and consent section are in the
// language the statements were accepted in, with the accepted text verbatim; the Arabic text is
// shaped and set right to left, and pdftotext reads it back as the words accepted.
func TestCertificateInTheSignersLanguage(t *testing.T) {
	requireTools(t)
	c := fixture.Certificate(4, goldenHead)
	for i, lang := range []string{"en", "de", "fr", "ar"} {
		stmts, _, _ := i18n.Consent("2026-11-01", lang)
		for k := range c.Signers[i].Consents {
			c.Signers[i].Consents[k].Language = lang
			c.Signers[i].Consents[k].Version = "2026-11-01"
			c.Signers[i].Consents[k].Text = stmts[k].Text
		}
	}
	pdf, err := certificate.Standalone(c, certificate.A4)
	if err != nil {
		t.Fatal(err)
	}
	qpdfCheck(t, pdf)
	text := pdftotext(t, pdf)
	flat := strings.Join(strings.Fields(text), " ")
	for _, want := range []string{
		"Signer 1:", "Language of the statements: English (en)", "I have opened and reviewed the entire document",
		"Unterzeichner 2:", "Einwilligung", "Sprache der Erklärungen: Deutsch (de)", "Erklärung 1 (document_reviewed, Version 2026-11-01) angenommen",
		"Ich habe das gesamte mir zur Unterschrift vorgelegte Dokument geöffnet und durchgesehen.",
		"Signataire 3 :", "Consentement", "Déclaration 2 (electronic_signature, version 2026-11-01) acceptée le",
		"J’ai ouvert et examiné l’intégralité du document qui m’a été présenté pour signature.",
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("certificate lacks %q", want)
		}
	}
	// Arabic: every word of the statements and headings, as the reader extracts them (poppler
	// puts a right-to-left line back in logical order).
	ar, _, _ := i18n.Consent("2026-11-01", "ar")
	for _, s := range append([]string{i18n.T("ar", "cert.consent", nil), i18n.T("ar", "language.name", nil)}, ar[0].Text, ar[1].Text, ar[2].Text) {
		for _, w := range strings.Fields(strings.Trim(s, ".،")) {
			if w = strings.Trim(w, ".،"); !strings.Contains(text, w) {
				t.Errorf("certificate lacks the Arabic word %q of %q", w, s)
			}
		}
	}
}
