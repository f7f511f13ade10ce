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
		err := overlayPage(d, pageNr, font, func(c *pdfdoc.Content, fontName string, xobjs types.Dict) error {
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
					DrawImage(c, name, r, float64(w), float64(h))
				case KindDate, KindText:
					textBox{MaxSize: 11}.draw(c, font, fontName, r, p.Text)
				case KindCheckbox:
					drawCheckbox(c, r, p.Checked)
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return RemoveFields(d)
}

// overlayPage draws what draw writes over page pageNr, with font (when not nil) registered
// in the page's resources under fontName and any XObject draw adds to xobjs.
func overlayPage(d *pdfdoc.Doc, pageNr int, font *pdfdoc.Font, draw func(c *pdfdoc.Content, fontName string, xobjs types.Dict) error) error {
	page, err := d.Page(pageNr)
	if err != nil {
		return err
	}
	res, err := d.Resources(page)
	if err != nil {
		return err
	}
	xobjs, fontsDict := subDict(res, "XObject"), subDict(res, "Font")
	fontName := ""
	if font != nil {
		fontName = unusedName(fontsDict, "ESF")
		fontsDict[fontName] = font.Ref
		res["Font"] = fontsDict
	}
	var c pdfdoc.Content
	if err := draw(&c, fontName, xobjs); err != nil {
		return err
	}
	if len(xobjs) > 0 {
		res["XObject"] = xobjs
	}
	return d.Overlay(page, c.Bytes(), res)
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
