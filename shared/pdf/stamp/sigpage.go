package stamp

import (
	"fmt"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"

	"github.com/esign-svc/esign/shared/pdf/pdfdoc"
)

// SignatureBox is one signer's entry on an appended signature page.
type SignatureBox struct {
	Name  string
	Role  string
	Image []byte // PNG drawing; may be empty for a signer who has not signed (optional slot)
}

const (
	pageW, pageH = 595.28, 841.89 // A4
	margin       = 56.0
	boxH         = 90.0
	boxGap       = 24.0
)

// SignatureRect returns where signer i's drawing goes on the signature page (page-relative)
// and which appended page (0-based) holds it; six boxes fit on a page.
func SignatureRect(i int) (int, Rect) {
	perPage := 6
	slot := i % perPage
	top := pageH - margin - 40 - float64(slot)*(boxH+boxGap+14)
	return i / perPage, Rect{X1: margin, Y1: top - boxH, X2: margin + 240, Y2: top}
}

// AppendSignaturePages appends "Signatures" pages, one box per signer with the drawing,
// the name and role; it is used when the document has no field manifest (DESIGN 6a).
func AppendSignaturePages(d *pdfdoc.Doc, font *pdfdoc.Font, boxes []SignatureBox) error {
	pages := map[int][]int{}
	last := 0
	for i := range boxes {
		p, _ := SignatureRect(i)
		pages[p] = append(pages[p], i)
		last = p
	}
	for p := 0; p <= last && len(boxes) > 0; p++ {
		var c pdfdoc.Content
		xobjs, fontsDict := types.Dict{}, types.Dict{"ESF1": font.Ref}
		c.WriteString("0 g\n")
		c.Text(font, "ESF1", margin, pageH-margin, 14, "Signatures")
		for _, i := range pages[p] {
			b := boxes[i]
			_, r := SignatureRect(i)
			fmt.Fprintf(&c, "q 0.6 G 0.5 w %s %s m %s %s l S Q\n", pdfdoc.Num(r.X1), pdfdoc.Num(r.Y1-2), pdfdoc.Num(r.X2), pdfdoc.Num(r.Y1-2))
			if len(b.Image) > 0 {
				ref, w, h, err := AddPNG(d, b.Image)
				if err != nil {
					return err
				}
				name := fmt.Sprintf("ESI%d", i+1)
				xobjs[name] = ref
				DrawImage(&c, name, r, float64(w), float64(h))
			}
			label := b.Name
			if b.Role != "" {
				label += " (" + b.Role + ")"
			}
			c.Text(font, "ESF1", r.X1, r.Y1-14, 9, label)
		}
		res := types.Dict{"Font": fontsDict, "XObject": xobjs}
		if _, err := d.AppendPage(pageW, pageH, c.Bytes(), res); err != nil {
			return err
		}
	}
	return nil
}
