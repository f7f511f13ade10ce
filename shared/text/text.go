// Package text is the one rule for the strings a request puts into audit rows, evidence and
// PDFs: document ids and names, names of signers and recipients, roles, messages, reasons, the
// callback's reported values. It is pure (no I/O, no configuration).
//
// Refused everywhere, because none of them belongs in a legal record and each can make what is
// stored differ from what a reader sees:
//   - the C0 controls U+0000-U+001F, DEL and the C1 controls U+007F-U+009F (terminal escapes,
//     NUL truncation, NEL as a hidden line break);
//   - the line and paragraph separators U+2028 and U+2029 (line breaks most tools do not show
//     as such);
//   - the bidirectional embeddings and overrides U+202A-U+202E and the isolates U+2066-U+2069
//     ("Trojan source": a name shown in another order than it is stored; the PDF renderer does
//     not interpret them, so the certificate and a viewer of the JSON would disagree);
//   - invalid UTF-8.
//
// The implicit direction marks U+200E, U+200F and U+061C, the zero-width joiners and every
// other format character stay allowed: they shape names in Arabic, Persian, Hebrew and Indic
// scripts and in emoji, and cannot reorder text across them.
//
// Free text that is made of lines (a decline reason, a delivery message) may in addition
// break lines with "\n" or "\r\n"; a lone "\r", a tab or any other control is refused there
// too.
//
// Text the caller did not type (a request header recorded as evidence) is not refused but
// cleaned with Clean.
package text

import (
	"fmt"
	"unicode/utf8"
)

// Form says which line breaks a field may hold.
type Form uint8

const (
	// Line is text on one line: no control character at all.
	Line Form = iota
	// Lines is free text whose lines are separated by "\n" or "\r\n".
	Lines
)

// Refused reports whether r is refused in every form: C0, DEL, C1, U+2028, U+2029, the bidi
// embeddings and overrides U+202A-U+202E and the isolates U+2066-U+2069.
func Refused(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r == 0x2028, r == 0x2029:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// Problem is "" when s is acceptable text of form f, else why it is not, worded to follow the
// field's path ("signers[1].namePrefill: must not contain ..."). The message names the code
// point and its position (in characters, from 1), never the text itself.
func Problem(s string, f Form) string {
	n := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		n++
		switch {
		case r == utf8.RuneError && size == 1:
			return fmt.Sprintf("is not valid UTF-8 (byte %d)", i+1)
		case f == Lines && r == '\n':
		case f == Lines && r == '\r':
			if i+1 >= len(s) || s[i+1] != '\n' {
				return fmt.Sprintf(`may break lines only with \n or \r\n: a lone carriage return at character %d`, n)
			}
		case r == '\n' || r == '\r':
			return fmt.Sprintf("must be one line: a line break at character %d", n)
		case Refused(r):
			return fmt.Sprintf("must not contain %s U+%04X (character %d)", describe(r), r, n)
		}
		i += size
	}
	return ""
}

func describe(r rune) string {
	switch {
	case r == 0x2028 || r == 0x2029:
		return "the line or paragraph separator"
	case r >= 0x202a:
		return "the bidirectional formatting character"
	}
	return "the control character"
}

// Replacement is what Clean puts in place of a refused character or an invalid byte.
const Replacement = '\uFFFD'

// Clean returns s with every refused character and every byte of invalid UTF-8 replaced by
// U+FFFD, cut to at most max bytes without splitting a character. It is for text the caller
// did not type and that must not be refused for its content, such as a User-Agent header
// recorded as evidence: the replacement shows that something was there.
func Clean(s string, max int) string {
	if len(s) <= max && Problem(s, Line) == "" {
		return s
	}
	out := make([]byte, 0, min(len(s), max))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || Refused(r) {
			r = Replacement
		}
		if len(out)+utf8.RuneLen(r) > max {
			break
		}
		out = utf8.AppendRune(out, r)
		i += size
	}
	return string(out)
}
