// Package pdfdoc reads a PDF with pdfcpu and appends one incremental update to it: new objects
// and new versions of existing objects are written after the original bytes, followed by a
// cross-reference section whose /Prev points at the previous one. The original bytes are
// never modified, which is what a PAdES signature and an auditor expect.
//
// The update's section has the form of the source's last one: a classic table after a table,
// a cross-reference stream after a stream (PDF 1.5 object streams), so that a reader never
// meets a table pointing at a stream section. Only a source whose last section cannot be
// located is first rewritten once by pdfcpu with a classic table; see Open.
package pdfdoc

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strconv"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/filter"
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
	// xrefStream: the source's last cross-reference section is a stream, so the update's
	// section is one too (see Update).
	xrefStream bool
	released   bool
	memo       map[string]any
	root       types.IndirectRef
	info       *types.IndirectRef
	finishers  []func() error
	// ascii: the update is written in 7-bit ASCII only (see SetASCII).
	ascii bool
}

// SetASCII makes the update 7-bit ASCII text: no binary comment after the header, and every
// stream ASCII85-encoded over its own filters. Such a PDF passes unchanged through a channel
// that carries text only (the Functions host's HTTP output of an invoked function).
func (d *Doc) SetASCII() { d.ascii = true }

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

// Open parses src. The streams of the source are not kept in Ctx (their dictionaries are, their
// data is not: see dropStreamData), so Ctx cannot be written out again. Errors: apperr invalid "pdf_unreadable" when pdfcpu cannot read it (a
// panic inside pdfcpu on malformed input is recovered into this error), "pdf_encrypted" for
// encrypted files.
func Open(src []byte) (d *Doc, err error) {
	return OpenWithin(src, DefaultLimits)
}

// OpenWithin is Open under the budget l instead of DefaultLimits; past it the answer is apperr
// invalid "pdf_too_complex" (field "pdf"). At most two parses run at once in a process (the
// others wait): see Limits.
func OpenWithin(src []byte, l Limits) (d *Doc, err error) {
	defer acquireParse()()
	defer func() {
		if r := recover(); r != nil {
			d, err = nil, apperr.Invalid(CodeUnreadable, apperr.Field("pdf", fmt.Sprintf("malformed PDF (%v)", r)))
		}
	}()
	if err := prescan(src, l); err != nil {
		return nil, err
	}
	return open(src, l)
}

func open(src []byte, l Limits) (*Doc, error) {
	conf := model.NewDefaultConfiguration()
	conf.ValidationMode = model.ValidationRelaxed
	applyLimits(conf, l)
	ctx, err := api.ReadContext(bytes.NewReader(src), conf)
	if errors.Is(err, filter.ErrDecodeLimitExceeded) {
		return nil, tooComplex(fmt.Sprintf("a stream decodes to more than %d bytes", l.StreamBytes))
	}
	if err != nil {
		return nil, apperr.Invalid(CodeUnreadable, apperr.Field("pdf", "not a readable PDF: "+err.Error()))
	}
	if ctx.XRefTable.Size != nil && *ctx.XRefTable.Size > maxObjects+1 {
		// pdfcpu walks every object number up to /Size when it writes (the rewrite below): a
		// forged number would keep it busy for hours.
		return nil, apperr.Invalid(CodeUnreadable, apperr.Field("pdf", fmt.Sprintf("object numbers beyond %d, the PDF limit", maxObjects)))
	}
	if ctx.XRefTable.Encrypt != nil {
		return nil, apperr.Invalid("pdf_encrypted", apperr.Field("pdf", "encrypted PDFs cannot be sealed"))
	}
	prev, kind := lastXRef(src)
	if kind == xrefStreamSection && !ctx.Read.UsingXRefStreams {
		kind = xrefUnknown
	}
	rewritten := false
	if kind == xrefUnknown {
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
		if prev, kind = lastXRef(src); kind != xrefTable {
			return nil, fmt.Errorf("pdfdoc: rewritten PDF still lacks a classic xref table")
		}
		rewritten = true
	}
	dropStreamData(ctx)
	if err := ensurePageCount(ctx); err != nil {
		return nil, apperr.Invalid(CodeUnreadable, apperr.Field("pdf", "page tree: "+err.Error()))
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
		objs: map[int]any{}, gens: map[int]int{}, Rewritten: rewritten, xrefStream: kind == xrefStreamSection,
	}, nil
}

// maxObjects is the largest object number a PDF may have (ISO 32000-1, annex C.2).
const maxObjects = 8_388_607

// dropStreamData forgets the data pdfcpu read for every stream of the source: the update
// refers to source streams by reference and never rewrites them, so holding their bytes (for
// a large scan, most of the file) would only double the memory a seal needs. Object streams
// are kept: the objects compressed in them are decoded from them on demand.
func dropStreamData(ctx *model.Context) {
	for _, e := range ctx.XRefTable.Table {
		if e == nil {
			continue
		}
		if sd, ok := e.Object.(types.StreamDict); ok {
			sd.Raw, sd.Content = nil, nil
			e.Object = sd
		}
	}
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

type xrefKind int

const (
	xrefUnknown xrefKind = iota
	xrefTable
	xrefStreamSection
)

// lastXRef returns the offset after the last "startxref" and what starts there: a classic
// "xref" table, a cross-reference stream object, or neither.
func lastXRef(b []byte) (int64, xrefKind) {
	i := bytes.LastIndex(b, []byte("startxref"))
	if i < 0 {
		return 0, xrefUnknown
	}
	rest := bytes.TrimLeft(b[i+len("startxref"):], " \r\n\t")
	j := 0
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	off, err := strconv.ParseInt(string(rest[:j]), 10, 64)
	if err != nil || off < 0 || off >= int64(len(b)) {
		return 0, xrefUnknown
	}
	at := bytes.TrimLeft(b[off:], " \r\n\t")
	switch {
	case bytes.HasPrefix(at, []byte("xref")):
		return off, xrefTable
	case isXRefStream(b, off):
		return off, xrefStreamSection
	}
	return off, xrefUnknown
}

var xrefType = regexp.MustCompile(`/Type\s*/XRef\b`)

// isXRefStream reports whether an "N G obj" whose dictionary has /Type /XRef starts at off.
func isXRefStream(b []byte, off int64) bool {
	at := bytes.TrimLeft(b[off:min(int64(len(b)), off+64)], " \r\n\t")
	f := bytes.Fields(at)
	if len(f) < 3 || !bytes.HasPrefix(f[2], []byte("obj")) {
		return false
	}
	if _, err := strconv.Atoi(string(f[0])); err != nil {
		return false
	}
	if _, err := strconv.Atoi(string(f[1])); err != nil {
		return false
	}
	head := b[off:min(int64(len(b)), off+4096)]
	if i := bytes.Index(head, []byte("stream")); i >= 0 {
		head = head[:i]
	}
	return xrefType.Match(head)
}

// Release drops the parsed source (pdfcpu's context, which holds every stream of the source)
// and the pending objects, so that the garbage collector can take them while the caller still
// works with Base() and an Update it already has. d must not be used afterwards: Update and
// Bytes return ErrReleased.
func (d *Doc) Release() {
	d.Ctx, d.objs, d.gens, d.finishers, d.memo, d.released = nil, nil, nil, nil, nil, true
}

// ErrReleased is returned by Update and Bytes after Release.
var ErrReleased = errors.New("pdfdoc: document used after Release")

// Memo returns the value stored under key by an earlier call on d, or stores and returns
// what make gives (not storing an error). Packages use it to share one object between the
// places that need it, e.g. one image XObject for a drawing stamped several times.
func (d *Doc) Memo(key string, make func() (any, error)) (any, error) {
	if v, ok := d.memo[key]; ok {
		return v, nil
	}
	v, err := make()
	if err != nil {
		return nil, err
	}
	if d.memo == nil {
		d.memo = map[string]any{}
	}
	d.memo[key] = v
	return v, nil
}

// Info returns the current document information dictionary reference, if any.
func (d *Doc) Info() *types.IndirectRef { return d.info }

// SetInfo writes a new version of the document information dictionary: the current one (if
// any) with entries set over it. It returns the dictionary's reference, which the trailer of
// the update names from then on.
func (d *Doc) SetInfo(entries types.Dict) types.IndirectRef {
	info := types.Dict{}
	if d.info != nil {
		if old, err := d.DerefDict(*d.info); err == nil && old != nil {
			info = old.Clone().(types.Dict)
		}
	}
	for k, v := range entries {
		info[k] = v
	}
	if d.info != nil {
		d.Set(*d.info, info)
		return *d.info
	}
	ref := d.Add(info)
	d.info = &ref
	return ref
}

// TextString encodes s as a PDF text string (UTF-16BE with a byte order mark, in hex), for
// entries such as /Title that may hold any script.
func TextString(s string) types.HexLiteral {
	return types.HexLiteral(hex.EncodeToString([]byte(types.EncodeUTF16String(s))))
}

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
