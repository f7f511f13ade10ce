package esign

// ConsentVersion identifies the wording of the three consent statements. The texts are frozen
// per version: a new wording is a new version, and the evidence certificate embeds the verbatim
// text the signer accepted.
const ConsentVersion = "2026-11-01"

// ConsentStatement is one of the three statements a signer confirms before signing.
type ConsentStatement struct {
	ID      string `json:"id"`
	Version string `json:"version"`
	Text    string `json:"text"`
}

// ConsentStatements are the spec's three statements, in order: (1) document reviewed,
// (2) consent to sign electronically in place of handwriting, (3) acknowledgement that the
// electronic signature is legally binding.
var ConsentStatements = []ConsentStatement{
	{ID: "document_reviewed", Version: ConsentVersion,
		Text: "I have opened and reviewed the entire document presented to me for signature."},
	{ID: "electronic_signature", Version: ConsentVersion,
		Text: "I consent to sign this document electronically, and I agree that my electronic signature takes the place of my handwritten signature."},
	{ID: "legally_binding", Version: ConsentVersion,
		Text: "I acknowledge that my electronic signature on this document is legally binding, in the same way as a handwritten signature."},
}

// ConsentAcceptance is the signer's acceptance of one statement, as recorded.
type ConsentAcceptance struct {
	ID         string `json:"id"`
	Version    string `json:"version"`
	Text       string `json:"text"`
	AcceptedAt string `json:"acceptedAt"` // RFC 3339 with nanoseconds
}

// StatementByID finds a statement of the current version.
func StatementByID(id string) (ConsentStatement, bool) {
	for _, s := range ConsentStatements {
		if s.ID == id {
			return s, true
		}
	}
	return ConsentStatement{}, false
}
