package template

import (
	"encoding/json"
	"fmt"
	"math"
	"net/mail"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/text"
)

// Result is one finding on a record: a failed field check (RuleID "field.<check>"), or a rule's
// outcome: Passed false for a rule that failed (or could not be evaluated), true for one that
// held (listed by ValidateAll only, spec 001 validationResults[]).
type Result struct {
	RuleID   string   `json:"ruleId,omitempty"`
	Passed   bool     `json:"passed"`
	FieldKey string   `json:"fieldKey,omitempty"`
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
}

// Blocks reports whether the result stops the record: a failed check or rule of severity error.
func (r Result) Blocks() bool { return !r.Passed && r.Severity == SeverityError }

// The RuleIDs of the field checks.
const (
	CheckRequired  = "field.required"
	CheckType      = "field.type"
	CheckFormat    = "field.format" // a date, e-mail or phone number that is not one, or refused characters
	CheckMinLength = "field.minLength"
	CheckMaxLength = "field.maxLength"
	CheckPattern   = "field.pattern"
	CheckMin       = "field.min"
	CheckMax       = "field.max"
	CheckOptions   = "field.options"
	CheckUnknown   = "field.unknown"
)

// maxEmail is the longest e-mail address a record may hold.
const maxEmail = 254

var reE164 = regexp.MustCompile(`^\+[1-9][0-9]{6,14}$`)

// Validate checks a record (a JSON object decoded with UseNumber, or plainly) against the
// fields: required, type, limits, pattern, options; keys that are no field are refused. When
// every field passes, the rules run on the typed record (number fields as CEL double, integer
// fields as int, the rest as they are), as the form's variable (`record` or `data`), with now
// as the CEL variable `now`. A rule that cannot
// be evaluated on the record (a missing key, a type error, the cost limit) fails with its
// severity. Results are in field order, then unknown keys by name, then rule order. Only
// failures are listed (Passed false); ValidateAll lists the rules that held as well.
func (p *Form) Validate(record map[string]any, now time.Time) []Result {
	return p.validate(record, now, false)
}

// ValidateAll is Validate that also lists every rule that held (Passed true, the rule's
// severity, message and field key), in rule order among the failed ones. Field checks are
// listed only when they fail; the rules run (and are listed) only when every field passes.
func (p *Form) ValidateAll(record map[string]any, now time.Time) []Result {
	return p.validate(record, now, true)
}

func (p *Form) validate(record map[string]any, now time.Time, withPassed bool) []Result {
	var out []Result
	typed := make(map[string]any, len(record))
	for i, f := range p.Fields {
		v, ok := record[f.Key]
		if !ok || v == nil {
			if f.Required {
				out = append(out, fail(f.Key, CheckRequired, "is required"))
			}
			continue
		}
		tv, r := p.checkField(i, v)
		if r != nil {
			out = append(out, *r)
			continue
		}
		typed[f.Key] = tv
	}
	var unknown []string
	for k := range record {
		if _, ok := p.byKey[k]; !ok {
			unknown = append(unknown, k)
		}
	}
	slices.Sort(unknown)
	for _, k := range unknown {
		out = append(out, fail(k, CheckUnknown, "is not a field of the "+p.what))
	}
	if len(out) > 0 {
		return out
	}
	vars := map[string]any{p.variable: typed, "now": now}
	for i, r := range p.Rules {
		passed, reason := p.evalRule(i, vars)
		switch {
		case reason != "":
			out = append(out, Result{RuleID: r.ID, FieldKey: r.FieldKey, Severity: r.Severity,
				Message: "the rule could not be evaluated on this record: " + reason})
		case !passed || withPassed:
			out = append(out, Result{RuleID: r.ID, Passed: passed, FieldKey: r.FieldKey, Severity: r.Severity, Message: r.Message})
		}
	}
	return out
}

func fail(key, check, msg string) Result {
	return Result{RuleID: check, FieldKey: key, Severity: SeverityError, Message: msg}
}

// checkField checks field i's value and returns it as the rules see it.
func (p *Form) checkField(i int, v any) (any, *Result) {
	f := p.Fields[i]
	bad := func(check, format string, args ...any) (any, *Result) {
		r := fail(f.Key, check, fmt.Sprintf(format, args...))
		return nil, &r
	}
	switch f.Type {
	case TypeBoolean:
		b, ok := v.(bool)
		if !ok {
			return bad(CheckType, "must be true or false")
		}
		return b, nil
	case TypeNumber, TypeInteger:
		x, ok := number(v)
		if !ok {
			return bad(CheckType, "must be a finite number")
		}
		var typed any = x
		if f.Type == TypeInteger {
			if x != math.Trunc(x) || math.Abs(x) > 1<<53 {
				return bad(CheckType, "must be a whole number")
			}
			typed = int64(x)
		}
		if f.Min != nil && x < *f.Min {
			return bad(CheckMin, "must be at least %s", formatFloat(*f.Min))
		}
		if f.Max != nil && x > *f.Max {
			return bad(CheckMax, "must be at most %s", formatFloat(*f.Max))
		}
		return typed, nil
	}
	s, ok := v.(string)
	if !ok {
		return bad(CheckType, "must be a string")
	}
	form := text.Line
	if f.Type == TypeText {
		form = text.Lines
	}
	if msg := text.Problem(s, form); msg != "" {
		return bad(CheckFormat, "%s", msg)
	}
	switch f.Type {
	case TypeEnum:
		if !slices.Contains(f.Options, s) {
			return bad(CheckOptions, "must be one of %s", strings.Join(f.Options, ", "))
		}
		return s, nil
	case TypeDate:
		if _, err := time.Parse(time.DateOnly, s); err != nil || len(s) != len(time.DateOnly) {
			return bad(CheckFormat, "must be a date YYYY-MM-DD")
		}
		return s, nil
	case TypeEmail:
		a, err := mail.ParseAddress(s)
		if len(s) > maxEmail || err != nil || a.Address != s || !strings.Contains(s[strings.LastIndexByte(s, '@')+1:], ".") {
			return bad(CheckFormat, "must be a plain e-mail address (name@example.com)")
		}
	case TypePhone:
		if !reE164.MatchString(s) {
			return bad(CheckFormat, "must be an E.164 number such as +4915112345678")
		}
	}
	n := utf8.RuneCountInString(s)
	if f.MinLength != nil && n < *f.MinLength {
		return bad(CheckMinLength, "must be at least %d characters", *f.MinLength)
	}
	if f.MaxLength != nil && n > *f.MaxLength {
		return bad(CheckMaxLength, "must be at most %d characters", *f.MaxLength)
	}
	if re := p.patterns[i]; re != nil && !re.MatchString(s) {
		return bad(CheckPattern, "does not match the %s's pattern", p.what)
	}
	return s, nil
}

// number reads a JSON number however it was decoded.
func number(v any) (float64, bool) {
	var x float64
	switch n := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(n), 64)
		if err != nil {
			return 0, false
		}
		x = f
	case float64:
		x = n
	case float32:
		x = float64(n)
	case int:
		x = float64(n)
	case int64:
		x = float64(n)
	case int32:
		x = float64(n)
	default:
		return 0, false
	}
	return x, !math.IsNaN(x) && !math.IsInf(x, 0)
}

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// Errors is the 400 for a record's failed error results: record_invalid, one field error per
// result (field prefix+"."+FieldKey, or prefix alone without a key; RuleID set). nil when no
// result blocks.
func Errors(prefix string, results []Result) error {
	var fields []apperr.FieldError
	for _, r := range results {
		if !r.Blocks() {
			continue
		}
		path := prefix
		if r.FieldKey != "" {
			path = joinKey(prefix, r.FieldKey)
		}
		fields = append(fields, apperr.FieldError{Field: path, Message: r.Message, RuleID: r.RuleID})
	}
	if len(fields) == 0 {
		return nil
	}
	return apperr.Invalid("record_invalid", fields...)
}

// Text is the record's value of key as it is drawn in the PDF: strings and dates as given,
// numbers without an exponent, booleans as true or false; "" when absent or null.
func (p *Package) Text(record map[string]any, key string) string {
	switch v := record[key].(type) {
	case string:
		return v
	case bool:
		return strconv.FormatBool(v)
	case json.Number:
		if !strings.ContainsAny(string(v), "eE") {
			return string(v)
		}
		if f, ok := number(v); ok {
			return formatFloat(f)
		}
		return string(v)
	case int, int64, int32, float32, float64:
		if f, ok := number(v); ok {
			return formatFloat(f)
		}
	}
	return ""
}

var reToken = regexp.MustCompile(`\{\{\s*([^{}]*?)\s*\}\}`)

// Expand replaces each {{field}} token of tmpl (spaces inside the braces allowed) with
// text(field); a token naming no value becomes "".
func Expand(tmpl string, text func(key string) string) string {
	if !strings.Contains(tmpl, "{{") {
		return tmpl
	}
	return reToken.ReplaceAllStringFunc(tmpl, func(tok string) string {
		return text(reToken.FindStringSubmatch(tok)[1])
	})
}
