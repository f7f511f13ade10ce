// Package jsonraw reads valid JSON text in place: the members of an object as slices of it, and
// a string's value, without the copies encoding/json makes of each (a json.RawMessage member is
// copied out of its input, a decoded string is unquoted into one buffer and copied into
// another). A request body of tens of MiB (the batch render's, carried inside a Functions
// invocation) is then held once, not once per layer that reads it.
package jsonraw

import (
	"unicode/utf16"
	"unicode/utf8"
)

// Members calls fn with each member of the JSON object obj (valid JSON, checked by the caller
// with json.Valid) in document order, as slices of obj: the key with its quotes and the value
// with no blanks around it, until fn returns false. It reports whether every member was taken
// (false too for anything that is not an object).
func Members(obj []byte, fn func(key, val []byte) bool) bool {
	i := skipBlanks(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return false
	}
	i++
	for {
		i = skipBlanks(obj, i)
		if i >= len(obj) {
			return false
		}
		switch obj[i] {
		case '}':
			return true
		case ',':
			i = skipBlanks(obj, i+1)
		}
		ks := i
		if i = skipString(obj, i); i < 0 {
			return false
		}
		key := obj[ks:i]
		if i = skipBlanks(obj, i); i >= len(obj) || obj[i] != ':' {
			return false
		}
		vs := skipBlanks(obj, i+1)
		if i = skipValue(obj, vs); i < 0 {
			return false
		}
		if !fn(key, obj[vs:i:i]) {
			return false
		}
	}
}

func skipBlanks(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// skipString returns the offset after the string that starts at b[i], -1 if there is none.
func skipString(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// skipValue returns the offset after the JSON value that starts at b[i] (valid JSON), -1 if
// there is none.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				if i = skipString(b, i); i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	}
	start := i
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			if i == start {
				return -1
			}
			return i
		}
		i++
	}
	if i == start {
		return -1
	}
	return i
}

// Unquote is the value of the JSON string literal s (with its quotes), as encoding/json
// decodes it into a string (an invalid UTF-8 byte or a lone surrogate escape becomes U+FFFD),
// in one new buffer, or s's own bytes when it holds no escape and nothing to replace. ok is
// false when s is not a JSON string.
func Unquote(s []byte) (_ []byte, ok bool) { return unquote(s, false) }

// UnquoteInPlace is Unquote writing the value over s's own bytes (the value of a literal of
// valid UTF-8 is never longer than the literal), for a caller that owns s and needs the literal
// no more: s is spoiled, whatever the answer. A literal that is not valid UTF-8 (its bad bytes
// become the three of U+FFFD) is unquoted into a new buffer, as Unquote does.
func UnquoteInPlace(s []byte) (_ []byte, ok bool) {
	if !utf8.Valid(s) {
		return unquote(s, false)
	}
	return unquote(s, true)
}

func unquote(s []byte, inPlace bool) (_ []byte, ok bool) {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return nil, false
	}
	s = s[1 : len(s)-1]
	// the common case: nothing to unescape or replace
	r := 0
	for r < len(s) {
		c := s[r]
		if c == '\\' || c == '"' || c < ' ' {
			break
		}
		if c < utf8.RuneSelf {
			r++
			continue
		}
		rr, size := utf8.DecodeRune(s[r:])
		if rr == utf8.RuneError && size == 1 {
			break
		}
		r += size
	}
	if r == len(s) {
		return s[:len(s):len(s)], true
	}
	var b []byte
	if inPlace {
		b = s[:r] // every byte written is at or before the one read next
	} else {
		b = make([]byte, r, len(s)+2*utf8.UTFMax)
		copy(b, s[:r])
	}
	for r < len(s) {
		c := s[r]
		switch {
		case c == '\\':
			r++
			if r >= len(s) {
				return nil, false
			}
			switch e := escapes[s[r]]; {
			case e != 0:
				b = append(b, e)
				r++
			case s[r] == 'u':
				r--
				rr := hex4(s[r:])
				if rr < 0 {
					return nil, false
				}
				r += 6
				if utf16.IsSurrogate(rr) {
					if rr1 := hex4(s[r:]); rr1 >= 0 {
						if dec := utf16.DecodeRune(rr, rr1); dec != utf8.RuneError {
							r += 6
							b = utf8.AppendRune(b, dec)
							break
						}
					}
					rr = utf8.RuneError
				}
				b = utf8.AppendRune(b, rr)
			default:
				return nil, false
			}
		case c == '"', c < ' ':
			return nil, false
		case c < utf8.RuneSelf:
			b = append(b, c)
			r++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			r += size
			b = utf8.AppendRune(b, rr) // an invalid byte is U+FFFD
		}
	}
	return b[:len(b):len(b)], true
}

// escapes are the one-character escapes' values (0: not one).
var escapes = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// hex4 is the code unit of the escape `\uXXXX` that s starts with, -1 if it does not.
func hex4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}
