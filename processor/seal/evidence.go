package seal

import (
	"bytes"
	"regexp"
	"strings"

	"github.com/esign-svc/esign/shared/esign/sessionstore"
	"github.com/esign-svc/esign/shared/evidence"
)

// evidenceBundle writes one JSONL line per audit event (shared/evidence hash chain): kind, at,
// and data {slot, actorKind, ip, userAgent, emailHash, data}. The audit trail is meant to hold
// no personal data but hashes, IPs and user agents; as a second line of defence the event data
// is cleaned (see clean) so that no e-mail, phone number, token or code reaches the bundle.
// It returns the bundle and its head hash. Errors: the writer's (a malformed event kind).
func evidenceBundle(events []sessionstore.AuditEvent) ([]byte, string, error) {
	var buf bytes.Buffer
	w := evidence.NewWriter(&buf)
	for _, ev := range events {
		data := map[string]any{"slot": ev.Slot, "actorKind": ev.ActorKind}
		if ev.IP != "" {
			data["ip"] = ev.IP
		}
		if ev.UserAgent != "" {
			data["userAgent"] = ev.UserAgent
		}
		if ev.EmailHash != "" {
			data["emailHash"] = ev.EmailHash
		}
		if d, ok := clean(ev.Data).(map[string]any); ok && len(d) > 0 {
			data["data"] = d
		}
		if _, err := w.Append(ev.Kind, ev.At, data); err != nil {
			return nil, "", err
		}
	}
	return buf.Bytes(), w.Head(), nil
}

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

// clean drops secret keys and string values that look like an e-mail address or a phone
// number, recursively.
func clean(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			if secretKey(k) {
				continue
			}
			if c := clean(val); c != nil {
				out[k] = c
			}
		}
		return out
	case []any:
		out := make([]any, 0, len(x))
		for _, val := range x {
			if c := clean(val); c != nil {
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

// Clean is clean for the other evidence bundles (the workflow seal's): event data without
// personal data or secrets.
func Clean(v any) any { return clean(v) }
