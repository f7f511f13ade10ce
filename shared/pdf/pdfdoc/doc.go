// Package pdfdoc reads a PDF with pdfcpu and appends one incremental update to it: new objects
// and new versions of existing objects are written after the original bytes, followed by a
// classic cross-reference table and a trailer whose /Prev points at the previous section. The
// original bytes are never modified, which is what a PAdES signature and an auditor expect.
//
// A source whose last cross-reference section is a stream (PDF 1.5 object streams) is first
// rewritten once by pdfcpu with a classic table, so that the update is never a hybrid of a
// table pointing at a stream section; see Open.
package pdfdoc

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"sort"
	"strconv"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"

	"github.com/esign-svc/esign/shared/apperr"
)

func init() { api.DisableConfigDir() }

// Stream is a stream object to be written in the update. Data is written as given; set the
// /Filter entry in Dict when Data is encoded (see NewFlateStream).
type Stream struct {
	Dict types.Dict
	Data []byte
}

// Doc is a PDF opened for one incremental update. It is not safe for concurrent use.
type Doc struct {
	base      []byte
	prevXRef  int64
	Ctx       *model.Context
	size      int // next free object number
	objs      map[int]any
	gens      map[int]int
	Rewritten bool // true when Open had to rewrite the source (see package doc)
	root      types.IndirectRef
	info      *types.IndirectRef
	finishers []func() error
}

// New starts an empty document (no source): the caller adds pages with AddPage.
func New() *Doc {
	d := &Doc{size: 1, objs: map[int]any{}, gens: map[int]int{}}
	pages := d.Alloc()
	d.Set(pages, types.Dict{"Type": types.Name("Pages"), "Kids": types.Array{}, "Count": types.Integer(0)})
	d.root = d.Add(types.Dict{"Type": types.Name("Catalog"), "Pages": pages})
	return d
}

// OnBytes registers f to run once before the update is serialised (fonts write their subset
// this way, after every glyph is known).
func (d *Doc) OnBytes(f func() error) { d.finishers = append(d.finishers, f) }

// Open parses src. Errors: apperr invalid "pdf_unreadable" when pdfcpu cannot read it (a
// panic inside pdfcpu on malformed input is recovered into this error), "pdf_encrypted" for
// encrypted files.
func Open(src []byte) (d *Doc, err error) {
	defer func() {
		if r := recover(); r != nil {
			d, err = nil, apperr.Invalid("pdf_unreadable", apperr.Field("pdf", fmt.Sprintf("malformed PDF (%v)", r)))
		}
	}()
	return open(src)
}

func open(src []byte) (*Doc, error) {
	conf := model.NewDefaultConfiguration()
	conf.ValidationMode = model.ValidationRelaxed
	ctx, err := api.ReadContext(bytes.NewReader(src), conf)
	if err != nil {
		return nil, apperr.Invalid("pdf_unreadable", apperr.Field("pdf", "not a readable PDF: "+err.Error()))
	}
	if ctx.XRefTable.Encrypt != nil {
		return nil, apperr.Invalid("pdf_encrypted", apperr.Field("pdf", "encrypted PDFs cannot be sealed"))
	}
	prev, classic := lastXRef(src)
	rewritten := false
	if !classic {
		ctx.Conf.WriteXRefStream = false
		ctx.Conf.WriteObjectStream = false
		var buf bytes.Buffer
		if err := api.WriteContext(ctx, &buf); err != nil {
			return nil, fmt.Errorf("pdfdoc: rewrite with classic xref: %w", err)
		}
		src = buf.Bytes()
		if ctx, err = api.ReadContext(bytes.NewReader(src), conf); err != nil {
			return nil, fmt.Errorf("pdfdoc: reread rewritten PDF: %w", err)
		}
		if prev, classic = lastXRef(src); !classic {
			return nil, fmt.Errorf("pdfdoc: rewritten PDF still lacks a classic xref table")
		}
		rewritten = true
	}
	if err := ensurePageCount(ctx); err != nil {
		return nil, apperr.Invalid("pdf_unreadable", apperr.Field("pdf", "page tree: "+err.Error()))
	}
	size := 0
	if ctx.XRefTable.Size != nil {
		size = *ctx.XRefTable.Size
	}
	for nr := range ctx.XRefTable.Table {
		size = max(size, nr+1)
	}
	return &Doc{
		base: src, prevXRef: prev, Ctx: ctx, size: size, root: *ctx.Root, info: ctx.Info,
		objs: map[int]any{}, gens: map[int]int{}, Rewritten: rewritten,
	}, nil
}

func ensurePageCount(ctx *model.Context) error {
	if ctx.PageCount > 0 {
		return nil
	}
	pages, err := ctx.Pages()
	if err != nil {
		return err
	}
	d, err := ctx.DereferenceDict(*pages)
	if err != nil || d == nil {
		return fmt.Errorf("no page tree root")
	}
	n := d.IntEntry("Count")
	if n == nil || *n <= 0 {
		return fmt.Errorf("no pages")
	}
	ctx.PageCount = *n
	return nil
}

// lastXRef returns the offset after the last "startxref" and whether a classic "xref" table
// starts there.
func lastXRef(b []byte) (int64, bool) {
	i := bytes.LastIndex(b, []byte("startxref"))
	if i < 0 {
		return 0, false
	}
	rest := bytes.TrimLeft(b[i+len("startxref"):], " \r\n\t")
	j := 0
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	off, err := strconv.ParseInt(string(rest[:j]), 10, 64)
	if err != nil || off < 0 || off >= int64(len(b)) {
		return 0, false
	}
	return off, bytes.HasPrefix(bytes.TrimLeft(b[off:], " \r\n\t"), []byte("xref"))
}

// Info returns the current document information dictionary reference, if any.
func (d *Doc) Info() *types.IndirectRef { return d.info }

// Base returns the bytes the update is appended to (the source, or its rewrite).
func (d *Doc) Base() []byte { return d.base }

// Alloc reserves a new object number.
func (d *Doc) Alloc() types.IndirectRef {
	nr := d.size
	d.size++
	return *types.NewIndirectRef(nr, 0)
}

// Add writes obj as a new object and returns its reference.
func (d *Doc) Add(obj types.Object) types.IndirectRef {
	ref := d.Alloc()
	d.objs[ref.ObjectNumber.Value()] = obj
	return ref
}

// AddStream writes s as a new object and returns its reference.
func (d *Doc) AddStream(s Stream) types.IndirectRef {
	ref := d.Alloc()
	d.objs[ref.ObjectNumber.Value()] = s
	return ref
}

// Set writes obj (a types.Object or a Stream) as the new version of ref, which may be an
// existing object or one from Alloc.
func (d *Doc) Set(ref types.IndirectRef, obj any) {
	nr := ref.ObjectNumber.Value()
	d.objs[nr] = obj
	d.gens[nr] = ref.GenerationNumber.Value()
}

// Changed reports whether ref is written by this update.
func (d *Doc) Changed(ref types.IndirectRef) bool {
	_, ok := d.objs[ref.ObjectNumber.Value()]
	return ok
}

// Deref resolves o against this update first, then the source.
func (d *Doc) Deref(o types.Object) (types.Object, error) {
	if r, ok := o.(types.IndirectRef); ok {
		if v, ok := d.objs[r.ObjectNumber.Value()]; ok {
			if s, ok := v.(Stream); ok {
				return s.Dict, nil
			}
			return v.(types.Object), nil
		}
	}
	if d.Ctx == nil {
		if _, ok := o.(types.IndirectRef); ok {
			return nil, fmt.Errorf("pdfdoc: unknown object %s", o.String())
		}
		return o, nil
	}
	return d.Ctx.Dereference(o)
}

// DerefDict is Deref for a dictionary; nil when o is nil.
func (d *Doc) DerefDict(o types.Object) (types.Dict, error) {
	v, err := d.Deref(o)
	if err != nil || v == nil {
		return nil, err
	}
	dict, ok := v.(types.Dict)
	if !ok {
		if sd, ok := v.(types.StreamDict); ok {
			return sd.Dict, nil
		}
		return nil, fmt.Errorf("pdfdoc: %s is not a dictionary", o.String())
	}
	return dict, nil
}

// Catalog returns the document catalog and its reference.
func (d *Doc) Catalog() (types.Dict, types.IndirectRef, error) {
	cat, err := d.DerefDict(d.root)
	return cat, d.root, err
}

// Bytes returns the source followed by the update. Without changes it returns the source.
// infoRef, when non-nil, becomes the trailer's /Info.
func (d *Doc) Bytes(infoRef *types.IndirectRef) ([]byte, error) {
	for _, f := range d.finishers {
		if err := f(); err != nil {
			return nil, err
		}
	}
	d.finishers = nil
	if len(d.objs) == 0 && infoRef == nil {
		return d.base, nil
	}
	nrs := make([]int, 0, len(d.objs))
	for nr := range d.objs {
		nrs = append(nrs, nr)
	}
	sort.Ints(nrs)
	var out bytes.Buffer
	out.Grow(len(d.base) + 64*1024)
	if d.base == nil {
		out.WriteString("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	}
	out.Write(d.base)
	if n := len(d.base); n > 0 && d.base[n-1] != '\n' && d.base[n-1] != '\r' {
		out.WriteByte('\n')
	}
	offsets := make(map[int]int, len(nrs))
	for _, nr := range nrs {
		offsets[nr] = out.Len()
		fmt.Fprintf(&out, "%d %d obj\n", nr, d.gens[nr])
		switch v := d.objs[nr].(type) {
		case Stream:
			sd := v.Dict.Clone().(types.Dict)
			sd.Update("Length", types.Integer(len(v.Data)))
			out.WriteString(sd.PDFString())
			out.WriteString("\nstream\n")
			out.Write(v.Data)
			out.WriteString("\nendstream")
		case types.Object:
			out.WriteString(v.PDFString())
		default:
			return nil, fmt.Errorf("pdfdoc: object %d has unsupported type %T", nr, v)
		}
		out.WriteString("\nendobj\n")
	}
	xref := out.Len()
	out.WriteString("xref\n")
	if d.base == nil {
		nrs = append([]int{0}, nrs...)
		d.gens[0] = 65535
	}
	for i := 0; i < len(nrs); {
		j := i
		for j+1 < len(nrs) && nrs[j+1] == nrs[j]+1 {
			j++
		}
		fmt.Fprintf(&out, "%d %d\n", nrs[i], j-i+1)
		for k := i; k <= j; k++ {
			kind := "n"
			if nrs[k] == 0 && d.base == nil {
				kind = "f"
			}
			fmt.Fprintf(&out, "%010d %05d %s\r\n", offsets[nrs[k]], d.gens[nrs[k]], kind)
		}
		i = j + 1
	}
	trailer := types.Dict{"Size": types.Integer(d.size), "Root": d.root}
	if d.base != nil {
		trailer["Prev"] = types.Integer(d.prevXRef)
	}
	if infoRef != nil {
		trailer["Info"] = *infoRef
	} else if d.info != nil {
		trailer["Info"] = *d.info
	}
	trailer["ID"] = d.fileID(out.Len())
	out.WriteString("trailer\n")
	out.WriteString(trailer.PDFString())
	fmt.Fprintf(&out, "\nstartxref\n%d\n%%%%EOF\n", xref)
	return out.Bytes(), nil
}

// fileID keeps the first ID of the source (a new one when it had none) and makes the second
// depend on the update.
func (d *Doc) fileID(n int) types.Array {
	tail := append([]byte(nil), d.base[max(0, len(d.base)-4096):]...)
	sum := sha256.Sum256(append(tail, []byte(strconv.Itoa(n))...))
	second := types.HexLiteral(fmt.Sprintf("%X", sum[:16]))
	if d.Ctx != nil && len(d.Ctx.ID) == 2 {
		return types.Array{d.Ctx.ID[0], second}
	}
	return types.Array{second, second}
}
