package stamp

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"

	"github.com/esign-svc/esign/shared/pdf/pdfdoc"
)

// Field is one entry of a field manifest, read from an AcroForm field named
// `esign.<role>.<kind>[.<name>]` (DESIGN 6a).
type Field struct {
	FullName string `json:"fullName"`
	Role     string `json:"role"`
	Kind     Kind   `json:"kind"`
	Name     string `json:"name,omitempty"`
	Page     int    `json:"page"`
	Rect     Rect   `json:"rect"`
}

// ParseFieldName splits `esign.<role>.<kind>[.<name>]`; ok is false for other names.
func ParseFieldName(full string) (role string, kind Kind, name string, ok bool) {
	parts := strings.SplitN(full, ".", 4)
	if len(parts) < 3 || parts[0] != "esign" || parts[1] == "" || !Kind(parts[2]).Valid() {
		return "", "", "", false
	}
	if len(parts) == 4 {
		name = parts[3]
	}
	return parts[1], Kind(parts[2]), name, true
}

// ManifestFromPDF opens src and returns its field manifest (see Manifest).
func ManifestFromPDF(src []byte) ([]Field, error) {
	d, err := pdfdoc.Open(src)
	if err != nil {
		return nil, err
	}
	return Manifest(d)
}

// Manifest returns one Field per widget of every AcroForm field named `esign.<role>.<kind>
// [.<name>]`, in page order then top to bottom. Fields with other names, and `esign.` names
// whose kind is unknown, are ignored. An empty result means the document has no manifest.
func Manifest(d *pdfdoc.Doc) ([]Field, error) {
	pageOf, err := annotPages(d)
	if err != nil {
		return nil, err
	}
	var out []Field
	err = walkFields(d, func(full string, widget types.Dict, ref *types.IndirectRef) error {
		role, kind, name, ok := ParseFieldName(full)
		if !ok {
			return nil
		}
		page := widgetPage(d, pageOf, widget, ref)
		rect, err := rectOf(d, widget["Rect"])
		if err != nil || page == 0 {
			return nil
		}
		out = append(out, Field{FullName: full, Role: role, Kind: kind, Name: name, Page: page, Rect: rect})
		return nil
	})
	sortFields(out)
	return out, err
}

func sortFields(fs []Field) {
	for i := 1; i < len(fs); i++ {
		for j := i; j > 0 && (fs[j].Page < fs[j-1].Page || fs[j].Page == fs[j-1].Page && fs[j].Rect.Y2 > fs[j-1].Rect.Y2); j-- {
			fs[j], fs[j-1] = fs[j-1], fs[j]
		}
	}
}

// widgetPage is the 1-based page whose /Annots hold the widget, else the page its /P names;
// 0 when neither is known.
func widgetPage(d *pdfdoc.Doc, pageOf map[int]int, widget types.Dict, ref *types.IndirectRef) int {
	if ref != nil {
		if n := pageOf[ref.ObjectNumber.Value()]; n != 0 {
			return n
		}
	}
	if p, ok := widget["P"].(types.IndirectRef); ok {
		return pageNumber(d, p)
	}
	return 0
}

func pageNumber(d *pdfdoc.Doc, ref types.IndirectRef) int {
	for n := 1; n <= d.Ctx.PageCount; n++ {
		if p, err := d.Page(n); err == nil && p.Ref.ObjectNumber == ref.ObjectNumber {
			return n
		}
	}
	return 0
}

func annotPages(d *pdfdoc.Doc) (map[int]int, error) {
	m := map[int]int{}
	for n := 1; n <= d.Ctx.PageCount; n++ {
		p, err := d.Page(n)
		if err != nil {
			return nil, err
		}
		v, err := d.Deref(p.Dict["Annots"])
		if err != nil {
			return nil, err
		}
		arr, _ := v.(types.Array)
		for _, a := range arr {
			if r, ok := a.(types.IndirectRef); ok {
				m[r.ObjectNumber.Value()] = n
			}
		}
	}
	return m, nil
}

func rectOf(d *pdfdoc.Doc, o types.Object) (Rect, error) {
	v, err := d.Deref(o)
	if err != nil {
		return Rect{}, err
	}
	a, ok := v.(types.Array)
	if !ok || len(a) != 4 {
		return Rect{}, fmt.Errorf("no rectangle")
	}
	var f [4]float64
	for i, e := range a {
		e, _ = d.Deref(e)
		switch n := e.(type) {
		case types.Integer:
			f[i] = float64(n)
		case types.Float:
			f[i] = float64(n)
		default:
			return Rect{}, fmt.Errorf("no rectangle")
		}
	}
	return Rect{f[0], f[1], f[2], f[3]}.norm(), nil
}

// fieldName decodes a /T entry (PDFDocEncoding or UTF-16BE).
func fieldName(d *pdfdoc.Doc, o types.Object) string {
	v, err := d.Deref(o)
	if err != nil || v == nil {
		return ""
	}
	var s string
	switch t := v.(type) {
	case types.StringLiteral:
		b, err := types.Unescape(t.Value())
		if err != nil {
			return t.Value()
		}
		s = string(b)
	case types.HexLiteral:
		b, err := t.Bytes()
		if err != nil {
			return ""
		}
		s = string(b)
	default:
		return ""
	}
	if bytes.HasPrefix([]byte(s), []byte{0xFE, 0xFF}) {
		if u, err := types.DecodeUTF16String(s); err == nil {
			return u
		}
	}
	return s
}

// inheritable are the field attributes a widget takes from its ancestors (and, for /DA and
// /Q, from the AcroForm dictionary) when it lacks them (PDF 32000-1 12.7.3.1).
var inheritable = []string{"FT", "Ff", "Q", "DA"}

// walkFields calls fn for every widget (terminal field or widget kid) with the field's full
// name. ref is the widget's reference when it is indirect. The widget dictionary carries the
// inheritable attributes (FT, Ff, Q, DA) resolved from its ancestors; it is a copy when any
// had to be added, so fn must not write it back.
func walkFields(d *pdfdoc.Doc, fn func(full string, widget types.Dict, ref *types.IndirectRef) error) error {
	cat, _, err := d.Catalog()
	if err != nil {
		return err
	}
	af, err := d.DerefDict(cat["AcroForm"])
	if err != nil || af == nil {
		return err
	}
	v, err := d.Deref(af["Fields"])
	if err != nil {
		return err
	}
	fields, _ := v.(types.Array)
	seen := map[int]bool{}
	var walk func(o types.Object, parent string, inh types.Dict, depth int) error
	walk = func(o types.Object, parent string, inh types.Dict, depth int) error {
		if depth > 32 {
			return fmt.Errorf("stamp: form field tree too deep")
		}
		var ref *types.IndirectRef
		if r, ok := o.(types.IndirectRef); ok {
			if seen[r.ObjectNumber.Value()] {
				return nil
			}
			seen[r.ObjectNumber.Value()] = true
			ref = &r
		}
		f, err := d.DerefDict(o)
		if err != nil || f == nil {
			return err
		}
		full := parent
		if t := fieldName(d, f["T"]); t != "" {
			if full != "" {
				full += "."
			}
			full += t
		}
		kv, err := d.Deref(f["Kids"])
		if err != nil {
			return err
		}
		kids, _ := kv.(types.Array)
		if len(kids) == 0 {
			return fn(full, withInherited(f, inh), ref)
		}
		inh = inherit(d, inh, f)
		for _, k := range kids {
			if err := walk(k, full, inh, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	top := inherit(d, nil, types.Dict{"Q": af["Q"], "DA": af["DA"]})
	for _, f := range fields {
		if err := walk(f, "", top, 0); err != nil {
			return err
		}
	}
	return nil
}

// inherit returns inh overridden by the inheritable attributes f sets (inh itself when none).
func inherit(d *pdfdoc.Doc, inh, f types.Dict) types.Dict {
	var out types.Dict
	for _, k := range inheritable {
		if f[k] == nil {
			continue
		}
		v, err := d.Deref(f[k])
		if err != nil || v == nil {
			continue
		}
		if out == nil {
			out = types.Dict{}
			for k2, v2 := range inh {
				out[k2] = v2
			}
		}
		out[k] = v
	}
	if out == nil {
		return inh
	}
	return out
}

// withInherited returns widget with the attributes of inh it lacks (a copy when any).
func withInherited(widget, inh types.Dict) types.Dict {
	cloned := false
	for k, v := range inh {
		if widget[k] != nil {
			continue
		}
		if !cloned {
			widget, cloned = widget.Clone().(types.Dict), true
		}
		widget[k] = v
	}
	return widget
}
