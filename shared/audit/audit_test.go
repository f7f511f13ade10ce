package audit

import (
	"errors"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/esign-svc/esign/shared/apperr"
)

func TestRoundTripAndOrder(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 22, 10, 0, 0, 123456789, time.UTC)
	r := Record{Kind: "slot.signed", At: at, Slot: 2, ActorKind: "signer", ActorID: "sid", IP: "198.51.100.1",
		UserAgent: "UA", EmailHash: "abc", Data: map[string]any{"n": 1.0}}
	e, err := Entity("p", r, 3)
	if err != nil {
		t.Fatal(err)
	}
	got, err := FromEntity(e)
	if err != nil {
		t.Fatal(err)
	}
	r.Seq = e.RowKey
	if d := cmp.Diff(r, got); d != "" {
		t.Fatalf("round trip (-want +got):\n%s", d)
	}
	var keys []string
	for i, at := range []time.Time{at.Add(time.Nanosecond), at, at} {
		keys = append(keys, Key(at, 2-i))
	}
	sorted := append([]string(nil), keys...)
	sort.Strings(sorted)
	if sorted[0] != keys[2] || sorted[1] != keys[1] || sorted[2] != keys[0] {
		t.Fatalf("keys do not sort by time then seq: %v", sorted)
	}
	if FromNanos(Nanos(time.Time{})) != (time.Time{}) || FromNanos(Nanos(at)) != at {
		t.Fatal("nanos round trip")
	}
}

func TestCorruptDataIsAnError(t *testing.T) {
	t.Parallel()
	e, err := Entity("p", Record{Kind: "slot.signed", At: time.Now(), Slot: 0, Data: map[string]any{"a": "b"}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{`{"a":`, `[1]`, `"text"`} {
		e.Props["data"] = bad
		_, err := FromEntity(e)
		if !errors.Is(err, ErrCorrupt) || apperr.KindOf(err) != apperr.KindInternal {
			t.Fatalf("data %q: err %v, want ErrCorrupt", bad, err)
		}
		if strings.Contains(err.Error(), bad) {
			t.Fatalf("the error repeats the row's content: %v", err)
		}
	}
}
