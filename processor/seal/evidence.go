package seal

import (
	"bytes"

	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/evidence"
)

// evidenceBundle writes one JSONL line per audit event (shared/evidence hash chain): kind, at,
// and data {slot, actorKind, ip, userAgent, emailHash, data}. The audit trail is meant to hold
// no personal data but hashes, IPs and user agents; as a second line of defence the event data
// is cleaned (evidence.Clean) so that no e-mail, phone number, token or code reaches the bundle.
// It returns the bundle and its head hash. Errors: the writer's (a malformed event kind).
func evidenceBundle(events []esign.AuditEvent) ([]byte, string, error) {
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
		if d, ok := evidence.Clean(ev.Data).(map[string]any); ok && len(d) > 0 {
			data["data"] = d
		}
		if _, err := w.Append(ev.Kind, ev.At, data); err != nil {
			return nil, "", err
		}
	}
	return buf.Bytes(), w.Head(), nil
}
