// Package evidence writes and verifies the JSONL evidence bundle: one line per audit event,
//
//	{"seq":1,"kind":"slot.signed","at":"<RFC 3339, 9 fraction digits, UTC>","data":{...},"prev":"<hex>","hash":"<hex>"}
//
// hash is the lower-case hex SHA-256 of the canonical JSON (defined by Canonical) of the line's
// object without "hash"; prev is the previous line's hash, 64 zeros for the first line (Genesis).
// The head hash of a bundle is its last line's hash (Genesis for an empty bundle).
package evidence

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// Canonical writes v, a value as decoded by encoding/json with UseNumber (nil, bool,
// json.Number, string, []any, map[string]any), in the canonical form:
//   - objects: members sorted by key (byte-wise order of the UTF-8 keys), no duplicate keys;
//   - no whitespace outside strings;
//   - strings: JSON escapes only for '"', '\\' and control characters below U+0020
//     (\b \f \n \r \t and \u00XX otherwise, lower-case hex); every other character as UTF-8;
//     invalid UTF-8 is an error;
//   - numbers: their literal text, which must be a valid JSON number;
//   - true, false, null.
func Canonical(buf *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case nil:
		buf.WriteString("null")
	case bool:
		if x {
			buf.WriteString("true")
		} else {
			buf.WriteString("false")
		}
	case json.Number:
		if !json.Valid([]byte(x)) || strings.ContainsAny(string(x), " \t\r\n") {
			return fmt.Errorf("evidence: invalid number %q", string(x))
		}
		buf.WriteString(string(x))
	case string:
		return canonicalString(buf, x)
	case []any:
		buf.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := Canonical(buf, e); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := canonicalString(buf, k); err != nil {
				return err
			}
			buf.WriteByte(':')
			if err := Canonical(buf, x[k]); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	default:
		return fmt.Errorf("evidence: unsupported type %T in canonical JSON", v)
	}
	return nil
}

func canonicalString(buf *bytes.Buffer, s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("evidence: string is not valid UTF-8")
	}
	buf.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			buf.WriteString(`\"`)
		case r == '\\':
			buf.WriteString(`\\`)
		case r == '\b':
			buf.WriteString(`\b`)
		case r == '\f':
			buf.WriteString(`\f`)
		case r == '\n':
			buf.WriteString(`\n`)
		case r == '\r':
			buf.WriteString(`\r`)
		case r == '\t':
			buf.WriteString(`\t`)
		case r < 0x20:
			fmt.Fprintf(buf, `\u%04x`, r)
		default:
			buf.WriteRune(r)
		}
	}
	buf.WriteByte('"')
	return nil
}

// normalise turns any JSON-marshalable value into the generic form Canonical accepts.
func normalise(v any) (any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("evidence: data: %w", err)
	}
	return decodeStrict(raw)
}

func decodeStrict(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data")
	}
	return out, nil
}
