package stamp

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/pdf/pdfdoc"
)

// Value is what one data field shows.
type Value struct {
	// Text is drawn as text: on one line shrunk to fit, or wrapped over several lines when the
	// field is multi-line (/Ff bit 13) or Multiline is set.
	Text string
	// Check, when set, draws a check box (checked or unchecked) in the field's rectangle
	// instead of Text, whatever the field's type (a checkbox is a Btn field without the push
	// and radio flags; the caller knows from its template which keys are booleans).
	Check     *bool
	Multiline bool
}

// Filled is a rendered document.
type Filled struct {
	PDF      []byte  // the complete rendered PDF
	Manifest []Field // the esign.* fields (page, rect) as Manifest orders them
	Pages    int
	Unknown  []string // data field names in the PDF that values did not name (left empty)
}

// FillOptions are the optional parts of a fill.
type FillOptions struct {
	// Title, when not empty, becomes the document information dictionary's /Title.
	Title string
}

// Fill is FillOptions{}.Fill.
func Fill(src []byte, values map[string]Value) (Filled, error) {
	return FillOptions{}.Fill(src, values)
}

// Field (/Ff) and annotation (/F) flags that Fill reads, and its default sizes.
const (
	ffMultiline     = 1 << 12 // text field: several lines
	annotHidden     = 1 << 1
	annotNoView     = 1 << 5
	defaultSize     = 11 // largest size of a single-line value without a size in /DA
	defaultWrapSize = 10 // the same for a multi-line value
)

// Fill draws values into src's data fields (every AcroForm field whose full name is neither
// `esign` nor under `esign.`), removes ALL form fields (data and esign.* alike, with their
// widget annotations; the esign positions live on in Filled.Manifest), drops the AcroForm's
// /NeedAppearances and /XFA so that no viewer regenerates or replaces what was removed, and
// returns the whole PDF. A value whose key names no field in the PDF is ignored (the caller
// validates records against the template, not the PDF); a data field that values do not name
// is left empty and listed in Filled.Unknown.
//
// Layout: a value is drawn in every widget of its field (fields with kids), in black in the
// embedded DejaVu Sans (Latin, Greek, Cyrillic, Hebrew, Arabic; shaped by pdfdoc.Shape). A
// single-line value is vertically centred and shrunk to fit; a multi-line one is wrapped at
// the largest size that fits, down to 6 pt, then clipped. The largest size is the field's /DA
// size when it gives one, else 11 pt (10 pt multi-line). Lines follow the field's /Q (or the
// AcroForm's); without one, text whose first strong character is Hebrew or Arabic is
// right-aligned and other text left-aligned. Hidden widgets are skipped. The page's /Rotate
// is ignored: rectangles are drawn in the page's default user space, unrotated text.
//
// The output is an incremental update of src (the pdfdoc model: src's bytes unchanged,
// followed by new versions of the pages, the AcroForm and the Info dictionary, the drawn
// content and the font subset): it costs a parse of src and a few kilobytes of writing, where
// a rewrite would re-serialise every object of the template. The template's empty fields
// remain in the earlier revision, which no viewer shows; qpdf --check passes and pdftotext
// gives the drawn values only.
//
// Errors: apperr invalid "pdf_unreadable" (field "pdf") for a source it cannot open or whose
// form or pages are malformed (a panic inside pdfcpu included), "pdf_encrypted" for an
// encrypted one.
func (o FillOptions) Fill(src []byte, values map[string]Value) (out Filled, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = Filled{}, unreadable(fmt.Errorf("malformed PDF (%v)", r))
		}
	}()
	d, err := pdfdoc.Open(src)
	if err != nil {
		return Filled{}, unreadable(err)
	}
	manifest, err := Manifest(d)
	if err != nil {
		return Filled{}, unreadable(err)
	}
	widgets, unknown, err := dataWidgets(d, values)
	if err != nil {
		return Filled{}, unreadable(err)
	}
	if err := drawValues(d, widgets); err != nil {
		return Filled{}, err
	}
	if err := removeFieldsWhere(d, func(string) bool { return true }); err != nil {
		return Filled{}, unreadable(err)
	}
	if err := dropFormRegeneration(d); err != nil {
		return Filled{}, unreadable(err)
	}
	if o.Title != "" {
		d.SetInfo(types.Dict{"Title": pdfdoc.TextString(o.Title)})
	}
	pdf, err := d.Bytes(nil)
	if err != nil {
		return Filled{}, err
	}
	return Filled{PDF: pdf, Manifest: manifest, Pages: d.Ctx.PageCount, Unknown: unknown}, nil
}

// unreadable keeps an apperr as it is and makes any other error a pdf_unreadable problem.
func unreadable(err error) error {
	if _, ok := apperr.As(err); ok {
		return err
	}
	return apperr.Invalid(pdfdoc.CodeUnreadable, apperr.Field("pdf", "not a readable PDF form: "+err.Error()))
}

// dataWidget is one widget of a data field that a value fills.
type dataWidget struct {
	page  int
	rect  Rect
	value Value
	box   textBox
}

// dataWidgets lists the widgets of the data fields values name, and the names of the data
// fields they do not name (in form order, once each).
func dataWidgets(d *pdfdoc.Doc, values map[string]Value) ([]dataWidget, []string, error) {
	pageOf, err := annotPages(d)
	if err != nil {
		return nil, nil, err
	}
	var out []dataWidget
	var unknown []string
	listed := map[string]bool{}
	err = walkFields(d, func(full string, w types.Dict, ref *types.IndirectRef) error {
		if isEsignName(full) {
			return nil
		}
		v, ok := values[full]
		if !ok {
			if !listed[full] {
				listed[full] = true
				unknown = append(unknown, full)
			}
			return nil
		}
		page := widgetPage(d, pageOf, w, ref)
		rect, err := rectOf(d, w["Rect"])
		if f, _ := intOf(d, w["F"]); err != nil || page == 0 || !rect.drawable() || f&(annotHidden|annotNoView) != 0 {
			return nil
		}
		ff, _ := intOf(d, w["Ff"])
		box := textBox{Quad: quadLeft, MaxSize: defaultSize, Multiline: v.Multiline || ff&ffMultiline != 0}
		if box.Multiline {
			box.MaxSize = defaultWrapSize
		}
		if s := daSize(d, w["DA"]); s > 0 {
			box.MaxSize = s
		}
		if q, ok := intOf(d, w["Q"]); ok && q >= quadLeft && q <= quadRight {
			box.Quad = q
		} else if pdfdoc.RTL(v.Text) {
			box.Quad = quadRight
		}
		out = append(out, dataWidget{page: page, rect: rect, value: v, box: box})
		return nil
	})
	return out, unknown, err
}

// drawable reports whether r has a finite, positive width and height.
func (r Rect) drawable() bool {
	w, h := r.Width(), r.Height()
	return w > 0 && h > 0 && !math.IsInf(w, 0) && !math.IsInf(h, 0)
}

// drawValues draws the widgets' values over their pages; the font is added only when some
// value is text.
func drawValues(d *pdfdoc.Doc, ws []dataWidget) error {
	var font *pdfdoc.Font
	byPage := map[int][]dataWidget{}
	for _, w := range ws {
		if w.value.Check == nil {
			if strings.TrimSpace(w.value.Text) == "" {
				continue
			}
			if font == nil {
				var err error
				if font, err = pdfdoc.NewFont(d); err != nil {
					return err
				}
			}
		}
		byPage[w.page] = append(byPage[w.page], w)
	}
	for n := 1; n <= d.Ctx.PageCount; n++ {
		if len(byPage[n]) == 0 {
			continue
		}
		err := overlayPage(d, n, font, func(c *pdfdoc.Content, fontName string, _ types.Dict) error {
			for _, w := range byPage[n] {
				if w.value.Check != nil {
					drawCheckbox(c, w.rect, *w.value.Check)
					continue
				}
				w.box.draw(c, font, fontName, w.rect, w.value.Text)
			}
			return nil
		})
		if err != nil {
			return unreadable(err)
		}
	}
	return nil
}

func intOf(d *pdfdoc.Doc, o types.Object) (int, bool) {
	v, err := d.Deref(o)
	if err != nil {
		return 0, false
	}
	switch n := v.(type) {
	case types.Integer:
		return int(n), true
	case types.Float:
		return int(n), true
	}
	return 0, false
}

// daSize is the font size a default appearance string (/DA, "/Helv 10 Tf 0 g") sets; 0 for
// none or auto.
func daSize(d *pdfdoc.Doc, o types.Object) float64 {
	v, err := d.Deref(o)
	if err != nil {
		return 0
	}
	s, ok := v.(types.StringLiteral)
	if !ok {
		return 0
	}
	f := strings.Fields(s.Value())
	for i := 1; i < len(f); i++ {
		if f[i] == "Tf" {
			size, err := strconv.ParseFloat(f[i-1], 64)
			if err == nil && size > 0 && size < 200 {
				return size
			}
			return 0
		}
	}
	return 0
}
