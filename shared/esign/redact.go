package esign

import "regexp"

// Contact details a signer may type into free text (a decline reason) never reach the audit
// trail, the evidence bundle or the certificate: they are replaced before the text is recorded.
var (
	reEmailLike = regexp.MustCompile(`[^\s@<>()\[\],;:"]+@[^\s@<>()\[\],;:"]+\.[^\s@<>()\[\],;:"]+`)
	rePhoneLike = regexp.MustCompile(`\+?\d(?:[\s().\-/]*\d){6,}`)
)

// RedactContacts replaces what looks like an e-mail address or a phone number (seven digits or
// more, with the usual separators) in s.
func RedactContacts(s string) string {
	s = reEmailLike.ReplaceAllString(s, "[e-mail removed]")
	return rePhoneLike.ReplaceAllString(s, "[phone number removed]")
}
