package pdfdoc

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"io"
	"sync"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// flaters holds zlib writers for reuse: a new writer allocates about 1 MB of compressor
// state, and a seal compresses dozens of streams.
var flaters = sync.Pool{New: func() any {
	zw, _ := zlib.NewWriterLevel(io.Discard, zlib.BestSpeed)
	return &flater{zw: zw}
}}

type flater struct {
	zw  *zlib.Writer
	buf bytes.Buffer
}

// maxPooledScratch bounds the scratch buffer kept in the pool between uses.
const maxPooledScratch = 1 << 20

// NewFlateStream returns data compressed with /FlateDecode under dict (nil for an empty dict).
// The compressed bytes are a fresh slice of the exact size.
func NewFlateStream(dict types.Dict, data []byte) Stream {
	s, _ := NewFlateStreamFunc(dict, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
	return s
}

// NewFlateStreamFunc is NewFlateStream for data that write produces piece by piece, so that
// the uncompressed data never has to exist in one slice. Errors: write's error.
func NewFlateStreamFunc(dict types.Dict, write func(io.Writer) error) (Stream, error) {
	f := flaters.Get().(*flater)
	f.buf.Reset()
	f.zw.Reset(&f.buf)
	err := write(f.zw)
	if cerr := f.zw.Close(); err == nil {
		err = cerr
	}
	out := bytes.Clone(f.buf.Bytes())
	f.zw.Reset(io.Discard)
	if f.buf.Cap() > maxPooledScratch {
		f.buf = bytes.Buffer{}
	}
	flaters.Put(f)
	if err != nil {
		return Stream{}, err
	}
	if dict == nil {
		dict = types.Dict{}
	}
	dict["Filter"] = types.Name("FlateDecode")
	return Stream{Dict: dict, Data: out}, nil
}

// PageCount returns the number of pages, including pages appended by this update.
func (d *Doc) PageCount() (int, error) {
	cat, _, err := d.Catalog()
	if err != nil {
		return 0, err
	}
	pages, err := d.DerefDict(cat["Pages"])
	if err != nil || pages == nil {
		return 0, fmt.Errorf("pdfdoc: no page tree: %v", err)
	}
	n := pages.IntEntry("Count")
	if n == nil {
		return 0, fmt.Errorf("pdfdoc: page tree without /Count")
	}
	return *n, nil
}

// Page is one page of the source, with the attributes it inherits resolved.
type Page struct {
	Ref      types.IndirectRef
	Dict     types.Dict // a copy: change it and call SetPage
	MediaBox types.Rectangle
}

// Page returns page n (1-based) of the source document.
func (d *Doc) Page(n int) (*Page, error) {
	if d.Ctx == nil || n < 1 || n > d.Ctx.PageCount {
		return nil, fmt.Errorf("pdfdoc: page %d does not exist", n)
	}
	dict, ref, inh, err := d.Ctx.PageDict(n, false)
	if err != nil || ref == nil {
		return nil, fmt.Errorf("pdfdoc: page %d: %v", n, err)
	}
	if d.Changed(*ref) {
		if dict, err = d.DerefDict(*ref); err != nil {
			return nil, err
		}
	}
	p := &Page{Ref: *ref, Dict: dict.Clone().(types.Dict)}
	if _, ok := p.Dict["Resources"]; !ok && inh != nil && inh.Resources != nil {
		p.Dict["Resources"] = inh.Resources.Clone()
	}
	if inh != nil && inh.MediaBox != nil {
		p.MediaBox = *inh.MediaBox
	}
	if mb, err := d.rect(p.Dict["MediaBox"]); err == nil && mb != nil {
		p.MediaBox = *mb
	}
	if p.MediaBox.Width() <= 0 || p.MediaBox.Height() <= 0 {
		p.MediaBox = *types.NewRectangle(0, 0, 612, 792)
	}
	return p, nil
}

func (d *Doc) rect(o types.Object) (*types.Rectangle, error) {
	if o == nil {
		return nil, nil
	}
	v, err := d.Deref(o)
	if err != nil {
		return nil, err
	}
	a, ok := v.(types.Array)
	if !ok || len(a) != 4 {
		return nil, fmt.Errorf("not a rectangle")
	}
	var f [4]float64
	for i, e := range a {
		e, err := d.Deref(e)
		if err != nil {
			return nil, err
		}
		switch n := e.(type) {
		case types.Integer:
			f[i] = float64(n)
		case types.Float:
			f[i] = float64(n)
		default:
			return nil, fmt.Errorf("not a number")
		}
	}
	return types.NewRectangle(f[0], f[1], f[2], f[3]), nil
}

// Resources returns a direct, writable copy of the page's resource dictionary.
func (d *Doc) Resources(p *Page) (types.Dict, error) {
	res, err := d.DerefDict(p.Dict["Resources"])
	if err != nil {
		return nil, err
	}
	if res == nil {
		return types.Dict{}, nil
	}
	res = res.Clone().(types.Dict)
	for _, k := range []string{"XObject", "Font", "ExtGState"} {
		sub, err := d.DerefDict(res[k])
		if err != nil {
			return nil, err
		}
		if sub != nil {
			res[k] = sub.Clone()
		}
	}
	return res, nil
}

// Overlay draws content over page p: the existing content is wrapped in q/Q so that its
// graphics state cannot leak into the overlay. resources is the page's new resource dict.
func (d *Doc) Overlay(p *Page, content []byte, resources types.Dict) error {
	var old types.Array
	switch c := p.Dict["Contents"].(type) {
	case nil:
	case types.IndirectRef:
		v, err := d.Deref(c)
		if err != nil {
			return err
		}
		if a, ok := v.(types.Array); ok {
			old = a
		} else {
			old = types.Array{c}
		}
	case types.Array:
		old = c
	default:
		return fmt.Errorf("pdfdoc: page %s has unsupported /Contents", p.Ref.String())
	}
	pre := d.AddStream(Stream{Dict: types.Dict{}, Data: []byte("q\n")})
	post := d.AddStream(NewFlateStream(nil, append([]byte("Q\n"), content...)))
	contents := append(append(types.Array{pre}, old...), post)
	p.Dict["Contents"] = contents
	p.Dict["Resources"] = resources
	d.Set(p.Ref, p.Dict)
	return nil
}

// AppendPage adds a page of the given size at the end of the document.
func (d *Doc) AppendPage(width, height float64, content []byte, resources types.Dict) (types.IndirectRef, error) {
	cat, _, err := d.Catalog()
	if err != nil {
		return types.IndirectRef{}, err
	}
	pagesRef, ok := cat["Pages"].(types.IndirectRef)
	if !ok {
		return types.IndirectRef{}, fmt.Errorf("pdfdoc: /Pages is not an indirect reference")
	}
	pages, err := d.DerefDict(pagesRef)
	if err != nil || pages == nil {
		return types.IndirectRef{}, fmt.Errorf("pdfdoc: page tree root: %v", err)
	}
	pages = pages.Clone().(types.Dict)
	kids, err := d.Deref(pages["Kids"])
	if err != nil {
		return types.IndirectRef{}, err
	}
	ka, _ := kids.(types.Array)
	contentRef := d.AddStream(NewFlateStream(nil, content))
	page := d.Add(types.Dict{
		"Type":      types.Name("Page"),
		"Parent":    pagesRef,
		"MediaBox":  types.NewNumberArray(0, 0, width, height),
		"Contents":  contentRef,
		"Resources": resources,
	})
	pages["Kids"] = append(append(types.Array{}, ka...), page)
	count := 0
	if c := pages.IntEntry("Count"); c != nil {
		count = *c
	}
	pages["Count"] = types.Integer(count + 1)
	d.Set(pagesRef, pages)
	return page, nil
}
