package esign

import "testing"

func TestRedactContacts(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"I do not agree with clause 7":                   "I do not agree with clause 7",
		"write to ann.signer+x@example.co.uk instead":    "write to [e-mail removed] instead",
		"call me on +44 20 7946 0958 please":             "call me on [phone number removed] please",
		"(030) 123-4567 or 0301234567":                   "([phone number removed] or [phone number removed]",
		"clause 12.3 of 2026, page 4":                    "clause 12.3 of 2026, page 4",
		"Bitte an bürgermeister@gemeinde.de, nicht hier": "Bitte an [e-mail removed], nicht hier",
	} {
		if got := RedactContacts(in); got != want {
			t.Errorf("RedactContacts(%q) = %q, want %q", in, got, want)
		}
	}
}
