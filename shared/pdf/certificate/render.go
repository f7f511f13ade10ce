package certificate

import (
	"fmt"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"

	"github.com/esign-svc/esign/shared/pdf/pdfdoc"
	"github.com/esign-svc/esign/shared/pdf/stamp"
)

// InfoKeyEvidenceHead is the document information dictionary key holding the evidence
// bundle's head hash, so that a verifier reads it without text extraction.
const InfoKeyEvidenceHead = "EsignEvidenceHead"

// PageSize is a page's width and height in points.
type PageSize struct{ W, H float64 }

// A4 is the page size of a certificate without a source document.
var A4 = PageSize{595.28, 841.89}

// minSide is the smallest page side the certificate is set on; a source page smaller than
// this (a label, a ticket) gets A4 certificate pages instead.
const minSide = 360.0

const (
	margin = 50.0
	footer = 30.0
	// table geometry: label column width, cell padding, signature image height
	labelW = 130.0
	pad    = 3.5
	imageH = 48.0
)

var sizes = map[style]float64{styleTitle: 16, styleHeading: 12, styleSubheading: 10, styleBody: 8.5, styleVerbatim: 8.5}

// PageSizeOf is the size of the source document's last page (the page the certificate
// follows), or A4 for a document without pages or with pages too small to hold it.
func PageSizeOf(d *pdfdoc.Doc) PageSize {
	if d.Ctx == nil || d.Ctx.PageCount < 1 {
		return A4
	}
	p, err := d.Page(d.Ctx.PageCount)
	if err != nil {
		return A4
	}
	size := PageSize{p.MediaBox.Width(), p.MediaBox.Height()}
	if size.W < minSide || size.H < minSide {
		return A4
	}
	return size
}

// Append renders c as pages at the end of d, in the page size of d's source (PageSizeOf),
// each with a page footer, and records the head hash in the information dictionary (see
// InfoKeyEvidenceHead). It returns the new /Info reference to pass to d.Bytes. Errors: a
// signature image that is not a PNG (apperr invalid "image_invalid").
func Append(d *pdfdoc.Doc, font *pdfdoc.Font, c Certificate) (types.IndirectRef, error) {
	return appendSized(d, font, c, PageSizeOf(d))
}

func appendSized(d *pdfdoc.Doc, font *pdfdoc.Font, c Certificate, size PageSize) (types.IndirectRef, error) {
	if err := appendBlocks(d, font, c.blocks(), size, "Evidence certificate, correlation ID "+orDash(c.CorrelationID)); err != nil {
		return types.IndirectRef{}, err
	}
	return setInfo(d, c.EvidenceHeadHash)
}

// appendBlocks lays bs out in pages of size at the end of d, each with the footer "<foot>,
// page i of n".
func appendBlocks(d *pdfdoc.Doc, font *pdfdoc.Font, bs []block, size PageSize, footText string) error {
	pages, err := layout(d, font, bs, size)
	if err != nil {
		return err
	}
	for i, pg := range pages {
		var foot pdfdoc.Content
		foot.WriteString("0.4 g\n")
		foot.Text(font, "ESF1", margin, footer, 7, fmt.Sprintf("%s, page %d of %d", footText, i+1, len(pages)))
		body := append(pg.content, foot.Bytes()...)
		res := types.Dict{"Font": types.Dict{"ESF1": font.Ref}}
		if len(pg.images) > 0 {
			res["XObject"] = pg.images
		}
		if _, err := d.AppendPage(size.W, size.H, body, res); err != nil {
			return err
		}
	}
	return nil
}

// Standalone renders c as a PDF of its own, in pages of the given size (the source
// document's, see PageSizeOf).
func Standalone(c Certificate, size PageSize) ([]byte, error) {
	d := pdfdoc.New()
	font, err := pdfdoc.NewFont(d)
	if err != nil {
		return nil, err
	}
	info, err := appendSized(d, font, c, size)
	if err != nil {
		return nil, err
	}
	return d.Bytes(&info)
}

func setInfo(d *pdfdoc.Doc, head string) (types.IndirectRef, error) {
	return d.SetInfo(types.Dict{
		InfoKeyEvidenceHead: types.StringLiteral(head),
		"Producer":          types.StringLiteral("esign evidence sealer"),
	}), nil
}

// page is one laid-out page: its content and the image XObjects it draws.
type page struct {
	content []byte
	images  types.Dict
}

// pager wraps and paginates blocks into pages.
type pager struct {
	d      *pdfdoc.Doc
	font   *pdfdoc.Font
	size   PageSize
	pages  []page
	cur    pdfdoc.Content
	images types.Dict
	y      float64
}

func (p *pager) top() float64    { return p.size.H - margin }
func (p *pager) bottom() float64 { return margin + footer }
func (p *pager) width() float64  { return p.size.W - 2*margin }
func (p *pager) atTop() bool     { return p.y >= p.top() }

func (p *pager) flush() {
	p.pages = append(p.pages, page{content: append([]byte(nil), p.cur.Bytes()...), images: p.images})
	p.cur.Reset()
	p.images = nil
	p.y = p.top()
}

// layout wraps and paginates blocks into pages of the given size.
func layout(d *pdfdoc.Doc, font *pdfdoc.Font, bs []block, size PageSize) ([]page, error) {
	p := &pager{d: d, font: font, size: size}
	p.y = p.top()
	for i, b := range bs {
		if b.rows != nil {
			for _, r := range b.rows {
				if err := p.row(r); err != nil {
					return nil, err
				}
			}
			continue
		}
		// a heading keeps with what it introduces: the next paragraph (which moves whole), or
		// the table (whole when it fits a page, else its first row)
		keep := 0.0
		if i+1 < len(bs) {
			keep = p.height(bs[i+1])
			if keep > p.top()-p.bottom()-30 {
				keep = imageH + 2*pad
			}
		}
		p.text(b, keep)
	}
	if p.cur.Len() > 0 || len(p.pages) == 0 {
		p.flush()
	}
	return p.pages, nil
}

// height is the height of a block set on one page (a paragraph without the space before it).
func (p *pager) height(b block) float64 {
	if b.rows == nil {
		size := sizes[b.style]
		return size * 1.35 * float64(len(pdfdoc.Wrap(p.font, b.text, size, p.width()-indentOf(b.style))))
	}
	h := 0.0
	for _, r := range b.rows {
		if r.image != nil {
			h += imageH + 2*pad
			continue
		}
		labels, values := p.wrapRow(r)
		h += float64(max(len(labels), len(values)))*sizes[styleBody]*1.35 + 2*pad
	}
	return h
}

// wrapRow wraps a text row's label and values to their cells.
func (p *pager) wrapRow(r row) (labels, values []string) {
	size := sizes[styleBody]
	labels = pdfdoc.Wrap(p.font, r.label, size, labelW-2*pad)
	for _, v := range r.values {
		values = append(values, pdfdoc.Wrap(p.font, v, size, p.width()-labelW-2*pad)...)
	}
	return labels, values
}

// indentOf is the left indent of a paragraph style: verbatim text is indented.
func indentOf(s style) float64 {
	if s == styleVerbatim {
		return 14
	}
	return 0
}

// text sets one paragraph, wrapped; a heading is kept with the next keep points of what
// follows it.
func (p *pager) text(b block, keep float64) {
	size := sizes[b.style]
	indent := indentOf(b.style)
	lead := size * 1.35
	before := 0.0
	switch b.style {
	case styleHeading:
		before = 10
	case styleSubheading:
		before = 5
	}
	wrapped := pdfdoc.Wrap(p.font, b.text, size, p.width()-indent)
	need := before + lead*float64(len(wrapped))
	after := 0.0
	if b.style == styleHeading || b.style == styleSubheading {
		after = 4
		need += after + keep
	}
	if p.y-need < p.bottom() && !p.atTop() {
		p.flush()
		before = 0
	}
	p.y -= before
	if b.style == styleVerbatim {
		p.cur.WriteString("0.15 g\n")
	} else {
		p.cur.WriteString("0 g\n")
	}
	for _, w := range wrapped {
		if p.y-lead < p.bottom() {
			p.flush()
		}
		p.y -= lead
		if b.rtl { // a right-to-left paragraph: flush right, the indent on the right
			p.cur.TextRTL(p.font, "ESF1", margin+p.width()-indent-pdfdoc.TextWidth(p.font, w, size), p.y, size, w)
			continue
		}
		p.cur.Text(p.font, "ESF1", margin+indent, p.y, size, w)
	}
	p.y -= after
}

// row sets one table row: a shaded label cell and the value cell, ruled. A row moves to the
// next page whole when it does not fit; only a row taller than a page is split across pages.
func (p *pager) row(r row) error {
	size := sizes[styleBody]
	lead := size * 1.35
	valueX := margin + labelW + pad
	labels, values := p.wrapRow(r)
	if r.image != nil {
		if p.y-imageH-2*pad < p.bottom() && !p.atTop() {
			p.flush()
		}
		ref, w, h, err := stamp.AddPNG(p.d, r.image)
		if err != nil {
			return err
		}
		if p.images == nil {
			p.images = types.Dict{}
		}
		name := fmt.Sprintf("ESC%d", len(p.images)+1)
		p.images[name] = ref
		y0 := p.y - imageH - 2*pad
		p.cell(y0, p.y, labels, size, lead)
		box := stamp.Rect{X1: valueX, Y1: y0 + pad, X2: valueX + min(p.width()-labelW-2*pad, 4.5*imageH), Y2: p.y - pad}
		stamp.DrawImage(&p.cur, name, box, float64(w), float64(h))
		p.y = y0
		return nil
	}
	first := true
	for len(values) > 0 || first {
		n := max(len(values), len(labels))
		fits := int((p.y - p.bottom() - 2*pad) / lead)
		wholeFitsAPage := float64(n)*lead+2*pad <= p.top()-p.bottom()
		if fits < n && !p.atTop() && (wholeFitsAPage || fits < 1) {
			p.flush()
			continue
		}
		take := min(len(values), max(fits, 1))
		lbl := labels
		if !first {
			lbl = nil
		}
		lines := max(take, len(lbl))
		y0 := p.y - float64(lines)*lead - 2*pad
		p.cell(y0, p.y, lbl, size, lead)
		p.cur.WriteString("0 g\n")
		for i, v := range values[:take] {
			p.cur.Text(p.font, "ESF1", valueX, p.y-pad-float64(i+1)*lead+2, size, v)
		}
		values = values[take:]
		p.y = y0
		first = false
	}
	return nil
}

// cell draws a row's frame from y0 up to y1: the shaded label cell with its label, the value
// cell's border.
func (p *pager) cell(y0, y1 float64, label []string, size, lead float64) {
	h := y1 - y0
	fmt.Fprintf(&p.cur, "q 0.93 g %s %s %s %s re f Q\n", pdfdoc.Num(margin), pdfdoc.Num(y0), pdfdoc.Num(labelW), pdfdoc.Num(h))
	fmt.Fprintf(&p.cur, "q 0.7 G 0.5 w %s %s %s %s re S %s %s m %s %s l S Q\n",
		pdfdoc.Num(margin), pdfdoc.Num(y0), pdfdoc.Num(p.width()), pdfdoc.Num(h),
		pdfdoc.Num(margin+labelW), pdfdoc.Num(y0), pdfdoc.Num(margin+labelW), pdfdoc.Num(y1))
	p.cur.WriteString("0 g\n")
	for i, l := range label {
		p.cur.Text(p.font, "ESF1", margin+pad, y1-pad-float64(i+1)*lead+2, size, l)
	}
}
