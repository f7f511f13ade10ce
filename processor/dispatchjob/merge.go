package dispatchjob

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// merger writes one PDF made of the pages of many, streaming: each source is read, its pages
// and every object they reach are renumbered and written out at once, and only the output's
// object offsets and page references stay in memory (a few bytes per object), so memory does
// not grow with the number of sources beyond those. Object numbers 1 and 2 are the output's
// page tree and catalog, written last; each page is re-parented to that page tree with the
// attributes it inherited (resources, media box, crop box, rotation) copied into it. What is
// not reached from a page (an AcroForm, outlines, metadata of the source) is left out.
type merger struct {
	w       *bufio.Writer
	n       int64   // bytes written
	offsets []int64 // offsets[i] is object i+1's; 0 for the two written last
	kids    []int   // the pages' object numbers in order
	conf    *model.Configuration
}

func newMerger(w io.Writer) (*merger, error) {
	conf := model.NewDefaultConfiguration()
	conf.ValidationMode = model.ValidationRelaxed
	m := &merger{w: bufio.NewWriterSize(w, 64<<10), offsets: []int64{0, 0}, conf: conf}
	return m, m.write("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
}

func (m *merger) write(s string) error {
	k, err := m.w.WriteString(s)
	m.n += int64(k)
	return err
}

// add appends src's pages.
func (m *merger) add(src []byte) error {
	ctx, err := api.ReadContext(bytes.NewReader(src), m.conf) // our own renders: read, not validated
	if err != nil {
		return err
	}
	xt := ctx.XRefTable
	if err := xt.EnsurePageCount(); err != nil {
		return err
	}
	renum := map[int]int{}
	var queue []int // old object numbers, in the order of their new numbers
	newNr := func(old int) int {
		if nr, ok := renum[old]; ok {
			return nr
		}
		m.offsets = append(m.offsets, 0)
		renum[old] = len(m.offsets)
		queue = append(queue, old)
		return len(m.offsets)
	}
	pages := map[int]*model.InheritedPageAttrs{}
	for p := 1; p <= xt.PageCount; p++ {
		_, ref, inh, err := xt.PageDict(p, false)
		if err != nil {
			return err
		}
		pages[ref.ObjectNumber.Value()] = inh
		m.kids = append(m.kids, newNr(ref.ObjectNumber.Value()))
	}
	for i := 0; i < len(queue); i++ {
		old := queue[i]
		e, ok := xt.FindTableEntryLight(old)
		if !ok || e.Free || e.Object == nil {
			if err := m.object(renum[old], "null"); err != nil {
				return err
			}
			continue
		}
		var body string
		switch o := e.Object.(type) {
		case types.StreamDict:
			d := rewrite(o.Dict, newNr).(types.Dict)
			d["Length"] = types.Integer(len(o.Raw))
			body = d.PDFString() + "\nstream\n" + string(o.Raw) + "\nendstream"
		case types.Dict:
			inh, isPage := pages[old]
			if isPage {
				o = pageObject(o, inh)
			}
			d := rewrite(o, newNr).(types.Dict)
			if isPage {
				d["Parent"] = *types.NewIndirectRef(1, 0)
			}
			body = d.PDFString()
		default:
			body = pdfString(rewrite(e.Object, newNr))
		}
		if err := m.object(renum[old], body); err != nil {
			return err
		}
	}
	return nil
}

// pageObject is a page dictionary without its Parent (the output's page tree replaces it), with
// its inherited attributes.
func pageObject(d types.Dict, inh *model.InheritedPageAttrs) types.Dict {
	out := types.Dict{}
	for k, v := range d {
		if k != "Parent" {
			out[k] = v
		}
	}
	if inh != nil {
		if _, ok := out["Resources"]; !ok && inh.Resources != nil {
			out["Resources"] = inh.Resources
		}
		if _, ok := out["MediaBox"]; !ok && inh.MediaBox != nil {
			out["MediaBox"] = inh.MediaBox.Array()
		}
		if _, ok := out["CropBox"]; !ok && inh.CropBox != nil {
			out["CropBox"] = inh.CropBox.Array()
		}
		if _, ok := out["Rotate"]; !ok && inh.Rotate != 0 {
			out["Rotate"] = types.Integer(inh.Rotate)
		}
	}
	return out
}

// rewrite copies obj with every indirect reference renumbered.
func rewrite(obj types.Object, newNr func(int) int) types.Object {
	switch o := obj.(type) {
	case types.IndirectRef:
		return *types.NewIndirectRef(newNr(o.ObjectNumber.Value()), 0)
	case *types.IndirectRef:
		return rewrite(*o, newNr)
	case types.Dict:
		out := types.Dict{}
		for k, v := range o {
			out[k] = rewrite(v, newNr)
		}
		return out
	case types.Array:
		out := make(types.Array, len(o))
		for i, v := range o {
			out[i] = rewrite(v, newNr)
		}
		return out
	case types.StreamDict:
		return rewrite(o.Dict, newNr)
	}
	return obj
}

func pdfString(o types.Object) string {
	if o == nil {
		return "null"
	}
	return o.PDFString()
}

// object writes object nr with body, recording its offset.
func (m *merger) object(nr int, body string) error {
	m.offsets[nr-1] = m.n
	return m.write(strconv.Itoa(nr) + " 0 obj\n" + body + "\nendobj\n")
}

// close writes the page tree, the catalog, the cross-reference table and the trailer.
func (m *merger) close() error {
	var kids bytes.Buffer
	for i, k := range m.kids {
		if i > 0 {
			kids.WriteByte(' ')
		}
		fmt.Fprintf(&kids, "%d 0 R", k)
	}
	if err := m.object(1, fmt.Sprintf("<</Type /Pages /Kids [%s] /Count %d>>", kids.String(), len(m.kids))); err != nil {
		return err
	}
	if err := m.object(2, "<</Type /Catalog /Pages 1 0 R>>"); err != nil {
		return err
	}
	xref := m.n
	var sb bytes.Buffer
	fmt.Fprintf(&sb, "xref\n0 %d\n0000000000 65535 f \n", len(m.offsets)+1)
	for _, off := range m.offsets {
		fmt.Fprintf(&sb, "%010d 00000 n \n", off)
		if sb.Len() > 32<<10 {
			if err := m.write(sb.String()); err != nil {
				return err
			}
			sb.Reset()
		}
	}
	fmt.Fprintf(&sb, "trailer\n<</Size %d /Root 2 0 R>>\nstartxref\n%d\n%%%%EOF\n", len(m.offsets)+1, xref)
	if err := m.write(sb.String()); err != nil {
		return err
	}
	return m.w.Flush()
}
