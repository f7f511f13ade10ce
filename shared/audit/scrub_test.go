package audit

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestScrubCutsTheStringEverywhere(t *testing.T) {
	t.Parallel()
	const h = "5f2a9c"
	e, err := Entity("p", Record{Kind: "slot.signed", At: time.Now(), Slot: 0, ActorKind: "signer", IP: "198.51.100.7",
		UserAgent: "UA " + h, EmailHash: h, Data: map[string]any{
			"emailHash": h, "ip": "198.51.100.7", "n": 12345678901234567,
			"nested": map[string]any{"list": []any{"x" + h + "y", 1.5, true, nil}, "k" + h: "<&>"},
		}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	set, err := Scrub(e, h)
	if err != nil {
		t.Fatal(err)
	}
	if len(set) != 3 || set["emailHash"] != "" || set["userAgent"] != "UA " {
		t.Fatalf("merge %v", set)
	}
	for k, v := range set {
		e.Props[k] = v
	}
	for k, v := range e.Props {
		if s, ok := v.(string); ok && strings.Contains(s, h) {
			t.Fatalf("%s still holds the string: %q", k, s)
		}
	}
	r, err := FromEntity(e)
	if err != nil {
		t.Fatal(err)
	}
	nested := r.Data["nested"].(map[string]any)
	if r.Data["emailHash"] != "" || r.Data["ip"] != "198.51.100.7" || r.Data["n"] != 12345678901234567.0 ||
		nested["list"].([]any)[0] != "xy" || nested["k"] != "<&>" || r.IP != "198.51.100.7" || r.Kind != "slot.signed" {
		t.Fatalf("scrubbed row reads back as %+v", r)
	}
	if !strings.Contains(e.Props["data"].(string), `"n":12345678901234567`) {
		t.Fatalf("a number lost its text: %s", e.Props["data"])
	}

	if set, err := Scrub(e, h); err != nil || set != nil {
		t.Fatalf("scrubbing twice: %v %v", set, err)
	}
	if set, err := Scrub(e, ""); err != nil || set != nil {
		t.Fatalf("empty string: %v %v", set, err)
	}
	e.Props["data"] = `{"a":"` + h
	if _, err := Scrub(e, h); !errors.Is(err, ErrCorrupt) || strings.Contains(err.Error(), h) {
		t.Fatalf("corrupt data: %v", err)
	}
}
