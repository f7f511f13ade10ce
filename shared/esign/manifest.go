package esign

import (
	"fmt"
	"strings"

	"github.com/esign-svc/esign/shared/text"
)

// Field kinds of a signature field manifest (DESIGN section 6a).
const (
	FieldSignature = "signature"
	FieldInitials  = "initials"
	FieldDate      = "date"
	FieldText      = "text"
	FieldCheckbox  = "checkbox"
)

// Where a session's manifest came from.
const (
	ManifestFromTemplate = "template" // the template package's template.pdf
	ManifestFromRendered = "rendered" // the manifest stored beside the rendered PDF
	ManifestFromPDF      = "pdf"      // esign.* fields of the PDF itself
	ManifestNone         = "none"     // no fields: signatures go on an appended page
)

// ManifestField is one signature field: its AcroForm name esign.<role>.<kind>[.<name>], the page
// (1-based) and the rectangle in PDF points (x1, y1, x2, y2).
type ManifestField struct {
	Name string     `json:"name"`
	Role string     `json:"role"`
	Kind string     `json:"kind"`
	Page int        `json:"page"`
	Rect [4]float64 `json:"rect"`
}

// ForRole is the manifest's fields for one role, in manifest order.
func ForRole(m []ManifestField, role string) []ManifestField {
	var out []ManifestField
	for _, f := range m {
		if strings.EqualFold(f.Role, role) {
			out = append(out, f)
		}
	}
	return out
}

// CompletedField is a field value a signer submitted with the callback.
type CompletedField struct {
	Name    string `json:"name"`
	Value   string `json:"value,omitempty"`   // initials, date (YYYY-MM-DD) and text
	Checked *bool  `json:"checked,omitempty"` // checkbox
}

// CheckFields checks the submitted values against the role's manifest: every non-signature
// field of the role is present once, no field of another role or unknown name, values within
// limits. It returns the field errors (field paths "fields[i]...") or nil.
func CheckFields(m []ManifestField, role string, got []CompletedField) []FieldProblem {
	want := map[string]ManifestField{}
	for _, f := range ForRole(m, role) {
		if f.Kind != FieldSignature {
			want[f.Name] = f
		}
	}
	var probs []FieldProblem
	seen := map[string]bool{}
	for i, c := range got {
		at := fmt.Sprintf("fields[%d]", i)
		f, ok := want[c.Name]
		switch {
		case !ok:
			probs = append(probs, FieldProblem{at + ".name", "is not a field of this signer's manifest"})
			continue
		case seen[c.Name]:
			probs = append(probs, FieldProblem{at + ".name", "is given twice"})
			continue
		}
		seen[c.Name] = true
		switch f.Kind {
		case FieldCheckbox:
			if c.Checked == nil || c.Value != "" {
				probs = append(probs, FieldProblem{at + ".checked", "a checkbox takes checked true or false and no value"})
			}
		case FieldDate:
			if !isDate(c.Value) {
				probs = append(probs, FieldProblem{at + ".value", "must be a date YYYY-MM-DD"})
			}
		default:
			if strings.TrimSpace(c.Value) == "" || len(c.Value) > 500 || c.Checked != nil {
				probs = append(probs, FieldProblem{at + ".value", "must be 1 to 500 characters of text"})
			} else if msg := text.Problem(c.Value, text.Line); msg != "" {
				probs = append(probs, FieldProblem{at + ".value", msg})
			}
		}
	}
	for name := range want {
		if !seen[name] {
			probs = append(probs, FieldProblem{"fields", "missing field " + name})
		}
	}
	return probs
}

// FieldProblem is one field at fault (converted to apperr.FieldError by handlers).
type FieldProblem struct{ Field, Message string }

func isDate(s string) bool {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return false
	}
	for i, r := range s {
		if i != 4 && i != 7 && (r < '0' || r > '9') {
			return false
		}
	}
	m, d := (s[5]-'0')*10+(s[6]-'0'), (s[8]-'0')*10+(s[9]-'0')
	return m >= 1 && m <= 12 && d >= 1 && d <= 31
}
