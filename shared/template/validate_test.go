package template

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
)

// now is a fixed instant: the sample's start-in-future rule compares against it.
var now = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

func record(t testing.TB, js string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(js))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

const validOffer = `{"employeeName":"Ana Lima","employeeEmail":"ana@example.com","employeePhone":"+4915112345678",
	"position":"Engineer","salary":85000.50,"currency":"EUR","startDate":"2026-04-01","remote":false,
	"notes":"Line one\nLine two","managerName":"Bo"}`

func summary(rs []Result) string {
	var out []string
	for _, r := range rs {
		out = append(out, fmt.Sprintf("%s/%s/%s", r.Severity, r.RuleID, r.FieldKey))
	}
	return strings.Join(out, " ")
}

func TestValidateSample(t *testing.T) {
	t.Parallel()
	pkg := sample(t)
	with := func(change string) string { // validOffer with some keys replaced or removed
		m := record(t, validOffer)
		for k, v := range record(t, change) {
			if v == "-" {
				delete(m, k)
			} else {
				m[k] = v
			}
		}
		b, _ := json.Marshal(m)
		return string(b)
	}
	cases := []struct{ name, record, want string }{
		{"valid", validOffer, ""},
		{"valid, optional keys absent", with(`{"employeePhone":"-","remote":"-","notes":"-","managerName":"-"}`), ""},
		{"optional key null", with(`{"managerName":null}`), ""},
		{"integer salary", with(`{"salary":100000}`), ""},
		{"salary at the cap", with(`{"salary":1000000}`), ""},
		{"salary with exponent", with(`{"salary":1.5e5}`), ""},
		{"start in the past is a warning", with(`{"startDate":"2025-12-31"}`), "warning/start-in-future/startDate"},
		{"remote without notes is an info", with(`{"remote":true,"notes":"-"}`), "info/notes-for-remote/notes"},
		{"remote with notes", with(`{"remote":true}`), ""},
		{"salary over the cap is an error", with(`{"salary":1000000.01}`), "error/salary-cap/salary"},
		{"all three rules", with(`{"salary":2000000,"startDate":"2020-01-01","remote":true,"notes":""}`),
			"warning/start-in-future/startDate error/salary-cap/salary info/notes-for-remote/notes"},
		{"missing required", with(`{"employeeName":"-","currency":null}`), "error/field.required/employeeName error/field.required/currency"},
		{"unknown keys", with(`{"zeta":1,"alpha":"x"}`), "error/field.unknown/alpha error/field.unknown/zeta"},
		{"name too long", with(`{"employeeName":"` + strings.Repeat("é", 121) + `"}`), "error/field.maxLength/employeeName"},
		{"name of 120 characters", with(`{"employeeName":"` + strings.Repeat("é", 120) + `"}`), ""},
		{"name on two lines", with(`{"employeeName":"a\nb"}`), "error/field.format/employeeName"},
		{"name with bidi override", with(`{"employeeName":"a\u202eb"}`), "error/field.format/employeeName"},
		{"notes may hold lines but no tab", with(`{"notes":"a\tb"}`), "error/field.format/notes"},
		{"name not a string", with(`{"employeeName":5}`), "error/field.type/employeeName"},
		{"bad e-mail", with(`{"employeeEmail":"Ana <ana@example.com>"}`), "error/field.format/employeeEmail"},
		{"bad phone", with(`{"employeePhone":"0151 1234"}`), "error/field.format/employeePhone"},
		{"salary a string", with(`{"salary":"85000"}`), "error/field.type/salary"},
		{"salary negative", with(`{"salary":-1}`), "error/field.min/salary"},
		{"salary overflows", with(`{"salary":1e400}`), "error/field.type/salary"},
		{"currency not an option", with(`{"currency":"CHF"}`), "error/field.options/currency"},
		{"date not a date", with(`{"startDate":"2026-02-30"}`), "error/field.format/startDate"},
		{"date with time", with(`{"startDate":"2026-04-01T00:00:00Z"}`), "error/field.format/startDate"},
		{"remote a string", with(`{"remote":"yes"}`), "error/field.type/remote"},
		{"notes too long", with(`{"notes":"` + strings.Repeat("x", 2001) + `"}`), "error/field.maxLength/notes"},
		{"field errors skip the rules", with(`{"salary":5000000,"employeeName":"-"}`), "error/field.required/employeeName"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := summary(pkg.Validate(record(t, c.record), now)); got != c.want {
				t.Errorf("results = %q, want %q", got, c.want)
			}
		})
	}
}

// TestValidateAll: spec 001 validationResults[] lists every rule, passed or not, with passed,
// severity, message and fieldKey; Validate keeps listing the failures only, and only a failed
// error blocks (Errors, Blocks).
func TestValidateAll(t *testing.T) {
	t.Parallel()
	pkg := sample(t)
	status := func(rs []Result) string {
		var out []string
		for _, r := range rs {
			out = append(out, fmt.Sprintf("%s/%s/%s/%t", r.Severity, r.RuleID, r.FieldKey, r.Passed))
		}
		return strings.Join(out, " ")
	}
	all := pkg.ValidateAll(record(t, validOffer), now)
	if got, want := status(all), "warning/start-in-future/startDate/true error/salary-cap/salary/true info/notes-for-remote/notes/true"; got != want {
		t.Fatalf("results = %q, want %q", got, want)
	}
	if all[1].Message == "" || Errors("record", all) != nil || len(pkg.Validate(record(t, validOffer), now)) != 0 {
		t.Fatalf("passed rules: %+v", all)
	}
	over := record(t, strings.Replace(validOffer, "85000.50", "2000000", 1))
	all = pkg.ValidateAll(over, now)
	if got, want := status(all), "warning/start-in-future/startDate/true error/salary-cap/salary/false info/notes-for-remote/notes/true"; got != want {
		t.Fatalf("results = %q, want %q", got, want)
	}
	if e, ok := apperr.As(Errors("record", all)); !ok || len(e.Fields) != 1 || e.Fields[0].Field != "record.salary" || !all[1].Blocks() || all[0].Blocks() {
		t.Fatalf("errors of %+v", all)
	}
	b, _ := json.Marshal(all[0])
	if !strings.Contains(string(b), `"passed":true`) {
		t.Fatalf("json %s", b)
	}
	b, _ = json.Marshal(all[1])
	if !strings.Contains(string(b), `"passed":false`) {
		t.Fatalf("json %s", b)
	}
	// field failures: the rules do not run, so none is listed
	if got := status(pkg.ValidateAll(record(t, `{"employeeName":5}`), now)); !strings.HasPrefix(got, "error/field.type/employeeName/false") || strings.Contains(got, "salary-cap") {
		t.Fatalf("results = %q", got)
	}
}

func TestValidatePlainDecodedRecord(t *testing.T) {
	t.Parallel()
	pkg := sample(t)
	var m map[string]any // float64 numbers, as json.Unmarshal gives them
	if err := json.Unmarshal([]byte(validOffer), &m); err != nil {
		t.Fatal(err)
	}
	if rs := pkg.Validate(m, now); len(rs) != 0 {
		t.Errorf("results = %+v", rs)
	}
	m["salary"] = float64(1_000_001)
	if got := summary(pkg.Validate(m, now)); got != "error/salary-cap/salary" {
		t.Errorf("results = %s", got)
	}
	if rs := pkg.Validate(nil, now); summary(rs) != "error/field.required/employeeName error/field.required/employeeEmail error/field.required/position error/field.required/salary error/field.required/currency error/field.required/startDate" {
		t.Errorf("nil record: %s", summary(rs))
	}
}

func parseYAMLPackage(t testing.TB, y string) *Package {
	t.Helper()
	pkg, err := Parse("templatePath", map[string][]byte{FileYAML: []byte(y), FilePDF: fakePDF})
	if err != nil {
		t.Fatal(err)
	}
	return pkg
}

func TestValidateTypesAndLimits(t *testing.T) {
	t.Parallel()
	pkg := parseYAMLPackage(t, `name: n
version: 1
fields:
  - {key: count, type: integer, min: 1, max: 10}
  - {key: code, type: string, pattern: '[A-Z]{3}', minLength: 3}
  - {key: ratio, type: number, max: 1.5}
rules:
  - {id: int-math, expr: "record.count * 2 <= 20 && record.count + 1 > 1", severity: error}
  - {id: double-math, expr: "!has(record.ratio) || record.ratio * 2.0 <= 3.0 && record.ratio <= 2", severity: warning}
  - {id: missing-key, expr: "record.code == 'ABC' || record.ratio > 0.0", severity: info, message: m}
`)
	cases := []struct{ record, want string }{
		{`{"count":3,"code":"ABC","ratio":0.5}`, ""},
		{`{"count":3.0,"code":"ABC"}`, ""},
		{`{"count":3.5,"code":"ABC"}`, "error/field.type/count"},
		{`{"count":0,"code":"ABC"}`, "error/field.min/count"},
		{`{"count":11,"code":"ABC"}`, "error/field.max/count"},
		{`{"count":1e300,"code":"ABC"}`, "error/field.type/count"},
		{`{"count":2,"code":"AB"}`, "error/field.minLength/code"},
		{`{"count":2,"code":"abc"}`, "error/field.pattern/code"},
		{`{"count":2,"code":"ABCD"}`, "error/field.pattern/code"},
		{`{"count":2,"code":"ABC","ratio":1.6}`, "error/field.max/ratio"},
		// code is not ABC and ratio is absent: the rule cannot be evaluated, and fails as an info
		{`{"count":2,"code":"XYZ"}`, "info/missing-key/"},
	}
	for _, c := range cases {
		if got := summary(pkg.Validate(record(t, c.record), now)); got != c.want {
			t.Errorf("%s: results = %q, want %q", c.record, got, c.want)
		}
	}
	rs := pkg.Validate(record(t, `{"count":2,"code":"XYZ"}`), now)
	if !strings.HasPrefix(rs[0].Message, "the rule could not be evaluated on this record: ") || !strings.Contains(rs[0].Message, "no such key") {
		t.Errorf("message = %q", rs[0].Message)
	}
}

func TestValidateCostLimit(t *testing.T) {
	t.Parallel()
	list := "[" + strings.Repeat("1,", 49) + "1]" // 50 items: 50^4 steps is far beyond the limit
	pkg := parseYAMLPackage(t, fmt.Sprintf(`name: n
version: 1
fields: [{key: a, type: integer}]
rules:
  - id: runaway
    expr: "%[1]s.all(w, %[1]s.all(x, %[1]s.all(y, %[1]s.all(z, w + x + y + z > record.a))))"
    severity: warning
    fieldKey: a
`, list))
	rs := pkg.Validate(map[string]any{"a": json.Number("0")}, now)
	if summary(rs) != "warning/runaway/a" || !strings.Contains(rs[0].Message, "cost limit exceeded") {
		t.Errorf("results = %+v", rs)
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	if err := Errors("dataSource", []Result{{RuleID: "r", Severity: SeverityWarning, Message: "w"}}); err != nil {
		t.Errorf("warnings only: %v", err)
	}
	err := Errors("dataSource[2]", []Result{
		{RuleID: "field.required", FieldKey: "employeeName", Severity: SeverityError, Message: "is required"},
		{RuleID: "w", Severity: SeverityInfo, Message: "i"},
		{RuleID: "global", Severity: SeverityError, Message: "no"},
	})
	e, ok := apperr.As(err)
	if !ok || e.Code != "record_invalid" || e.Kind != apperr.KindInvalid || len(e.Fields) != 2 {
		t.Fatalf("err = %v", err)
	}
	want := []apperr.FieldError{{Field: "dataSource[2].employeeName", Message: "is required", RuleID: "field.required"}, {Field: "dataSource[2]", Message: "no", RuleID: "global"}}
	for i := range want {
		if e.Fields[i] != want[i] {
			t.Errorf("field %d = %+v, want %+v", i, e.Fields[i], want[i])
		}
	}
}

func TestTextAndExpand(t *testing.T) {
	t.Parallel()
	pkg := sample(t)
	m := record(t, `{"employeeName":"Ana Lima","salary":85000.50,"big":1e21,"small":1.5E-3,"remote":true,"whole":85000,"nul":null}`)
	m["plain"] = float64(1e21)
	m["int"] = 42
	for key, want := range map[string]string{"employeeName": "Ana Lima", "salary": "85000.50", "big": "1000000000000000000000",
		"small": "0.0015", "remote": "true", "whole": "85000", "nul": "", "absent": "", "plain": "1000000000000000000000", "int": "42"} {
		if got := pkg.Text(m, key); got != want {
			t.Errorf("Text(%s) = %q, want %q", key, got, want)
		}
	}
	text := func(k string) string { return pkg.Text(m, k) }
	for tmpl, want := range map[string]string{
		"Offer for {{employeeName}}":        "Offer for Ana Lima",
		"{{ employeeName }}/{{salary}}":     "Ana Lima/85000.50",
		"{{unknown}}x{{ }}y":                "xy",
		"no tokens {single} {BATCHID_1}":    "no tokens {single} {BATCHID_1}",
		"{{employeeName":                    "{{employeeName",
		"{{{employeeName}}}":                "{Ana Lima}",
		"OFFER-{{employeeName}}-{{remote}}": "OFFER-Ana Lima-true",
	} {
		if got := Expand(tmpl, text); got != want {
			t.Errorf("Expand(%q) = %q, want %q", tmpl, got, want)
		}
	}
}

func TestMerge(t *testing.T) {
	t.Parallel()
	pkg := sample(t)
	s, err := pkg.Merge("templateSettings", nil)
	if err != nil || s.ESign.SigningMode != "sequential" || s.ESign.OrganizationName != "Example Corp" || s.ESign.Enabled || *s.Delivery.ExpiresInHours != 168 {
		t.Fatalf("no override: %+v %v", s, err)
	}
	s, err = pkg.Merge("templateSettings", json.RawMessage(`{
		"esign": {"enabled": true, "signingMode": "parallel", "signers": [{"slotIndex": 0, "role": "employee", "email": "e@example.com"}]},
		"delivery": {"expiresInHours": null, "recipients": [{"email": "r@example.com"}]},
		"distribution": {"approversEmail": ["a@example.com", "b@example.com"]}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	// esign: enabled and signingMode and signers from the request, organizationName kept
	if !s.ESign.Enabled || s.ESign.SigningMode != "parallel" || s.ESign.OrganizationName != "Example Corp" || len(s.ESign.Signers) != 1 || *s.ESign.Signers[0].SlotIndex != 0 {
		t.Errorf("esign = %+v", s.ESign)
	}
	// delivery: mode kept, expiresInHours cleared by null, recipients added
	if s.Delivery.Mode != "secure-email" || s.Delivery.ExpiresInHours != nil || s.Delivery.Recipients[0].Email != "r@example.com" {
		t.Errorf("delivery = %+v", s.Delivery)
	}
	if strings.Join(s.Distribution.ApproversEmail, ";") != "a@example.com;b@example.com" || s.Workflow != nil {
		t.Errorf("distribution = %+v, workflow = %+v", s.Distribution, s.Workflow)
	}
	// the package's defaults are not changed by a merge
	if s2, _ := pkg.Merge("templateSettings", json.RawMessage(`null`)); s2.ESign.SigningMode != "sequential" || s2.ESign.Enabled || *s2.Delivery.ExpiresInHours != 168 {
		t.Errorf("defaults changed: %+v %+v", s2.ESign, s2.Delivery)
	}
	if s, err := pkg.Merge("templateSettings", json.RawMessage(`{"esign": null}`)); err != nil || s.ESign != nil || s.Delivery == nil {
		t.Errorf("esign cleared: %+v %v", s, err)
	}
}

// TestMergeLocked: a request that overrides a key the template locks (DESIGN 14) is 403
// template_locked naming the key's full path; the other keys of the block stay open.
func TestMergeLocked(t *testing.T) {
	t.Parallel()
	y := string(sampleYAML(t)) + "locked: [distribution.requireApproval, workflow.schemaPath, workflow.requireOtp]\n" +
		"workflow:\n  schemaPath: templates/t/s.yaml\n  requireOtp: true\n"
	pkg, err := Parse("templatePath", map[string][]byte{FileYAML: []byte(y), FilePDF: fakePDF})
	if err != nil {
		t.Fatal(err)
	}
	if !pkg.IsLocked("workflow.schemaPath") || pkg.IsLocked("esign.enabled") {
		t.Fatalf("locked = %v", pkg.Locked)
	}
	for body, field := range map[string]string{
		`{"distribution": {"requireApproval": false}}`:           "templateSettings.distribution.requireApproval",
		`{"workflow": {"schemaPath": "templates/t/other.yaml"}}`: "templateSettings.workflow.schemaPath",
		`{"workflow": {"requireOtp": false}}`:                    "templateSettings.workflow.requireOtp",
		`{"workflow": {"requireOtp": null}}`:                     "templateSettings.workflow.requireOtp",
		`{"workflow": null}`:                                     "templateSettings.workflow.schemaPath",
	} {
		_, err := pkg.Merge("templateSettings", json.RawMessage(body))
		e, ok := apperr.As(err)
		if !ok || e.Code != CodeTemplateLocked || e.Kind != apperr.KindForbidden || len(e.Fields) != 1 || e.Fields[0].Field != field {
			t.Errorf("%s: err = %v %+v", body, err, e)
		}
	}
	s, err := pkg.Merge("templateSettings", json.RawMessage(`{"workflow": {"message": "Hello"}, "distribution": {"approversEmail": "a@example.com"}}`))
	if err != nil || s.Workflow.SchemaPath != "templates/t/s.yaml" || s.Workflow.Message != "Hello" {
		t.Fatalf("an open key of a locked block: %+v %v", s.Workflow, err)
	}
}

func TestMergeRefuses(t *testing.T) {
	t.Parallel()
	pkg := sample(t)
	cases := []struct{ body, field, msg string }{
		{`{"esign": {"signers": [{"role": "a", "email": 5}]}}`, "templateSettings.esign.signers[0].email", "must be a string, not a number"},
		{`{"esign": {"signers": [{"role": "a", "colour": "red"}]}}`, "templateSettings.esign.signers[0].colour", "is not a known key"},
		{`{"esign": {"enabled": "true"}}`, "templateSettings.esign.enabled", "must be a boolean, not a string"},
		{`{"esign": {"expiresInMinutes": 1.5}}`, "templateSettings.esign.expiresInMinutes", "must be an integer"},
		{`{"esign": "yes"}`, "templateSettings.esign", "must be an object, not a string"},
		{`{"colour": {}}`, "templateSettings.colour", "is not a known key"},
		{`[1]`, "templateSettings", "must be an object"},
		{`{"esign": {"enabled": true, "enabled": false}}`, "templateSettings.esign.enabled", "is given twice"},
		{`{"delivery": {"sharePointTarget": {"siteUrl": "u", "x": 1}}}`, "templateSettings.delivery.sharePointTarget.x", "is not a known key"},
		{`{"distribution": {"deliveryConfig": {"expiresInHours": "1"}}}`, "templateSettings.distribution.deliveryConfig.expiresInHours", "must be a number, not a string"},
		{`{"workflow": {"recipients": {}}}`, "templateSettings.workflow.recipients", "must be a list, not an object"},
		{`{"esign": `, "templateSettings.esign", "is not valid JSON"},
		{`{} {}`, "templateSettings", "must be one JSON value"},
		{strings.Repeat(`{"esign":`, 40) + "1" + strings.Repeat("}", 40), "templateSettings", "is nested too deeply"},
	}
	for _, c := range cases {
		_, err := pkg.Merge("templateSettings", json.RawMessage(c.body))
		e, ok := apperr.As(err)
		if !ok || e.Code != apperr.CodeInvalidRequest || len(e.Fields) != 1 {
			t.Errorf("%s: err = %v", c.body, err)
			continue
		}
		if f := e.Fields[0]; !strings.HasPrefix(f.Field, c.field) || f.Message != c.msg {
			t.Errorf("%s: %+v, want %s: %s", c.body, f, c.field, c.msg)
		}
	}
}

func BenchmarkValidate(b *testing.B) {
	pkg := sample(b)
	dec := json.NewDecoder(bytes.NewReader([]byte(validOffer)))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if rs := pkg.Validate(m, now); len(rs) != 0 {
			b.Fatal(rs)
		}
	}
}
