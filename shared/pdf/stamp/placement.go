// Package stamp draws signers' values onto a PDF (DESIGN 6a): signature and initials drawings
// (PNG) scaled into their rectangles keeping the aspect ratio, text and date values as text,
// checkboxes as a check mark; it removes the `esign.*` AcroForm fields afterwards (pdfcpu has
// no flatten), reads the field manifest from those fields, and appends a signature page when a
// document has no manifest. All work is done on a pdfdoc.Doc, as part of one incremental update.
package stamp

import (
	"fmt"
	"strings"

	"github.com/esign-svc/esign/shared/apperr"
)

// Kind is the kind of a signature field.
type Kind string

// Field kinds of DESIGN 6a.
const (
	KindSignature Kind = "signature"
	KindInitials  Kind = "initials"
	KindDate      Kind = "date"
	KindText      Kind = "text"
	KindCheckbox  Kind = "checkbox"
)

// Valid reports whether k is one of the five kinds.
func (k Kind) Valid() bool {
	switch k {
	case KindSignature, KindInitials, KindDate, KindText, KindCheckbox:
		return true
	}
	return false
}

// Rect is a rectangle in PDF points in the page's default user space: (X1,Y1) lower left,
// (X2,Y2) upper right (the order is normalised).
type Rect struct {
	X1 float64 `json:"x1"`
	Y1 float64 `json:"y1"`
	X2 float64 `json:"x2"`
	Y2 float64 `json:"y2"`
}

func (r Rect) norm() Rect {
	if r.X1 > r.X2 {
		r.X1, r.X2 = r.X2, r.X1
	}
	if r.Y1 > r.Y2 {
		r.Y1, r.Y2 = r.Y2, r.Y1
	}
	return r
}

// Width and Height of the normalised rectangle.
func (r Rect) Width() float64  { n := r.norm(); return n.X2 - n.X1 }
func (r Rect) Height() float64 { n := r.norm(); return n.Y2 - n.Y1 }

// Placement is one value to draw: Image (PNG) for signature and initials, Text for date and
// text, Checked for checkbox. Page is 1-based.
type Placement struct {
	Page    int
	Rect    Rect
	Kind    Kind
	Image   []byte
	Text    string
	Checked bool
}

// Validate checks p against a document of pageCount pages. Errors: apperr invalid
// "placement_invalid" naming the field at fault (placements[i].page, .rect, .kind, .value).
func (p Placement) Validate(i, pageCount int) error {
	f := func(name, msg string) error {
		return apperr.Invalid("placement_invalid", apperr.Field(fmt.Sprintf("placements[%d].%s", i, name), msg))
	}
	switch {
	case p.Page < 1 || p.Page > pageCount:
		return f("page", fmt.Sprintf("page must be between 1 and %d", pageCount))
	case !p.Kind.Valid():
		return f("kind", "kind must be signature, initials, date, text or checkbox")
	case p.Rect.Width() <= 0 || p.Rect.Height() <= 0:
		return f("rect", "rectangle must have a positive width and height")
	case (p.Kind == KindSignature || p.Kind == KindInitials) && len(p.Image) == 0:
		return f("value", "a PNG drawing is required")
	case (p.Kind == KindDate || p.Kind == KindText) && strings.TrimSpace(p.Text) == "":
		return f("value", "a text value is required")
	}
	return nil
}
