package funcproto

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/jsonraw"
)

// CodeInvalidInvocation is the code of every decoding error of this package.
const CodeInvalidInvocation = "invalid_invocation"

// maxUnwrap bounds how many JSON-string layers are peeled from one value.
const maxUnwrap = 4

func invalid(field, format string, args ...any) *apperr.Error {
	msg := format
	if len(args) > 0 {
		msg = sprintf(format, args...)
	}
	return apperr.Invalid(CodeInvalidInvocation, apperr.Field(field, msg))
}

// isNull reports whether raw is absent or JSON null.
func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

// unwrapObject returns raw as a JSON object, peeling JSON-string layers that hold one. ok is
// false when raw is null or absent.
func unwrapObject(raw json.RawMessage, field string) (obj json.RawMessage, ok bool, err error) {
	raw = bytes.TrimSpace(raw)
	for i := 0; ; i++ {
		if isNull(raw) {
			return nil, false, nil
		}
		switch raw[0] {
		case '{':
			if !json.Valid(raw) {
				return nil, false, invalid(field, "is not valid JSON")
			}
			return raw, true, nil
		case '"':
			if i >= maxUnwrap {
				return nil, false, invalid(field, "is encoded too many times")
			}
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return nil, false, invalid(field, "is not a valid JSON string")
			}
			s = strings.TrimSpace(s)
			if s == "" {
				return nil, false, nil
			}
			raw = json.RawMessage(s)
		default:
			return nil, false, invalid(field, "must be a JSON object")
		}
	}
}

// unwrapText peels JSON-string layers while the text inside is itself valid JSON; what is left
// is either JSON (not a string) or plain text.
func unwrapText(raw json.RawMessage, field string) ([]byte, error) {
	raw = bytes.TrimSpace(raw)
	if isNull(raw) {
		return nil, nil
	}
	if !json.Valid(raw) {
		return nil, invalid(field, "is not valid JSON")
	}
	for i := 0; i < maxUnwrap && len(raw) > 0 && raw[0] == '"'; i++ {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, invalid(field, "is not a valid JSON string")
		}
		inner := bytes.TrimSpace([]byte(s))
		if len(inner) == 0 || !json.Valid(inner) {
			return []byte(s), nil
		}
		raw = inner
	}
	return compact(raw), nil
}

// compact returns raw without insignificant whitespace (raw must be valid JSON).
func compact(raw []byte) []byte {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return append([]byte(nil), raw...)
	}
	return buf.Bytes()
}

// flexString reads a JSON string (any embedded quote layers removed), number or boolean as
// text. Null or absent is "".
func flexString(raw json.RawMessage, field string) (string, error) {
	raw = bytes.TrimSpace(raw)
	if isNull(raw) {
		return "", nil
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", invalid(field, "is not a valid JSON string")
		}
		return stripQuotes(s), nil
	case '{', '[':
		return "", invalid(field, "must be a string")
	default:
		if !json.Valid(raw) {
			return "", invalid(field, "is not valid JSON")
		}
		return string(raw), nil
	}
}

// stripQuotes removes embedded quote layers: `"abc"` and `\"abc\"` become abc.
func stripQuotes(s string) string {
	for i := 0; i < maxUnwrap; i++ {
		t := strings.TrimSpace(s)
		if len(t) < 2 || t[0] != '"' || t[len(t)-1] != '"' {
			return s
		}
		var u string
		if err := json.Unmarshal([]byte(t), &u); err != nil {
			u = t[1 : len(t)-1]
		}
		s = u
	}
	return s
}

// flexInt reads a JSON number or a (possibly quoted) string holding an integer.
func flexInt(raw json.RawMessage, field string) (int, error) {
	s, err := flexString(raw, field)
	if err != nil {
		return 0, err
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		// Numbers such as 1.0 or 1e0 from a JSON serialiser.
		f, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil || f != float64(int(f)) || f < 0 || f > 1<<31 {
			return 0, invalid(field, "must be a whole number")
		}
		n = int(f)
	}
	if n < 0 {
		return 0, invalid(field, "must not be negative")
	}
	return n, nil
}

// flexBool reads a JSON boolean or a (possibly quoted) string "true"/"false".
func flexBool(raw json.RawMessage, field string) (bool, error) {
	s, err := flexString(raw, field)
	if err != nil {
		return false, err
	}
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "false":
		return false, nil
	case "true":
		return true, nil
	}
	return false, invalid(field, "must be true or false")
}

var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
	"1/2/2006 3:04:05 PM -07:00",
	"1/2/2006 3:04:05 PM",
	"1/2/2006 15:04:05 -07:00",
	"1/2/2006 15:04:05",
}

// flexTime reads a (possibly quoted) time in one of timeLayouts. Layouts without a zone are UTC.
func flexTime(raw json.RawMessage, field string) (time.Time, error) {
	s, err := flexString(raw, field)
	if err != nil {
		return time.Time{}, err
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range timeLayouts {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, invalid(field, "is not a time this handler understands")
}

// objectFields decodes a JSON object (after unwrapObject) into its members.
func objectFields(raw json.RawMessage, field string) (map[string]json.RawMessage, error) {
	obj, ok, err := unwrapObject(raw, field)
	if err != nil || !ok {
		return map[string]json.RawMessage{}, err
	}
	// the members are slices of obj, not copies: a member of tens of MiB (a batch render's
	// Body) is held once
	m := map[string]json.RawMessage{}
	ok = jsonraw.Members(obj, func(key, val []byte) bool {
		k, kok := jsonraw.Unquote(key)
		m[string(k)] = val
		return kok
	})
	if !ok {
		return nil, invalid(field, "must be a JSON object")
	}
	return m, nil
}

// member finds a member by name, exactly or else case-insensitively (the host writes
// PascalCase; other senders may not).
func member(m map[string]json.RawMessage, name string) json.RawMessage {
	if v, ok := m[name]; ok {
		return v
	}
	best := ""
	var found json.RawMessage
	for k, v := range m {
		if strings.EqualFold(k, name) && (found == nil || k < best) {
			best, found = k, v
		}
	}
	return found
}
