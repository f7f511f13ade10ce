package esign

import "github.com/esign-svc/esign/shared/i18n"

// ConsentVersion identifies the wording of the three consent statements. The texts are frozen
// per version in every language (shared/i18n/consent/<version>.json, pinned by its test): a
// new wording or a corrected translation is a new version, and the evidence certificate
// embeds the verbatim text the signer accepted, in the language it was shown in.
const ConsentVersion = "2026-11-01"

// ConsentStatement is one of the three statements a signer confirms before signing, in one
// language.
type ConsentStatement struct {
	ID       string `json:"id"`
	Version  string `json:"version"`
	Language string `json:"language"`
	Text     string `json:"text"`
}

// ConsentStatements are the spec's three statements in English, in order: (1) document
// reviewed, (2) consent to sign electronically in place of handwriting, (3) acknowledgement
// that the electronic signature is legally binding.
var ConsentStatements = StatementsIn(i18n.Default)

// StatementsIn are the current version's statements in lang (English for a language without
// them), in order.
func StatementsIn(lang string) []ConsentStatement {
	stmts, in, ok := i18n.Consent(ConsentVersion, lang)
	if !ok {
		panic("esign: no consent statements of version " + ConsentVersion) // embedded; the tests load it
	}
	out := make([]ConsentStatement, len(stmts))
	for i, s := range stmts {
		out[i] = ConsentStatement{ID: s.ID, Version: ConsentVersion, Language: in, Text: s.Text}
	}
	return out
}

// ConsentAcceptance is the signer's acceptance of one statement, as recorded: the verbatim text
// and the language it was shown in (a choice, not a fact about the signer; empty in records
// made before languages, which were English).
type ConsentAcceptance struct {
	ID         string `json:"id"`
	Version    string `json:"version"`
	Language   string `json:"language,omitempty"`
	Text       string `json:"text"`
	AcceptedAt string `json:"acceptedAt"` // RFC 3339 with nanoseconds
}

// StatementByID finds a statement of the current version (in English).
func StatementByID(id string) (ConsentStatement, bool) {
	return statementIn(i18n.Default, id)
}

func statementIn(lang, id string) (ConsentStatement, bool) {
	for _, s := range StatementsIn(lang) {
		if s.ID == id {
			return s, true
		}
	}
	return ConsentStatement{}, false
}

// ConsentLanguage is the language a slot's statements are shown in when the page asks for
// none: the slot's locale, else the browser's Accept-Language, else English.
func ConsentLanguage(sl *Slot, acceptLanguage string) string {
	return i18n.Choose(sl.Locale, acceptLanguage)
}
