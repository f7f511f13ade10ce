package template

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/esign-svc/esign/shared/apperr"
)

// FuzzParse: any template.yaml is a package or a template_invalid naming a place in the file,
// and a package that parses validates records and merges settings without panicking.
func FuzzParse(f *testing.F) {
	f.Add(sampleYAML(f))
	f.Add([]byte("name: n\nversion: 1\nfields: [{key: a, type: integer, min: 1}]\nrules: [{id: r, expr: 'record.a > 2'}]\n"))
	f.Add([]byte("name: n\nversion: 1\nesign: &a {enabled: true}\ndelivery: *a\n"))
	f.Add([]byte(billionLaughs))
	f.Fuzz(func(t *testing.T, y []byte) {
		pkg, err := Parse("templatePath", map[string][]byte{FileYAML: y, FilePDF: fakePDF})
		if err != nil {
			e, ok := apperr.As(err)
			if !ok || e.Code != CodeInvalid || len(e.Fields) != 1 || !strings.HasPrefix(e.Fields[0].Message, "template.yaml:") {
				t.Fatalf("err = %v", err)
			}
			return
		}
		if pkg.Name == "" || pkg.Version < 1 || len(pkg.programs) != len(pkg.Rules) || len(pkg.patterns) != len(pkg.Fields) && len(pkg.Fields) > 0 {
			t.Fatalf("inconsistent package %+v", pkg)
		}
		rec := map[string]any{}
		for _, fd := range pkg.Fields {
			rec[fd.Key] = "x"
		}
		_ = pkg.Validate(rec, now)
		_ = pkg.Validate(map[string]any{}, now)
		if _, err := pkg.Merge("templateSettings", json.RawMessage(`{"esign":{"enabled":true}}`)); err != nil && apperr.KindOf(err) != apperr.KindInvalid {
			t.Fatalf("merge: %v", err)
		}
	})
}

// FuzzValidate: any JSON object validates against the sample without panicking; every result
// is well formed and Errors agrees with the error results.
func FuzzValidate(f *testing.F) {
	f.Add([]byte(validOffer))
	f.Add([]byte(`{"salary": 1e400, "startDate": "9999-12-31", "remote": true}`))
	f.Add([]byte(`{"employeeName": "\u202e", "currency": ["EUR"], "notes": {"a": 1}}`))
	pkg := sample(f)
	f.Fuzz(func(t *testing.T, js []byte) {
		dec := json.NewDecoder(bytes.NewReader(js))
		dec.UseNumber()
		var rec map[string]any
		if dec.Decode(&rec) != nil {
			return
		}
		rs := pkg.Validate(rec, now)
		errs := 0
		for _, r := range rs {
			switch r.Severity {
			case SeverityError:
				errs++
			case SeverityWarning, SeverityInfo:
			default:
				t.Fatalf("result %+v", r)
			}
			if r.RuleID == "" || r.Message == "" {
				t.Fatalf("result %+v", r)
			}
		}
		err := Errors("dataSource", rs)
		if e, ok := apperr.As(err); (errs == 0) != (err == nil) || err != nil && (!ok || len(e.Fields) != errs) {
			t.Fatalf("Errors = %v for %d error results", err, errs)
		}
	})
}
