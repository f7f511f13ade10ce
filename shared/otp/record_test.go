package otp

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestRecordRoundTrip(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 23, 10, 0, 0, 123, time.UTC)
	for _, s := range []State{{}, {Channel: "email", Destination: "a***@example.com", CodeHash: "h", SentAt: at,
		ExpiresAt: at.Add(10 * time.Minute), Attempts: 2, Locks: 1, Blocked: true, VerifiedAt: at.Add(time.Minute), VerifiedGen: 1}} {
		b, err := json.Marshal(s.Stored())
		if err != nil {
			t.Fatal(err)
		}
		var r Record
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(s, r.State()); d != "" {
			t.Fatalf("round trip (-want +got):\n%s", d)
		}
	}
	if b, _ := json.Marshal(State{}.Stored()); string(b) != "{}" {
		t.Fatalf("an empty record is stored as %s", b)
	}
}
