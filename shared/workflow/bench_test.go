package workflow

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// BenchmarkWorkflowAdvance: the final advance of a 5-step, 50-field schema with 20 rules
// (every field checked, every rule run), the measure of the validator's cost.
func BenchmarkWorkflowAdvance(b *testing.B) {
	var y strings.Builder
	y.WriteString("steps:\n")
	data := map[string]any{}
	for s := range 5 {
		fmt.Fprintf(&y, "  - id: s%d\n    fields:\n", s)
		for f := range 10 {
			k := fmt.Sprintf("f%d_%d", s, f)
			switch f % 3 {
			case 0:
				fmt.Fprintf(&y, "      - {key: %s, type: number, required: true, min: 0, max: 1000}\n", k)
				data[k] = float64(f * 10)
			case 1:
				fmt.Fprintf(&y, "      - {key: %s, type: string, required: true, maxLength: 100, pattern: '[A-Za-z ]+'}\n", k)
				data[k] = "Some text"
			default:
				fmt.Fprintf(&y, "      - {key: %s, type: date}\n", k)
				data[k] = "2026-05-01"
			}
		}
	}
	y.WriteString("rules:\n")
	for r := range 20 {
		s := r % 5
		fmt.Fprintf(&y, "  - {id: r%d, expr: \"data.f%d_0 + data.f%d_3 <= 1000 && size(data.f%d_1) > 2\", fieldKey: f%d_0}\n", r, s, s, s, s)
	}
	sc, err := ParseSchema("s", []byte(y.String()))
	if err != nil {
		b.Fatal(err)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	base := &Workflow{ID: "wf"}
	if _, err := Create(base, sc, data, now); err != nil {
		b.Fatal(err)
	}
	base.Step = 4
	b.ReportAllocs()
	for b.Loop() {
		w := *base
		if _, err := w.Advance(sc, now); err != nil || w.State != StatePendingApproval && w.State != StateSealing {
			b.Fatalf("%v %s %+v", err, w.State, w.Results)
		}
	}
}
