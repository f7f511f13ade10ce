package seal

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/esign/sessionstore"
	"github.com/esign-svc/esign/shared/evidence"
)

func TestEvidenceBundleKeepsPersonalDataOut(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 22, 10, 0, 0, 123456789, time.UTC)
	events := []sessionstore.AuditEvent{
		{Kind: "slot.otp_sent", At: at, Slot: 0, ActorKind: "portal", IP: "198.51.100.4", UserAgent: "UA", EmailHash: "ab12",
			Data: map[string]any{"channel": "sms", "phone": "+447700900123", "to": "+44 7700 900123", "otpCode": "918273",
				"nested": map[string]any{"email": "a@example.com", "note": "sent to a@example.com", "emailHash": "ab12"},
				"list":   []any{"x@example.org", "kept"}, "date": "2026-11-22"}},
		{Kind: "slot.signed", At: at.Add(time.Second), Slot: 0, ActorKind: "signer", Data: map[string]any{"accessToken": "eyJ...", "linkJti": "j1", "fields": 2.0}},
	}
	b, head, err := evidenceBundle(events)
	if err != nil {
		t.Fatal(err)
	}
	got, n, err := evidence.Verify(bytes.NewReader(b))
	if err != nil || got != head || n != 2 {
		t.Fatalf("verify: head %s (want %s), %d lines, %v", got, head, n, err)
	}
	text := string(b)
	for _, banned := range []string{"@", "7700", "918273", "eyJ", "j1", "phone", "otpCode", "accessToken"} {
		if strings.Contains(text, banned) {
			t.Errorf("bundle contains %q:\n%s", banned, text)
		}
	}
	for _, kept := range []string{`"channel":"sms"`, `"emailHash":"ab12"`, `"ip":"198.51.100.4"`, `"kept"`, `"date":"2026-11-22"`, `"fields":2`, `"actorKind":"signer"`} {
		if !strings.Contains(text, kept) {
			t.Errorf("bundle lacks %s:\n%s", kept, text)
		}
	}
}
