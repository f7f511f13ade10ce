package stamp

import (
	"fmt"
	"math"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"

	"github.com/esign-svc/esign/shared/pdf/pdfdoc"
)

// Apply draws every placement on its page of d, then removes the `esign.*` form fields.
// Errors: apperr invalid "placement_invalid" or "image_invalid" for bad input.
func Apply(d *pdfdoc.Doc, font *pdfdoc.Font, placements []Placement) error {
	pageCount := d.Ctx.PageCount
	byPage := map[int][]int{}
	for i, p := range placements {
		if err := p.Validate(i, pageCount); err != nil {
			return err
		}
		byPage[p.Page] = append(byPage[p.Page], i)
	}
	for pageNr := 1; pageNr <= pageCount; pageNr++ {
		idx := byPage[pageNr]
		if len(idx) == 0 {
			continue
		}
		page, err := d.Page(pageNr)
		if err != nil {
			return err
		}
		res, err := d.Resources(page)
		if err != nil {
			return err
		}
		xobjs := subDict(res, "XObject")
		fontsDict := subDict(res, "Font")
		fontName := unusedName(fontsDict, "ESF")
		fontsDict[fontName] = font.Ref
		var c pdfdoc.Content
		for _, i := range idx {
			p := placements[i]
			r := p.Rect.norm()
			switch p.Kind {
			case KindSignature, KindInitials:
				ref, w, h, err := AddPNG(d, p.Image)
				if err != nil {
					return err
				}
				name := unusedName(xobjs, "ESI")
				xobjs[name] = ref
				DrawImage(&c, name, r, float64(w), float64(h))
			case KindDate, KindText:
				drawText(&c, font, fontName, r, p.Text)
			case KindCheckbox:
				drawCheckbox(&c, r, p.Checked)
			}
		}
		res["XObject"], res["Font"] = xobjs, fontsDict
		if err := d.Overlay(page, c.Bytes(), res); err != nil {
			return err
		}
	}
	return RemoveFields(d)
}

func subDict(res types.Dict, key string) types.Dict {
	if sub, ok := res[key].(types.Dict); ok {
		return sub
	}
	return types.Dict{}
}

func unusedName(d types.Dict, prefix string) string {
	for i := 1; ; i++ {
		name := fmt.Sprintf("%s%d", prefix, i)
		if _, taken := d[name]; !taken {
			return name
		}
	}
}

// DrawImage fits a w x h image into r keeping its aspect ratio, centred.
func DrawImage(c *pdfdoc.Content, name string, r Rect, w, h float64) {
	scale := math.Min(r.Width()/w, r.Height()/h)
	dw, dh := w*scale, h*scale
	x := r.X1 + (r.Width()-dw)/2
	y := r.Y1 + (r.Height()-dh)/2
	fmt.Fprintf(c, "q %s 0 0 %s %s %s cm /%s Do Q\n", pdfdoc.Num(dw), pdfdoc.Num(dh), pdfdoc.Num(x), pdfdoc.Num(y), name)
}

// drawText writes s on one line, at most 11 pt, shrunk to fit the rectangle's width and
// height, vertically centred, left aligned with a small inset.
func drawText(c *pdfdoc.Content, font *pdfdoc.Font, fontName string, r Rect, s string) {
	size := math.Min(11, r.Height()*0.75)
	inset := math.Min(2, r.Width()/10)
	if w := pdfdoc.TextWidth(font, s, size); w > r.Width()-2*inset && w > 0 {
		size *= (r.Width() - 2*inset) / w
	}
	if size < 1 {
		size = 1
	}
	y := r.Y1 + (r.Height()-size*0.7)/2
	c.WriteString("0 g\n")
	c.Text(font, fontName, r.X1+inset, y, size, s)
}

// drawCheckbox draws the box outline and, when checked, a check mark stroked inside it.
func drawCheckbox(c *pdfdoc.Content, r Rect, checked bool) {
	side := math.Min(r.Width(), r.Height())
	x, y := r.X1+(r.Width()-side)/2, r.Y1+(r.Height()-side)/2
	n := pdfdoc.Num
	fmt.Fprintf(c, "q 0 G %s w %s %s %s %s re S", n(math.Max(0.5, side/20)), n(x), n(y), n(side), n(side))
	if checked {
		fmt.Fprintf(c, " %s w 1 J 1 j %s %s m %s %s l %s %s l S", n(math.Max(1, side/8)),
			n(x+side*0.2), n(y+side*0.5), n(x+side*0.42), n(y+side*0.22), n(x+side*0.82), n(y+side*0.8))
	}
	c.WriteString(" Q\n")
}
