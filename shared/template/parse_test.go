package template

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/esign-svc/esign/shared/apperr"
)

// fakePDF is enough of a PDF for Parse, which only checks the header (rendering reads it).
var fakePDF = []byte("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n")

func sampleYAML(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile("../../examples/offer/template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func sample(t testing.TB) *Package {
	t.Helper()
	pkg, err := Parse("templatePath", map[string][]byte{FileYAML: sampleYAML(t), FilePDF: fakePDF})
	if err != nil {
		t.Fatalf("the sample package does not parse: %v", err)
	}
	return pkg
}

func TestParseSample(t *testing.T) {
	t.Parallel()
	pkg := sample(t)
	if pkg.Name != "Offer letter" || pkg.Version != 1 || pkg.Title != "Offer for {{employeeName}}" || pkg.DocumentIDTemplate == "" {
		t.Errorf("header = %q v%d %q %q", pkg.Name, pkg.Version, pkg.Title, pkg.DocumentIDTemplate)
	}
	var keys []string
	for _, f := range pkg.Fields {
		keys = append(keys, f.Key+":"+string(f.Type))
	}
	want := "employeeName:string employeeEmail:email employeePhone:phone position:string salary:number currency:enum startDate:date remote:boolean notes:text managerName:string"
	if got := strings.Join(keys, " "); got != want {
		t.Errorf("fields = %s", got)
	}
	if f := pkg.Fields[0]; !f.Required || f.MaxLength == nil || *f.MaxLength != 120 || f.Label != "Employee name" {
		t.Errorf("employeeName = %+v", f)
	}
	if f := pkg.Fields[4]; f.Min == nil || *f.Min != 0 || f.Max != nil {
		t.Errorf("salary = %+v", f)
	}
	if f := pkg.Fields[5]; strings.Join(f.Options, ",") != "EUR,USD,GBP" {
		t.Errorf("currency options = %v", f.Options)
	}
	if len(pkg.Rules) != 3 || pkg.Rules[0].ID != "start-in-future" || pkg.Rules[0].Severity != SeverityWarning ||
		pkg.Rules[1].Severity != SeverityError || pkg.Rules[2].Severity != SeverityInfo || pkg.Rules[0].FieldKey != "startDate" {
		t.Errorf("rules = %+v", pkg.Rules)
	}
	d := pkg.Defaults
	if d.ESign == nil || d.ESign.SigningMode != "sequential" || d.ESign.OrganizationName != "Example Corp" || d.ESign.Enabled {
		t.Errorf("esign defaults = %+v", d.ESign)
	}
	if d.Delivery == nil || d.Delivery.Mode != "secure-email" || d.Delivery.ExpiresInHours == nil || *d.Delivery.ExpiresInHours != 168 {
		t.Errorf("delivery defaults = %+v", d.Delivery)
	}
	if d.Distribution != nil || d.Workflow != nil {
		t.Errorf("blocks the sample does not set: %+v %+v", d.Distribution, d.Workflow)
	}
	if !strings.HasPrefix(pkg.PDFHash, "sha256:") || len(pkg.PDFHash) != 71 || pkg.Schema != nil {
		t.Errorf("PDFHash %q, schema %v", pkg.PDFHash, pkg.Schema)
	}
}

func TestParseSettingsBlocks(t *testing.T) {
	t.Parallel()
	y := `name: n
version: 2
distribution:
  enabled: true
  mode: combined
  requireApproval: true
  fileNameTemplate: "{{a}}-{BATCHID_1}"
  approversEmail: boss@example.com
  deliveryConfig: {mode: secure-email, expiresInHours: 24}
  zipBundle: false
esign:
  enabled: true
  signers:
    - {slotIndex: 0, role: employee, email: e@example.com, namePrefill: Eve, otpChannel: sms, phoneNumber: "+4915112345678", completionCondition: required}
  expiresInMinutes: 60
  requestedBy: HR
  requestedByEmail: hr@example.com
  sendPerSignerNotices: false
delivery:
  recipients: [{email: r@example.com, name: R, role: hr}]
  requireOtp: true
  message: hello
  requesterOrg: Org
  sharePointTarget: {siteUrl: "https://x.sharepoint.com/sites/a", libraryPath: Docs, folderPath: Offers}
workflow:
  schemaPath: schema.yaml
  recipients: [{email: w@example.com, displayName: W}]
  requireOtp: true
  organizationName: O
  message: M
`
	pkg, err := Parse("templatePath", map[string][]byte{FileYAML: []byte(y), FilePDF: fakePDF, FileSchema: []byte("steps: []\n")})
	if err != nil {
		t.Fatal(err)
	}
	d := pkg.Defaults
	if !d.Distribution.Enabled || d.Distribution.Mode != "combined" || strings.Join(d.Distribution.ApproversEmail, ";") != "boss@example.com" ||
		d.Distribution.DeliveryConfig.Mode != "secure-email" || *d.Distribution.DeliveryConfig.ExpiresInHours != 24 {
		t.Errorf("distribution = %+v", d.Distribution)
	}
	s := d.ESign.Signers[0]
	if *s.SlotIndex != 0 || s.Role != "employee" || s.OTPChannel != "sms" || s.PhoneNumber != "+4915112345678" || s.CompletionCondition != "required" ||
		*d.ESign.ExpiresInMinutes != 60 || *d.ESign.SendPerSignerNotices || d.ESign.RequestedByEmail != "hr@example.com" {
		t.Errorf("esign = %+v %+v", d.ESign, s)
	}
	if !d.Delivery.RequireOTP || d.Delivery.Recipients[0].Role != "hr" || d.Delivery.SharePointTarget.FolderPath != "Offers" || d.Delivery.ExpiresInHours != nil {
		t.Errorf("delivery = %+v", d.Delivery)
	}
	if d.Workflow.SchemaPath != "schema.yaml" || d.Workflow.Recipients[0].DisplayName != "W" || !d.Workflow.RequireOTP {
		t.Errorf("workflow = %+v", d.Workflow)
	}
	if string(pkg.Schema) != "steps: []\n" {
		t.Errorf("schema = %q", pkg.Schema)
	}
}

func TestParseRefuses(t *testing.T) {
	t.Parallel()
	const head = "name: n\nversion: 1\n"
	cases := []struct{ name, yaml, want string }{
		{"unknown top key", head + "colour: red\n", `template.yaml:3:1: unknown key "colour"`},
		{"unknown locked key", head + "locked: [workflow.requireOtp, esign.enabled]\n", `template.yaml:3:31: locked[1]: must be one of distribution.requireApproval`},
		{"repeated locked key", head + "locked: [workflow.schemaPath, workflow.schemaPath]\n", `template.yaml:3:31: locked[1]: repeats workflow.schemaPath`},
		{"locked not a list", head + "locked: workflow.schemaPath\n", `template.yaml:3:9: locked: must be a list`},
		{"unknown field key", head + "fields:\n  - key: a\n    type: string\n    colour: red\n", `template.yaml:6:5: unknown key "colour" in fields[0]`},
		{"duplicate key", head + "name: m\n", `template.yaml:3:1: duplicate key "name"`},
		{"missing name", "version: 1\n", `template.yaml:1:1: name is required`},
		{"empty name", "name: ''\nversion: 1\n", `template.yaml:1:7: name: must not be empty`},
		{"missing version", "name: n\n", `template.yaml:1:1: version is required`},
		{"version zero", "name: n\nversion: 0\n", `template.yaml:2:10: version: must be a positive integer`},
		{"version fraction", "name: n\nversion: 1.5\n", `template.yaml:2:10: version: must be an integer`},
		{"version string", "name: n\nversion: one\n", `template.yaml:2:10: version: must be a number, not a string`},
		{"name not string", "name: [a]\nversion: 1\n", `template.yaml:1:7: name: must be a string, not a list`},
		{"title with newline", head + "title: \"a\\nb\"\n", `template.yaml:3:8: title: must be one line`},
		{"fields not list", head + "fields: {a: 1}\n", `template.yaml:3:9: fields: must be a list`},
		{"field missing key", head + "fields:\n  - type: string\n", `template.yaml:4:5: fields[0]: key is required`},
		{"bad field key", head + "fields:\n  - key: 1abc\n    type: string\n", `template.yaml:4:10: fields[0].key: must be a letter`},
		{"field key with dot", head + "fields:\n  - key: a.b\n    type: string\n", `template.yaml:4:10: fields[0].key: must be a letter`},
		{"duplicate field key", head + "fields:\n  - {key: a, type: string}\n  - {key: a, type: text}\n", `template.yaml:5:11: fields[1].key: repeats the key of fields[0]`},
		{"missing type", head + "fields:\n  - key: a\n", `template.yaml:4:5: fields[0]: type is required`},
		{"help only in a workflow schema", head + "fields:\n  - {key: a, type: string, help: Hint}\n", `template.yaml:4:28: unknown key "help" in fields[0]`},
		{"unknown type", head + "fields:\n  - key: a\n    type: money\n", `template.yaml:5:11: fields[0].type: must be one of string`},
		{"bad pattern", head + "fields:\n  - key: a\n    type: string\n    pattern: '(a'\n", `template.yaml:6:14: fields[0].pattern: is not a valid RE2 expression`},
		{"backreference pattern", head + "fields:\n  - key: a\n    type: string\n    pattern: '(a)\\1'\n", `template.yaml:6:14: fields[0].pattern: is not a valid RE2`},
		{"options on string", head + "fields:\n  - key: a\n    type: string\n    options: [x]\n", `template.yaml:6:14: fields[0].options: applies only to enum fields`},
		{"enum without options", head + "fields:\n  - key: a\n    type: enum\n", `template.yaml:4:5: fields[0]: options are required for an enum field`},
		{"repeated option", head + "fields:\n  - key: a\n    type: enum\n    options: [x, x]\n", `template.yaml:6:18: fields[0].options[1]: must be a non-empty option given once`},
		{"min greater than max", head + "fields:\n  - key: a\n    type: number\n    min: 5\n    max: 1\n", `template.yaml:6:10: fields[0].min: is greater than max`},
		{"minLength greater than maxLength", head + "fields:\n  - key: a\n    type: string\n    minLength: 5\n    maxLength: 1\n", `template.yaml:6:16: fields[0].minLength: is greater than maxLength`},
		{"negative maxLength", head + "fields:\n  - key: a\n    type: string\n    maxLength: -1\n", `template.yaml:6:16: fields[0].maxLength: must not be negative`},
		{"min on string", head + "fields:\n  - key: a\n    type: string\n    min: 1\n", `template.yaml:6:10: fields[0].min: applies only to number and integer fields`},
		{"maxLength on number", head + "fields:\n  - key: a\n    type: number\n    maxLength: 1\n", `template.yaml:6:16: fields[0].maxLength: applies only to string`},
		{"required not bool", head + "fields:\n  - key: a\n    type: string\n    required: yes\n", `template.yaml:6:15: fields[0].required: must be a boolean, not a string`},
		{"rule without id", head + "rules:\n  - expr: 'true'\n", `template.yaml:4:5: rules[0]: id is required`},
		{"duplicate rule id", head + "rules:\n  - {id: r, expr: 'true'}\n  - {id: r, expr: 'false'}\n", `template.yaml:5:10: rules[1].id: repeats the id of rules[0]`},
		{"rule without expr", head + "rules:\n  - id: r\n", `template.yaml:4:5: rules[0]: expr is required`},
		{"bad severity", head + "rules:\n  - id: r\n    expr: 'true'\n    severity: fatal\n", `template.yaml:6:15: rules[0].severity: must be error, warning or info`},
		{"rule fieldKey names no field", head + "rules:\n  - id: r\n    expr: 'true'\n    fieldKey: nope\n", `template.yaml:6:15: rules[0].fieldKey: names no field`},
		{"rule does not compile", head + "rules:\n  - id: r\n    expr: 'record.a >'\n", `template.yaml:5:11: rules[0].expr: does not compile: 1:11: Syntax error`},
		{"rule not bool", head + "fields:\n  - {key: a, type: number}\nrules:\n  - id: r\n    expr: '1 + 2'\n", `template.yaml:7:11: rules[0].expr: must be a boolean expression, not int`},
		{"rule names unknown field", head + "fields:\n  - {key: salary, type: number}\nrules:\n  - id: r\n    expr: 'record.salry < 5'\n", `template.yaml:7:11: rules[0].expr: record.salry names no field`},
		{"rule unknown function", head + "rules:\n  - id: r\n    expr: 'nope(1)'\n", `template.yaml:5:11: rules[0].expr: does not compile: 1:5: undeclared reference to 'nope'`},
		{"anchor", head + "esign: &e {enabled: true}\ndelivery: *e\n", `template.yaml:3:8: esign: anchors and aliases are not allowed`},
		{"merge key", head + "esign:\n  <<: {enabled: true}\n", `template.yaml:4:3: esign: merge keys (<<) are not allowed`},
		{"unknown esign key", head + "esign:\n  signingMode: single\n  colour: red\n", `template.yaml:5:3: unknown key "colour" in esign`},
		{"unknown signer key", head + "esign:\n  signers:\n    - {role: a, email: b, colour: c}\n", `template.yaml:5:27: unknown key "colour" in esign.signers[0]`},
		{"esign wrong type", head + "esign:\n  expiresInMinutes: soon\n", `template.yaml:4:21: esign.expiresInMinutes: must be a number, not a string`},
		{"approvers wrong type", head + "distribution:\n  approversEmail: 5\n", `template.yaml:4:19: distribution.approversEmail: must be a list, not a number`},
		{"binary tag", head + "title: !!binary aGVsbG8=\n", `template.yaml:3:8: title: has the unsupported tag !!binary`},
		{"two documents", head + "---\nname: m\n", `template.yaml:3: must hold one YAML document`},
		{"syntax error", head + "fields: [\n", `template.yaml:3: did not find expected node content`},
		{"not a mapping", "- a\n", `template.yaml:1:1: must be a mapping`},
		{"empty", "", `template.yaml:1: is empty`},
		{"tab indentation", "name: n\n\tversion: 1\n", `template.yaml:2: found a tab character that violates indentation`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse("templatePath", map[string][]byte{FileYAML: []byte(c.yaml), FilePDF: fakePDF})
			e, ok := apperr.As(err)
			if !ok || e.Code != CodeInvalid || len(e.Fields) != 1 || e.Fields[0].Field != "templatePath" {
				t.Fatalf("err = %v, want template_invalid on templatePath", err)
			}
			if !strings.HasPrefix(e.Fields[0].Message, c.want) {
				t.Errorf("message = %q\n      want prefix %q", e.Fields[0].Message, c.want)
			}
		})
	}
}

func TestParseRefusesFiles(t *testing.T) {
	t.Parallel()
	y := []byte("name: n\nversion: 1\n")
	big := func(n int) []byte { return append([]byte("%PDF-"), make([]byte, n)...) }
	fields := strings.Repeat("  - {key: a, type: string}\n", 1)
	many := "name: n\nversion: 1\nfields:\n"
	for i := range MaxFields + 1 {
		many += "  - {key: f" + strconv.Itoa(i) + ", type: string}\n"
	}
	rules := "name: n\nversion: 1\nrules:\n"
	for i := range MaxRules + 1 {
		rules += "  - {id: r" + strconv.Itoa(i) + ", expr: 'true'}\n"
	}
	cases := []struct {
		name  string
		files map[string][]byte
		want  string
	}{
		{"no yaml", map[string][]byte{FilePDF: fakePDF}, "the package holds no template.yaml"},
		{"no pdf", map[string][]byte{FileYAML: y}, "the package holds no template.pdf"},
		{"pdf not a pdf", map[string][]byte{FileYAML: y, FilePDF: []byte("hello")}, "template.pdf is not a PDF file"},
		{"pdf too large", map[string][]byte{FileYAML: y, FilePDF: big(MaxPDFBytes)}, "template.pdf is larger than 64 MiB"},
		{"yaml too large", map[string][]byte{FileYAML: append(y, make([]byte, MaxYAMLBytes)...), FilePDF: fakePDF}, "template.yaml is larger than 256 KiB"},
		{"schema too large", map[string][]byte{FileYAML: y, FilePDF: fakePDF, FileSchema: make([]byte, MaxSchemaBytes+1)}, "schema.yaml is larger than 256 KiB"},
		{"too many fields", map[string][]byte{FileYAML: []byte(many), FilePDF: fakePDF}, "template.yaml:4:3: fields: holds more than 500 fields"},
		{"too many rules", map[string][]byte{FileYAML: []byte(rules), FilePDF: fakePDF}, "template.yaml:4:3: rules: holds more than 200 rules"},
		{"fields sanity", map[string][]byte{FileYAML: []byte("name: n\nversion: 1\nfields:\n" + fields + fields), FilePDF: fakePDF}, "template.yaml:5:11: fields[1].key: repeats"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse("options.templatePath", c.files)
			e, ok := apperr.As(err)
			if !ok || e.Code != CodeInvalid || e.Fields[0].Field != "options.templatePath" || !strings.HasPrefix(e.Fields[0].Message, c.want) {
				t.Fatalf("err = %v, want template_invalid %q", err, c.want)
			}
		})
	}
}
