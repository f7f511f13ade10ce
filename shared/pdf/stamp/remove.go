package stamp

import (
	"strings"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"

	"github.com/esign-svc/esign/shared/pdf/pdfdoc"
)

// RemoveFields removes every AcroForm field whose full name is `esign` or starts with
// `esign.` (with its kids and widget annotations), leaving every other field untouched.
func RemoveFields(d *pdfdoc.Doc) error { return removeFieldsWhere(d, isEsignName) }

// isEsignName reports whether a (top-level or full) field name is `esign` or under `esign.`.
func isEsignName(name string) bool { return name == "esign" || strings.HasPrefix(name, "esign.") }

// removeFieldsWhere removes every top-level AcroForm field whose name remove accepts, with
// its kids and their widget annotations, from the form and from the pages' /Annots.
func removeFieldsWhere(d *pdfdoc.Doc, remove func(name string) bool) error {
	cat, catRef, err := d.Catalog()
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
	removed := map[int]bool{}
	var keep types.Array
	for _, f := range fields {
		fd, err := d.DerefDict(f)
		if err != nil {
			return err
		}
		if remove(fieldName(d, fd["T"])) {
			collectRefs(d, f, removed, 0)
			continue
		}
		keep = append(keep, f)
	}
	if len(removed) == 0 {
		return nil
	}
	for n := 1; n <= d.Ctx.PageCount; n++ {
		p, err := d.Page(n)
		if err != nil {
			return err
		}
		av, err := d.Deref(p.Dict["Annots"])
		if err != nil {
			return err
		}
		annots, _ := av.(types.Array)
		var kept types.Array
		for _, a := range annots {
			if r, ok := a.(types.IndirectRef); ok && removed[r.ObjectNumber.Value()] {
				continue
			}
			kept = append(kept, a)
		}
		if len(kept) == len(annots) {
			continue
		}
		if len(kept) == 0 {
			delete(p.Dict, "Annots")
		} else {
			p.Dict["Annots"] = kept
		}
		d.Set(p.Ref, p.Dict)
	}
	af = af.Clone().(types.Dict)
	if keep == nil {
		keep = types.Array{}
	}
	af["Fields"] = keep
	setAcroForm(d, cat, catRef, af)
	return nil
}

// setAcroForm writes af as the new AcroForm dictionary: in place of its indirect object, or
// in a new version of the catalog when it is direct.
func setAcroForm(d *pdfdoc.Doc, cat types.Dict, catRef types.IndirectRef, af types.Dict) {
	if r, ok := cat["AcroForm"].(types.IndirectRef); ok {
		d.Set(r, af)
		return
	}
	cat = cat.Clone().(types.Dict)
	cat["AcroForm"] = af
	d.Set(catRef, cat)
}

// dropFormRegeneration removes the AcroForm's /NeedAppearances and /XFA, so that a viewer
// neither rebuilds appearances nor shows an XFA form in place of the drawn values.
func dropFormRegeneration(d *pdfdoc.Doc) error {
	cat, catRef, err := d.Catalog()
	if err != nil {
		return err
	}
	af, err := d.DerefDict(cat["AcroForm"])
	if err != nil || af == nil || af["NeedAppearances"] == nil && af["XFA"] == nil {
		return err
	}
	af = af.Clone().(types.Dict)
	delete(af, "NeedAppearances")
	delete(af, "XFA")
	setAcroForm(d, cat, catRef, af)
	return nil
}

func collectRefs(d *pdfdoc.Doc, o types.Object, into map[int]bool, depth int) {
	if r, ok := o.(types.IndirectRef); ok {
		if into[r.ObjectNumber.Value()] {
			return
		}
		into[r.ObjectNumber.Value()] = true
	}
	if depth > 32 {
		return
	}
	f, err := d.DerefDict(o)
	if err != nil || f == nil {
		return
	}
	kv, _ := d.Deref(f["Kids"])
	kids, _ := kv.(types.Array)
	for _, k := range kids {
		collectRefs(d, k, into, depth+1)
	}
}
