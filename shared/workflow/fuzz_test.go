package workflow

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
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

// FuzzSaveStep: any JSON object as a PATCH's data on any step gives a saved step or a 400 whose
// every field is data.<key> (data for an empty key, or stepIndex), never a panic; a refusal changes nothing.
func FuzzSaveStep(f *testing.F) {
	raw, err := os.ReadFile("testdata/supplier.yaml")
	if err != nil {
		f.Fatal(err)
	}
	s, err := ParseSchema("schemaPath", raw)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(0, []byte(`{"companyName":"Acme","annualSpend":12.5}`))
	f.Add(1, []byte(`{"contactEmail":"a@example.com","startDate":"2026-02-30"}`))
	f.Add(0, []byte(`{"annualSpend":"1e400","x":null}`))
	f.Fuzz(func(t *testing.T, step int, body []byte) {
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		var data map[string]any
		if dec.Decode(&data) != nil {
			return
		}
		w := &Workflow{ID: "wf"}
		if _, err := Create(w, s, nil, time.Unix(0, 0)); err != nil {
			t.Fatal(err)
		}
		before := fmt.Sprint(w.Data)
		_, err := w.SaveStep(s, step, data, time.Unix(0, 0))
		if err == nil {
			return
		}
		e, ok := apperr.As(err)
		if !ok || (e.Kind != apperr.KindInvalid && e.Kind != apperr.KindTooLarge) || fmt.Sprint(w.Data) != before {
			t.Fatalf("err = %#v", err)
		}
		for _, fe := range e.Fields {
			if fe.Field != "stepIndex" && fe.Field != "data" && !strings.HasPrefix(fe.Field, "data.") { // "data": an empty key
				t.Fatalf("field %q", fe.Field)
			}
		}
	})
}
