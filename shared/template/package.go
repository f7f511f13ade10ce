// Package template reads and checks template packages (DESIGN 6a): a template.yaml that
// declares a record's fields, its CEL rules and the default templateSettings, an AcroForm
// template.pdf, and optionally a workflow schema.yaml. It validates records against a package,
// expands {{field}} tokens and merges a request's templateSettings over the package's defaults.
// Loader reads packages from blob storage (a ZIP blob or a blob folder) and caches them by ETag.
//
// The package is pure apart from Loader's reads through its small Blobs interface: no
// environment, no Azure SDK.
package template

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"cel.dev/cel-go/cel"
	"go.yaml.in/yaml/v3"

	"github.com/esign-svc/esign/shared/apperr"
)

// Codes of the errors Parse and Load answer.
const (
	CodeInvalid  = "template_invalid"
	CodeNotFound = "template_not_found"
	// CodeTemplateLocked: a request overrides a key the template locks (403, Merge).
	CodeTemplateLocked = "template_locked"
)

// The files of a package.
const (
	FileYAML   = "template.yaml"
	FilePDF    = "template.pdf"
	FileSchema = "schema.yaml"
)

// Limits of a package.
const (
	MaxYAMLBytes   = 256 << 10
	MaxSchemaBytes = 256 << 10
	MaxPDFBytes    = 64 << 20
	MaxZipBytes    = 64 << 20
	MaxFields      = 500
	MaxRules       = 200
	MaxExprLength  = 4096 // characters of one rule's expression
)

// Package is a parsed, checked template package. It is immutable after Parse and safe for
// concurrent use.
type Package struct {
	Path               string // "templates/offer.zip" or "templates/offer/"; set by Loader
	ETag               string // the blob ETag(s) it was read at; set by Loader
	Name               string
	Version            int
	Title              string // raw; may hold {{field}} tokens
	DocumentIDTemplate string // documentIdTemplate; may hold {{field}} tokens
	Form                      // the record's fields and rules (over `record`)
	PDF                []byte // template.pdf
	PDFHash            string // "sha256:<hex>" of PDF
	Schema             []byte // schema.yaml when present, else nil
	Defaults           Settings
	// Locked are the settings keys ("block.key", of LockableKeys) a request may not override
	// (DESIGN 14): Merge answers 403 template_locked for them.
	Locked []string

	defaults *value // the settings blocks as written, for Merge
}

// Form is a set of fields and the rules over them, checked by one validator: a template's record
// (rules over `record`) or a workflow schema's data (rules over `data`, fields from all steps).
// Immutable once parsed; safe for concurrent use.
type Form struct {
	Fields []Field
	Rules  []Rule

	variable string           // the CEL variable the rules see the fields as
	what     string           // "template" or "schema", in messages
	byKey    map[string]int   // field key -> index in Fields
	paths    []string         // each field's path in its file ("fields[2]")
	programs []cel.Program    // one per rule
	patterns []*regexp.Regexp // one per field, nil without a pattern
}

func newForm(variable, what string) Form {
	return Form{variable: variable, what: what, byKey: map[string]int{}}
}

// Field is the field of key and whether there is one.
func (fm *Form) Field(key string) (Field, bool) {
	i, ok := fm.byKey[key]
	if !ok {
		return Field{}, false
	}
	return fm.Fields[i], true
}

// Check checks one field's value (never nil) as Validate does: the result when it fails, else nil.
// A key that is no field is refused with CheckUnknown.
func (fm *Form) Check(key string, v any) *Result {
	i, ok := fm.byKey[key]
	if !ok {
		r := fail(key, CheckUnknown, "is not a field of the "+fm.what)
		return &r
	}
	_, r := fm.checkField(i, v)
	return r
}

// FieldType is the type of a record's field.
type FieldType string

// The field types.
const (
	TypeString  FieldType = "string"  // one line
	TypeText    FieldType = "text"    // lines
	TypeNumber  FieldType = "number"  // a JSON number; CEL double
	TypeInteger FieldType = "integer" // a whole JSON number; CEL int
	TypeBoolean FieldType = "boolean"
	TypeDate    FieldType = "date"  // "YYYY-MM-DD"; CEL string
	TypeEmail   FieldType = "email" // a plain address
	TypePhone   FieldType = "phone" // E.164
	TypeEnum    FieldType = "enum"  // one of Options
)

func (t FieldType) valid() bool {
	switch t {
	case TypeString, TypeText, TypeNumber, TypeInteger, TypeBoolean, TypeDate, TypeEmail, TypePhone, TypeEnum:
		return true
	}
	return false
}

// stringy types take minLength, maxLength and pattern.
func (t FieldType) stringy() bool {
	return t == TypeString || t == TypeText || t == TypeEmail || t == TypePhone
}

func (t FieldType) numeric() bool { return t == TypeNumber || t == TypeInteger }

// Field is one field of a record; its key also names the PDF form field it fills.
type Field struct {
	Key       string    `json:"key"`
	Type      FieldType `json:"type"`
	Required  bool      `json:"required,omitempty"`
	MinLength *int      `json:"minLength,omitempty"` // characters
	MaxLength *int      `json:"maxLength,omitempty"`
	Pattern   string    `json:"pattern,omitempty"` // RE2, matched against the whole value
	Min       *float64  `json:"min,omitempty"`
	Max       *float64  `json:"max,omitempty"`
	Options   []string  `json:"options,omitempty"` // enum only
	Label     string    `json:"label,omitempty"`
	Help      string    `json:"help,omitempty"` // a workflow schema's hint for the portal
}

// Severity is a rule's weight: error results refuse a record; warnings and infos are reported.
type Severity string

// The severities.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
	SeverityInfo    Severity = "info"
)

// Rule is a CEL expression over `record` and `now`; false means the rule fails.
type Rule struct {
	ID       string   `json:"id"`
	Expr     string   `json:"expr"`
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
	FieldKey string   `json:"fieldKey,omitempty"` // the field the rule is about, or ""
}

var reKey = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)

// fieldSpec and ruleSpec are the YAML shapes of a field and a rule.
type fieldSpec struct {
	Key       string   `json:"key"`
	Type      string   `json:"type"`
	Required  bool     `json:"required"`
	MinLength *int     `json:"minLength"`
	MaxLength *int     `json:"maxLength"`
	Pattern   *string  `json:"pattern"`
	Min       *float64 `json:"min"`
	Max       *float64 `json:"max"`
	Options   []string `json:"options"`
	Label     string   `json:"label"`
	Help      string   `json:"help"`
}

type ruleSpec struct {
	ID       string `json:"id"`
	Expr     string `json:"expr"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
	FieldKey string `json:"fieldKey"`
}

// Parse checks and compiles a package from its files (keys FileYAML, FilePDF and optionally
// FileSchema). A broken package is a 400 template_invalid against field (the JSON path of the
// request field that named the package) whose message names the file, line, column and key at
// fault: "template.yaml:12:5: unknown key \"colour\" in fields[2]".
func Parse(field string, files map[string][]byte) (pkg *Package, err error) {
	bad := func(format string, args ...any) error {
		return apperr.Invalid(CodeInvalid, apperr.Field(field, fmt.Sprintf(format, args...)))
	}
	y, ok := files[FileYAML]
	switch {
	case !ok:
		return nil, bad("the package holds no %s", FileYAML)
	case len(y) > MaxYAMLBytes:
		return nil, bad("%s is larger than %d KiB", FileYAML, MaxYAMLBytes>>10)
	case len(files[FileSchema]) > MaxSchemaBytes:
		return nil, bad("%s is larger than %d KiB", FileSchema, MaxSchemaBytes>>10)
	}
	pdf, ok := files[FilePDF]
	switch {
	case !ok:
		return nil, bad("the package holds no %s", FilePDF)
	case len(pdf) > MaxPDFBytes:
		return nil, bad("%s is larger than %d MiB", FilePDF, MaxPDFBytes>>20)
	case !bytes.Contains(pdf[:min(len(pdf), 1024)], []byte("%PDF-")):
		return nil, bad("%s is not a PDF file", FilePDF)
	}
	pkg, pr := parseYAML(y)
	if pr != nil {
		return nil, bad("%s:%s", FileYAML, pr.where())
	}
	pkg.PDF = pdf
	sum := sha256.Sum256(pdf)
	pkg.PDFHash = "sha256:" + hex.EncodeToString(sum[:])
	if s, ok := files[FileSchema]; ok {
		pkg.Schema = s
	}
	return pkg, nil
}

// where is "line:col: text", or "line: text" for the YAML syntax errors, which carry no column.
func (p *problem) where() string {
	if p.col == 0 {
		return fmt.Sprintf("%d: %s", p.line, p.text())
	}
	return fmt.Sprintf("%d:%d: %s", p.line, p.col, p.text())
}

var reYAMLLine = regexp.MustCompile(`(?s)^yaml: line (\d+): (.*)$`)

// readYAML parses one YAML document into a value tree. The YAML library has panicked on
// hostile input in the past: a panic is a broken file, never a crash.
func readYAML(b []byte) (v *value, pr *problem) {
	defer func() {
		if r := recover(); r != nil {
			v, pr = nil, &problem{line: 1, msg: "is not valid YAML"}
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &problem{line: 1, msg: "is empty"}
		}
		if m := reYAMLLine.FindStringSubmatch(err.Error()); m != nil {
			line, _ := strconv.Atoi(m[1])
			return nil, &problem{line: line, msg: m[2]}
		}
		return nil, &problem{line: 1, msg: strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		return nil, &problem{line: max(next.Line, 1), msg: "must hold one YAML document"}
	}
	return fromYAML(&doc, "", 0)
}

// parseYAML reads template.yaml.
func parseYAML(b []byte) (*Package, *problem) {
	root, pr := readYAML(b)
	if pr != nil {
		return nil, pr
	}
	if root.kind != kMap {
		return nil, at(root, "", "must be a mapping of name, version, fields, ...")
	}
	pkg := &Package{Form: newForm("record", "template"), defaults: &value{kind: kMap, line: root.line, col: root.col}}
	for i, k := range root.keys {
		v := root.vals[i]
		var pr *problem
		switch k.text {
		case "name":
			pr = decode(v, &pkg.Name, "name")
		case "version":
			pr = decode(v, &pkg.Version, "version")
		case "title":
			pr = decode(v, &pkg.Title, "title")
		case "documentIdTemplate":
			pr = decode(v, &pkg.DocumentIDTemplate, "documentIdTemplate")
		case "fields":
			pr = pkg.parseFields(v, "fields", MaxFields)
		case "rules":
			continue // after the fields: a rule names a field
		case "distribution", "esign", "delivery", "workflow":
			pkg.defaults.keys, pkg.defaults.vals = append(pkg.defaults.keys, k), append(pkg.defaults.vals, v)
		case "locked":
			pr = pkg.parseLocked(v)
		default:
			pr = &problem{line: k.line, col: k.col, unknown: k.text}
		}
		if pr != nil {
			return nil, pr
		}
	}
	if pr := pkg.parseRules(root.get("rules")); pr != nil {
		return nil, pr
	}
	switch {
	case root.get("name") == nil:
		return nil, at(root, "", "name is required")
	case strings.TrimSpace(pkg.Name) == "":
		return nil, at(root.get("name"), "name", "must not be empty")
	case root.get("version") == nil:
		return nil, at(root, "", "version is required")
	case pkg.Version < 1:
		return nil, at(root.get("version"), "version", "must be a positive integer")
	}
	for _, k := range []string{"name", "title", "documentIdTemplate"} {
		if v := root.get(k); v != nil && strings.ContainsFunc(v.text, refusedInLine) {
			return nil, at(v, k, "must be one line without control characters")
		}
	}
	s, pr := decodeSettings(pkg.defaults, "")
	if pr != nil {
		return nil, pr
	}
	pkg.Defaults = s
	return pkg, nil
}

// LockableKeys are the settings keys a template may lock (DESIGN 14): the keys that govern it.
var LockableKeys = []string{"distribution.requireApproval", "workflow.schemaPath", "workflow.requireOtp"}

// parseLocked reads `locked:`, a list of LockableKeys without repeats; anything else is refused
// at locked[i].
func (pkg *Package) parseLocked(v *value) *problem {
	if pr := decode(v, &pkg.Locked, "locked"); pr != nil {
		return pr
	}
	for i, k := range pkg.Locked {
		path := fmt.Sprintf("locked[%d]", i)
		if !slices.Contains(LockableKeys, k) {
			return at(v.vals[i], path, "must be one of %s", strings.Join(LockableKeys, ", "))
		}
		if slices.Contains(pkg.Locked[:i], k) {
			return at(v.vals[i], path, "repeats %s", k)
		}
	}
	return nil
}

// IsLocked reports whether the template locks key ("block.key").
func (pkg *Package) IsLocked(key string) bool { return slices.Contains(pkg.Locked, key) }

// parseFields reads the field list v at path key, adding to the form's fields (which may
// already hold other steps' fields: a key is unique across them all) up to max in all.
func (fm *Form) parseFields(v *value, key string, max int) *problem {
	if v.kind == kNull {
		return nil
	}
	if v.kind == kList && len(fm.Fields) > 0 && len(fm.Fields)+len(v.vals) > max {
		return at(v, key, "brings the fields of all steps to more than %d", max)
	}
	return eachItem(v, key, max, func(i int, item *value, path string, s fieldSpec) *problem {
		f := Field{Key: s.Key, Type: FieldType(s.Type), Required: s.Required, MinLength: s.MinLength, MaxLength: s.MaxLength,
			Min: s.Min, Max: s.Max, Options: s.Options, Label: s.Label, Help: s.Help}
		switch {
		case item.get("key") == nil:
			return at(item, path, "key is required")
		case !reKey.MatchString(s.Key) || len(s.Key) > 64:
			return at(item.get("key"), path+".key", "must be a letter then letters, digits or '_' (at most 64)")
		case item.get("type") == nil:
			return at(item, path, "type is required")
		case !f.Type.valid():
			return at(item.get("type"), path+".type", "must be one of string, text, number, integer, boolean, date, email, phone, enum")
		case fm.what != "schema" && item.get("help") != nil:
			k := item.keys[slices.IndexFunc(item.keys, func(k *value) bool { return k.text == "help" })]
			return &problem{path: path, line: k.line, col: k.col, unknown: "help"}
		}
		if j, dup := fm.byKey[s.Key]; dup {
			return at(item.get("key"), path+".key", "repeats the key of %s", fm.paths[j])
		}
		if pr := checkFieldLimits(item, path, f); pr != nil {
			return pr
		}
		var re *regexp.Regexp
		if s.Pattern != nil {
			var err error
			re, err = regexp.Compile(`^(?:` + *s.Pattern + `)$`)
			if err != nil {
				return at(item.get("pattern"), path+".pattern", "is not a valid RE2 expression: %s", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
			}
			f.Pattern = *s.Pattern
		}
		fm.byKey[s.Key] = len(fm.Fields)
		fm.Fields = append(fm.Fields, f)
		fm.paths = append(fm.paths, path)
		fm.patterns = append(fm.patterns, re)
		return nil
	})
}

// eachItem decodes each item of the list v (at most max mappings) as a T and passes it to fn.
func eachItem[T any](v *value, key string, max int, fn func(i int, item *value, path string, s T) *problem) *problem {
	if v.kind != kList {
		return at(v, key, "must be a list")
	}
	if len(v.vals) > max {
		return at(v, key, "holds more than %d %s", max, key)
	}
	for i, item := range v.vals {
		path := fmt.Sprintf("%s[%d]", key, i)
		var s T
		if pr := decode(item, &s, path); pr != nil {
			return pr
		}
		if item.kind == kNull {
			return at(item, path, "must be a mapping")
		}
		if pr := fn(i, item, path, s); pr != nil {
			return pr
		}
	}
	return nil
}

// checkFieldLimits refuses limits that do not fit the field's type or each other.
func checkFieldLimits(item *value, path string, f Field) *problem {
	only := func(key, types string) *problem {
		return at(item.get(key), path+"."+key, "applies only to %s fields", types)
	}
	for _, k := range []string{"minLength", "maxLength", "pattern"} {
		if item.get(k) != nil && !f.Type.stringy() {
			return only(k, "string, text, email and phone")
		}
	}
	for _, k := range []string{"min", "max"} {
		if item.get(k) != nil && !f.Type.numeric() {
			return only(k, "number and integer")
		}
	}
	for _, k := range []string{"minLength", "maxLength"} {
		if n := item.get(k); n != nil && n.kind != kNull && (n.text[0] == '-') {
			return at(n, path+"."+k, "must not be negative")
		}
	}
	switch {
	case item.get("options") != nil && f.Type != TypeEnum:
		return only("options", "enum")
	case f.Type == TypeEnum && len(f.Options) == 0:
		return at(item, path, "options are required for an enum field")
	case f.MinLength != nil && f.MaxLength != nil && *f.MinLength > *f.MaxLength:
		return at(item.get("minLength"), path+".minLength", "is greater than maxLength")
	case f.Min != nil && f.Max != nil && *f.Min > *f.Max:
		return at(item.get("min"), path+".min", "is greater than max")
	}
	seen := map[string]bool{}
	for j, o := range f.Options {
		if seen[o] || o == "" {
			return at(item.get("options").vals[j], fmt.Sprintf("%s.options[%d]", path, j), "must be a non-empty option given once")
		}
		seen[o] = true
	}
	return nil
}

func (fm *Form) parseRules(v *value) *problem {
	if v == nil || v.kind == kNull {
		return nil
	}
	ids := map[string]int{}
	return eachItem(v, "rules", MaxRules, func(i int, item *value, path string, s ruleSpec) *problem {
		r := Rule{ID: s.ID, Expr: s.Expr, Severity: Severity(s.Severity), Message: s.Message, FieldKey: s.FieldKey}
		if pr := uniqueID(ids, item, "rules", path, s.ID, i); pr != nil {
			return pr
		}
		switch {
		case strings.TrimSpace(s.Expr) == "":
			return at(orItem(item.get("expr"), item), path, "expr is required")
		case len(s.Expr) > MaxExprLength:
			return at(item.get("expr"), path+".expr", "is longer than %d characters", MaxExprLength)
		}
		switch r.Severity {
		case "":
			r.Severity = SeverityError
		case SeverityError, SeverityWarning, SeverityInfo:
		default:
			return at(item.get("severity"), path+".severity", "must be error, warning or info")
		}
		if _, ok := fm.byKey[r.FieldKey]; r.FieldKey != "" && !ok {
			return at(item.get("fieldKey"), path+".fieldKey", "names no field")
		}
		if r.Message == "" {
			r.Message = "rule " + r.ID + " failed"
		}
		prg, msg := fm.compile(r.Expr)
		if msg != "" {
			return at(item.get("expr"), path+".expr", "%s", msg)
		}
		fm.Rules = append(fm.Rules, r)
		fm.programs = append(fm.programs, prg)
		return nil
	})
}

// uniqueID checks item i's id of a list at key: given, one line of at most 64 characters, not
// the id of an earlier item (ids, which it extends).
func uniqueID(ids map[string]int, item *value, key, path, id string, i int) *problem {
	switch {
	case strings.TrimSpace(id) == "":
		return at(orItem(item.get("id"), item), path, "id is required")
	case len(id) > 64 || strings.ContainsFunc(id, refusedInLine):
		return at(item.get("id"), path+".id", "must be one line of at most 64 characters")
	}
	if j, dup := ids[id]; dup {
		return at(item.get("id"), path+".id", "repeats the id of %s[%d]", key, j)
	}
	ids[id] = i
	return nil
}

func orItem(v, item *value) *value {
	if v != nil {
		return v
	}
	return item
}

func refusedInLine(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) }
