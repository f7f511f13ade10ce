package workflow

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/template"
)

func supplier(t testing.TB) *Schema {
	t.Helper()
	raw, err := os.ReadFile("testdata/supplier.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := ParseSchema("templateSettings.workflow.schemaPath", raw)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestParseSchema(t *testing.T) {
	t.Parallel()
	s := supplier(t)
	if s.Title != "Supplier onboarding" || len(s.Steps) != 2 || len(s.Fields) != 4 || len(s.Rules) != 2 || len(s.Stages) != 2 {
		t.Fatalf("schema = %+v", s.WorkflowSchema)
	}
	if st := s.Steps[1]; st.ID != "contact" || st.First != 2 || st.Count != 2 {
		t.Fatalf("step 1 = %+v", st)
	}
	if f := s.StepFields(0)[1]; f.Key != "annualSpend" || f.Help != "In euros" || f.Label != "Annual spend" {
		t.Fatalf("field = %+v", f)
	}
	if got := s.Stages[0].Approvers; len(got) != 2 || got[1] != "cfo@example.com" {
		t.Fatalf("approvers = %v", got)
	}
}

func TestParseSchemaErrors(t *testing.T) {
	t.Parallel()
	step := "steps:\n  - id: a\n    fields:\n      - {key: x, type: number}\n"
	cases := []struct{ name, yaml, want string }{
		{"empty", "", "schema.yaml:1: is empty"},
		{"not a mapping", "- a\n", "schema.yaml:1:1: must be a mapping"},
		{"unknown top key", "title: T\ncolour: red\n" + step, `schema.yaml:2:1: unknown key "colour"`},
		{"no steps", "title: T\n", "schema.yaml:1:1: steps: at least one step is required"},
		{"empty steps", "steps: []\n", "schema.yaml:1:8: steps: at least one step is required"},
		{"unknown step key", "steps:\n  - {id: a, colour: red}\n", `schema.yaml:2:13: unknown key "colour" in steps[0]`},
		{"step without id", "steps:\n  - {title: A}\n", "schema.yaml:2:5: steps[0]: id is required"},
		{"duplicate step id", "steps:\n  - {id: a}\n  - {id: a}\n", "schema.yaml:3:10: steps[1].id: repeats the id of steps[0]"},
		{"unknown field key", "steps:\n  - id: a\n    fields:\n      - {key: x, type: string, colour: red}\n", `schema.yaml:4:32: unknown key "colour" in steps[0].fields[0]`},
		{"field key repeated across steps", step + "  - id: b\n    fields:\n      - {key: x, type: string}\n", "schema.yaml:7:15: steps[1].fields[0].key: repeats the key of steps[0].fields[0]"},
		{"bad field type", "steps:\n  - id: a\n    fields:\n      - {key: x, type: money}\n", "schema.yaml:4:24: steps[0].fields[0].type: must be one of"},
		{"min on string", "steps:\n  - id: a\n    fields:\n      - {key: x, type: string, min: 1}\n", "steps[0].fields[0].min: applies only to number and integer fields"},
		{"rule over record", step + "rules:\n  - {id: r, expr: 'record.x > 1'}\n", "rules[0].expr: does not compile"},
		{"rule names no field", step + "rules:\n  - {id: r, expr: 'data.y > 1'}\n", "schema.yaml:6:19: rules[0].expr: data.y names no field"},
		{"rule fieldKey names no field", step + "rules:\n  - {id: r, expr: 'data.x > 1', fieldKey: y}\n", "schema.yaml:6:43: rules[0].fieldKey: names no field"},
		{"approval not a mapping", step + "approval: [a]\n", "schema.yaml:5:11: approval: must be a mapping of stages"},
		{"unknown approval key", step + "approval: {mode: any}\n", `schema.yaml:5:12: unknown key "mode" in approval`},
		{"stage without approvers", step + "approval:\n  stages:\n    - {name: F}\n", "schema.yaml:7:7: approval.stages[0]: at least one approver is required"},
		{"approver not an address", step + "approval:\n  stages:\n    - {name: F, approvers: [Finance <f@example.com>]}\n", "schema.yaml:7:29: approval.stages[0].approvers[0]: must be a plain e-mail address"},
		{"approver twice", step + "approval:\n  stages:\n    - {name: F, approvers: [f@example.com, F@example.com]}\n", "approval.stages[0].approvers[1]: must be a plain e-mail address (name@example.com), given once"},
		{"too many stages", step + "approval:\n  stages:\n" + strings.Repeat("    - {name: F, approvers: [f@example.com]}\n", 11), "approval.stages: holds more than 10 approval.stages"},
		{"too many approvers", step + "approval:\n  stages:\n    - {name: F, approvers: [" + strings.Repeat("a@example.com, ", 20) + "a@example.com]}\n", "approval.stages[0].approvers: holds more than 20 approvers"},
		{"too many steps", "steps:\n" + strings.Repeat("  - {id: a}\n", 51), "steps: holds more than 50 steps"},
		{"governance not a boolean", "governance: maybe\n" + step, "schema.yaml:1:13: governance: must be a boolean, not a string"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseSchema("schemaPath", []byte(c.yaml))
			e, ok := apperr.As(err)
			if !ok || e.Code != CodeSchemaInvalid || e.Kind != apperr.KindInvalid || len(e.Fields) != 1 || e.Fields[0].Field != "schemaPath" {
				t.Fatalf("err = %#v", err)
			}
			if !strings.Contains(e.Fields[0].Message, c.want) {
				t.Fatalf("message = %q, want it to contain %q", e.Fields[0].Message, c.want)
			}
		})
	}
}

func TestParseSchemaFieldLimit(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("steps:\n")
	for s := range 2 {
		b.WriteString("  - id: s" + string(rune('a'+s)) + "\n    fields:\n")
		for f := range 250 {
			b.WriteString("      - {key: f" + string(rune('a'+s)) + strconv.Itoa(f) + ", type: string}\n")
		}
	}
	if _, err := ParseSchema("s", []byte(b.String())); err != nil {
		t.Fatalf("500 fields: %v", err)
	}
	b.WriteString("  - id: sc\n    fields:\n      - {key: extra, type: string}\n")
	_, err := ParseSchema("s", []byte(b.String()))
	if e, ok := apperr.As(err); !ok || !strings.Contains(e.Fields[0].Message, "steps[2].fields: brings the fields of all steps to more than 500") {
		t.Fatalf("501 fields: %v", err)
	}
}

func TestValidateStep(t *testing.T) {
	t.Parallel()
	s := supplier(t)
	if err := s.ValidateStep(0, map[string]any{"companyName": "Acme", "annualSpend": 5.0}); err != nil {
		t.Fatal(err)
	}
	if err := s.ValidateStep(0, map[string]any{"companyName": nil}); err != nil {
		t.Fatalf("a null clears: %v", err)
	}
	err := s.ValidateStep(0, map[string]any{"annualSpend": -1.0, "contactEmail": "a@example.com", "nope": 1})
	e, ok := apperr.As(err)
	if !ok || e.Kind != apperr.KindInvalid || len(e.Fields) != 3 {
		t.Fatalf("err = %#v", err)
	}
	want := []string{"data.annualSpend", "data.contactEmail", "data.nope"}
	for i, f := range e.Fields {
		if f.Field != want[i] {
			t.Fatalf("field %d = %+v, want %s", i, f, want[i])
		}
	}
	for _, i := range []int{-1, 2} {
		if e, ok := apperr.As(s.ValidateStep(i, nil)); !ok || e.Code != CodeInvalidStep || e.Fields[0].Field != "stepIndex" {
			t.Fatalf("step %d: %v", i, e)
		}
	}
}

func TestValidateAndFirstFailingStep(t *testing.T) {
	t.Parallel()
	s := supplier(t)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ok := map[string]any{"companyName": "Acme", "annualSpend": 10.0, "contactEmail": "a@example.com", "startDate": "2026-02-01"}
	// spec 001 validationResults[]: the rules that held are listed too, passed, and block nothing.
	r := s.Validate(ok, now)
	if len(r) != 2 || r[0].RuleID != "spend-cap" || !r[0].Passed || r[0].Severity != template.SeverityError || r[0].FieldKey != "annualSpend" ||
		r[1].RuleID != "soon" || !r[1].Passed || slices.ContainsFunc(r, template.Result.Blocks) || s.FirstFailingStep(r) != 0 {
		t.Fatalf("results = %+v", r)
	}
	spend := map[string]any{"companyName": "Acme", "annualSpend": 200000.0, "contactEmail": "a@example.com", "startDate": "2025-02-01"}
	r = s.Validate(spend, now)
	if len(r) != 2 || r[0].RuleID != "spend-cap" || r[0].Passed || r[1].Severity != template.SeverityWarning || r[1].Passed ||
		!slices.ContainsFunc(r, template.Result.Blocks) || s.FirstFailingStep(r) != 0 {
		t.Fatalf("results = %+v", r)
	}
	// a failed warning with a passed error rule does not block
	if slices.ContainsFunc([]template.Result{{RuleID: "a", Passed: true, Severity: template.SeverityError}, {RuleID: "b", Severity: template.SeverityWarning}}, template.Result.Blocks) {
		t.Fatal("a passed error rule blocks")
	}
	missing := map[string]any{"companyName": "Acme"}
	r = s.Validate(missing, now)
	if len(r) != 1 || r[0].FieldKey != "contactEmail" || s.FirstFailingStep(r) != 1 {
		t.Fatalf("results = %+v, first %d", r, s.FirstFailingStep(r))
	}
	if s.FirstFailingStep([]template.Result{{FieldKey: "startDate", Severity: template.SeverityWarning}}) != 0 {
		t.Fatal("a warning is no failing step")
	}
}

// The sample package's workflow schema (examples/offer/schema.yaml) parses with the package,
// every field of it is one of template.yaml's (so the seal fills them into template.pdf), and
// a record within the band passes where one above it fails the error rule.
func TestExampleOfferSchema(t *testing.T) {
	t.Parallel()
	files := map[string][]byte{}
	for _, name := range []string{template.FileYAML, template.FilePDF, template.FileSchema} {
		b, err := os.ReadFile("../../examples/offer/" + name)
		if err != nil {
			t.Fatal(err)
		}
		files[name] = b
	}
	pkg, err := template.Parse("templatePath", files)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ParseSchema("schema.yaml", files[template.FileSchema])
	if err != nil {
		t.Fatal(err)
	}
	if pkg.Schema == nil || len(s.Steps) != 2 || len(s.Stages) != 2 || !s.Governance {
		t.Fatalf("schema %+v", s.WorkflowSchema)
	}
	known := map[string]bool{}
	for _, f := range pkg.Fields {
		known[f.Key] = true
	}
	for _, f := range s.Fields {
		if !known[f.Key] {
			t.Errorf("schema field %s is not a field of template.yaml", f.Key)
		}
	}
	record := map[string]any{"employeeName": "Ada", "employeeEmail": "ada@example.com", "position": "Engineer",
		"salary": 80000.0, "currency": "EUR", "startDate": "2099-01-04"}
	now := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	if err := template.Errors("data", s.Validate(record, now)); err != nil {
		t.Fatalf("a record within the band: %v", err)
	}
	record["salary"] = 120000.0
	e, ok := apperr.As(template.Errors("data", s.Validate(record, now)))
	if !ok || len(e.Fields) != 1 || e.Fields[0].RuleID != "salary-band" {
		t.Fatalf("a salary above the band: %v", e)
	}
}

// A package's own workflow.schemaPath is relative to the package (DESIGN 6a): a folder's blob,
// a ZIP's own schema.yaml; a templates/ value stays a blob path; one leaving the package is a
// 400 template_invalid naming the package's field.
func TestPackageSchemaPath(t *testing.T) {
	t.Parallel()
	folder := &template.Package{Path: "templates/t1/offer/"}
	zipped := &template.Package{Path: "templates/t1/offer.zip"}
	for _, c := range []struct {
		pkg      *template.Package
		in, want string
	}{
		{folder, "", ""},
		{folder, "schema.yaml", "templates/t1/offer/schema.yaml"},
		{folder, "./forms/../forms/s.yaml", "templates/t1/offer/forms/s.yaml"},
		{folder, "templates/shared/s.yaml", "templates/shared/s.yaml"},
		{zipped, "schema.yaml", ""},
		{zipped, "./schema.yaml", ""},
		{zipped, "templates/t1/s.yaml", "templates/t1/s.yaml"},
	} {
		got, err := PackageSchemaPath("templatePath", c.pkg, c.in)
		if err != nil || got != c.want {
			t.Fatalf("%s %q: %q, %v; want %q", c.pkg.Path, c.in, got, err, c.want)
		}
	}
	for _, c := range []struct {
		pkg *template.Package
		in  string
	}{
		{folder, "../other/schema.yaml"}, {folder, "forms/../../x.yaml"}, {folder, ".."}, {folder, "."},
		{folder, "/templates/t1/s.yaml"}, {folder, `forms\s.yaml`}, {zipped, "forms/s.yaml"}, {zipped, "../schema.yaml"},
	} {
		_, err := PackageSchemaPath("templateId", c.pkg, c.in)
		e, ok := apperr.As(err)
		if !ok || e.Code != template.CodeInvalid || len(e.Fields) != 1 || e.Fields[0].Field != "templateId" {
			t.Fatalf("%s %q: err = %v, want 400 template_invalid at templateId", c.pkg.Path, c.in, err)
		}
	}
}
