package workflow

import (
	"os"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
)

// FuzzParseSchema: any bytes give a schema or a 400 schema_invalid naming schema.yaml, never a
// panic; a schema it gives validates any data without panicking.
func FuzzParseSchema(f *testing.F) {
	raw, err := os.ReadFile("testdata/supplier.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw)
	f.Add([]byte("steps:\n  - id: a\n    fields:\n      - {key: x, type: integer, min: 1}\nrules:\n  - {id: r, expr: 'data.x < 3'}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseSchema("schemaPath", b)
		if err != nil {
			e, ok := apperr.As(err)
			if !ok || e.Code != CodeSchemaInvalid || e.Kind != apperr.KindInvalid || len(e.Fields) != 1 {
				t.Fatalf("err = %#v", err)
			}
			return
		}
		if len(s.Steps) == 0 || len(s.Steps) > 50 || len(s.Fields) > 500 || len(s.Stages) > 10 {
			t.Fatalf("limits broken: %d steps, %d fields, %d stages", len(s.Steps), len(s.Fields), len(s.Stages))
		}
		data := map[string]any{}
		for i, fd := range s.Fields {
			data[fd.Key] = []any{"x", 1.5, true, nil, "2026-01-01"}[i%5]
		}
		s.Validate(data, time.Unix(0, 0))
		_ = s.FirstFailingStep(s.Validate(map[string]any{}, time.Unix(0, 0)))
		for i := range s.Steps {
			_ = s.ValidateStep(i, data)
		}
	})
}
