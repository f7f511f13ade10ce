package pdfdoc

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"golang.org/x/image/font"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"

	"github.com/esign-svc/esign/shared/pdf/fonts"
)

// face is the parsed embedded font with a cache of glyph lookups; shared by all documents.
type face struct {
	raw        []byte
	f          *sfnt.Font
	upem       int
	mu         sync.Mutex
	buf        sfnt.Buffer
	gid        map[rune]uint16
	adv        map[uint16]int // advance in font units
	ascent     int
	descent    int
	capHeight  int
	bbox       [4]int
	numGlyphs  int
	parseError error
}

var (
	faceOnce sync.Once
	theFace  *face
)

func loadFace() (*face, error) {
	faceOnce.Do(func() {
		fc := &face{raw: fonts.DejaVuSans(), gid: map[rune]uint16{}, adv: map[uint16]int{}}
		theFace = fc
		f, err := sfnt.Parse(fc.raw)
		if err != nil {
			fc.parseError = fmt.Errorf("pdfdoc: parse embedded font: %w", err)
			return
		}
		fc.f = f
		fc.upem = int(f.UnitsPerEm())
		fc.numGlyphs = f.NumGlyphs()
		ppem := fixed.Int26_6(fc.upem << 6)
		m, err := f.Metrics(&fc.buf, ppem, font.HintingNone)
		if err != nil {
			fc.parseError = err
			return
		}
		fc.ascent, fc.descent, fc.capHeight = m.Ascent.Round(), -m.Descent.Round(), m.CapHeight.Round()
		b, err := f.Bounds(&fc.buf, ppem, font.HintingNone)
		if err != nil {
			fc.parseError = err
			return
		}
		fc.bbox = [4]int{b.Min.X.Round(), -b.Max.Y.Round(), b.Max.X.Round(), -b.Min.Y.Round()}
	})
	return theFace, theFace.parseError
}

// glyph returns the glyph id of r (0, .notdef, when the font lacks it) and its advance in
// 1/1000 em.
func (fc *face) glyph(r rune) (uint16, float64) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	g, ok := fc.gid[r]
	if !ok {
		x, err := fc.f.GlyphIndex(&fc.buf, r)
		if err == nil {
			g = uint16(x)
		}
		fc.gid[r] = g
	}
	a, ok := fc.adv[g]
	if !ok {
		v, err := fc.f.GlyphAdvance(&fc.buf, sfnt.GlyphIndex(g), fixed.Int26_6(fc.upem<<6), font.HintingNone)
		if err == nil {
			a = v.Round()
		}
		fc.adv[g] = a
	}
	return g, float64(a) * 1000 / float64(fc.upem)
}

// Font is the embedded TrueType font (DejaVu Sans) as a Type0/CIDFontType2 font of one
// document, Identity-H encoded, subset to the glyphs used, with a ToUnicode map so that text
// can be extracted. Text is shaped by Shape (bidi reordering and Arabic joining) before use.
type Font struct {
	Ref   types.IndirectRef
	face  *face
	used  map[uint16][]rune
	doc   *Doc
	added bool
}

// NewFont registers the font in d; its objects are written when d is serialised.
func NewFont(d *Doc) (*Font, error) {
	fc, err := loadFace()
	if err != nil {
		return nil, err
	}
	f := &Font{Ref: d.Alloc(), face: fc, used: map[uint16][]rune{0: nil}, doc: d}
	d.OnBytes(f.write)
	return f, nil
}

// Width returns the width of s (already shaped) at size points.
func (f *Font) Width(s string, size float64) float64 {
	w := 0.0
	for _, r := range s {
		_, a := f.face.glyph(r)
		w += a
	}
	return w * size / 1000
}

// Hex returns s (already shaped) as a hex string operand of glyph ids for Tj, and records the
// glyphs for the subset and the ToUnicode map.
func (f *Font) Hex(s string) string {
	var b strings.Builder
	b.WriteByte('<')
	for _, r := range s {
		g, _ := f.face.glyph(r)
		if len(f.used[g]) == 0 && g != 0 {
			f.used[g] = unshape(r)
		}
		fmt.Fprintf(&b, "%04X", g)
	}
	b.WriteByte('>')
	return b.String()
}

func (f *Font) write() error {
	gids := make([]uint16, 0, len(f.used))
	for g := range f.used {
		gids = append(gids, g)
	}
	sort.Slice(gids, func(i, j int) bool { return gids[i] < gids[j] })
	sub, err := subsetTrueType(f.face.raw, gids)
	if err != nil {
		return err
	}
	const name = "AAAAAA+DejaVuSans"
	ffRef := f.doc.AddStream(NewFlateStream(types.Dict{"Length1": types.Integer(len(sub))}, sub))
	fc := f.face
	scale := func(v int) float64 { return float64(v) * 1000 / float64(fc.upem) }
	desc := f.doc.Add(types.Dict{
		"Type":        types.Name("FontDescriptor"),
		"FontName":    types.Name(name),
		"Flags":       types.Integer(32),
		"FontBBox":    types.NewNumberArray(scale(fc.bbox[0]), scale(fc.bbox[1]), scale(fc.bbox[2]), scale(fc.bbox[3])),
		"ItalicAngle": types.Integer(0),
		"Ascent":      types.Float(scale(fc.ascent)),
		"Descent":     types.Float(-scale(fc.descent)),
		"CapHeight":   types.Float(scale(fc.capHeight)),
		"StemV":       types.Integer(80),
		"FontFile2":   ffRef,
	})
	w := types.Array{}
	for _, g := range gids {
		fc.mu.Lock()
		adv, ok := fc.adv[g]
		fc.mu.Unlock()
		if !ok {
			continue
		}
		w = append(w, types.Integer(g), types.Array{types.Float(float64(adv) * 1000 / float64(fc.upem))})
	}
	cid := f.doc.Add(types.Dict{
		"Type":           types.Name("Font"),
		"Subtype":        types.Name("CIDFontType2"),
		"BaseFont":       types.Name(name),
		"CIDSystemInfo":  types.Dict{"Registry": types.StringLiteral("Adobe"), "Ordering": types.StringLiteral("Identity"), "Supplement": types.Integer(0)},
		"FontDescriptor": desc,
		"DW":             types.Integer(1000),
		"W":              w,
		"CIDToGIDMap":    types.Name("Identity"),
	})
	toUni := f.doc.AddStream(NewFlateStream(nil, []byte(toUnicodeCMap(f.used))))
	f.doc.Set(f.Ref, types.Dict{
		"Type":            types.Name("Font"),
		"Subtype":         types.Name("Type0"),
		"BaseFont":        types.Name(name),
		"Encoding":        types.Name("Identity-H"),
		"DescendantFonts": types.Array{cid},
		"ToUnicode":       toUni,
	})
	return nil
}

func toUnicodeCMap(used map[uint16][]rune) string {
	var b strings.Builder
	b.WriteString("/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n" +
		"/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n" +
		"/CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n" +
		"1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n")
	gids := make([]int, 0, len(used))
	for g, rs := range used {
		if len(rs) > 0 {
			gids = append(gids, int(g))
		}
	}
	sort.Ints(gids)
	for i := 0; i < len(gids); i += 100 {
		chunk := gids[i:min(i+100, len(gids))]
		fmt.Fprintf(&b, "%d beginbfchar\n", len(chunk))
		for _, g := range chunk {
			fmt.Fprintf(&b, "<%04X> <", g)
			for _, r := range used[uint16(g)] {
				for _, u := range utf16Units(r) {
					fmt.Fprintf(&b, "%04X", u)
				}
			}
			b.WriteString(">\n")
		}
		b.WriteString("endbfchar\n")
	}
	b.WriteString("endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n")
	return b.String()
}

func utf16Units(r rune) []uint16 {
	if r < 0x10000 {
		return []uint16{uint16(r)}
	}
	r -= 0x10000
	return []uint16{uint16(0xD800 + (r >> 10)), uint16(0xDC00 + (r & 0x3FF))}
}
