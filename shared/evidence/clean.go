package evidence

import (
	"regexp"
	"strings"
)

var (
	emailLike = regexp.MustCompile(`[^\s@]+@[^\s@]+\.[^\s@]+`)
	phoneLike = regexp.MustCompile(`^\+[0-9][0-9 ()\-]{6,}[0-9]$`)
)

// secretKey reports whether a data key names personal data or a secret: e-mail addresses
// (but not their hashes), phone numbers, tokens, codes, link ids, passwords.
func secretKey(k string) bool {
	l := strings.ToLower(k)
	if strings.HasSuffix(l, "hash") {
		return false
	}
	for _, bad := range []string{"email", "phone", "token", "code", "jti", "secret", "password", "otp"} {
		if strings.Contains(l, bad) {
			return true
		}
	}
	return false
}

// Clean is event data as an evidence bundle may carry it (the session seal's and the workflow
// seal's): secret keys and string values that look like an e-mail address or a phone number
// dropped, recursively.
func Clean(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			if secretKey(k) {
				continue
			}
			if c := Clean(val); c != nil {
				out[k] = c
			}
		}
		return out
	case []any:
		out := make([]any, 0, len(x))
		for _, val := range x {
			if c := Clean(val); c != nil {
				out = append(out, c)
			}
		}
		return out
	case string:
		if emailLike.MatchString(x) || phoneLike.MatchString(strings.TrimSpace(x)) {
			return nil
		}
		return x
	}
	return v
}
