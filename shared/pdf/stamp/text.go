package stamp

import (
	"math"
	"strings"

	"github.com/esign-svc/esign/shared/pdf/pdfdoc"
)

// Quadding of a text field (/Q): where each line sits between the rectangle's sides.
const (
	quadLeft   = 0
	quadCentre = 1
	quadRight  = 2
)

const (
	// minWrapSize is the smallest size multi-line text shrinks to; lines that still do not fit
	// are left out (clipped at the rectangle's bottom).
	minWrapSize = 6
	// leading is the distance between baselines in ems (DejaVu's ascent plus descent).
	leading = 1.17
	// ascent is DejaVu Sans's ascent in ems: the first baseline sits this far below the top.
	ascent = 0.93
)

// textBox is how a value is laid out in a rectangle.
type textBox struct {
	Quad      int     // quadLeft, quadCentre or quadRight
	MaxSize   float64 // the largest font size, in points
	Multiline bool    // wrap over several lines, top-aligned, instead of one vertically centred line
}

// draw writes s into r: on one line shrunk to fit the width and the height, vertically
// centred; or, when b.Multiline, wrapped at the largest size (down to minWrapSize) at which
// every line fits, then clipped to the lines that fit (the first always drawn). Each line is placed by b.Quad with a
// small inset from the sides.
func (b textBox) draw(c *pdfdoc.Content, font *pdfdoc.Font, fontName string, r Rect, s string) {
	inset := math.Min(2, r.Width()/10)
	width := r.Width() - 2*inset
	c.WriteString("0 g\n")
	if !b.Multiline {
		s = strings.Join(strings.Fields(s), " ")
		size := math.Min(b.MaxSize, r.Height()*0.75)
		w := pdfdoc.TextWidth(font, s, size)
		if w > width && w > 0 {
			size *= width / w
		}
		size = math.Max(size, 1)
		y := r.Y1 + (r.Height()-size*0.7)/2
		c.Text(font, fontName, b.x(r, inset, pdfdoc.TextWidth(font, s, size)), y, size, s)
		return
	}
	height := r.Height() - 2*inset
	size := math.Min(b.MaxSize, height)
	var lines []string
	for {
		lines = pdfdoc.Wrap(font, s, size, width)
		if float64(len(lines))*size*leading <= height || size <= minWrapSize {
			break
		}
		size = math.Max(minWrapSize, size-0.5)
	}
	n := pdfdoc.Num
	c.WriteString("q " + n(r.X1) + " " + n(r.Y1) + " " + n(r.Width()) + " " + n(r.Height()) + " re W n\n")
	y := r.Y2 - inset - size*ascent
	for i, line := range lines {
		if i > 0 && y-size*(leading-ascent) < r.Y1+inset-0.01 {
			break
		}
		if line != "" {
			c.Text(font, fontName, b.x(r, inset, pdfdoc.TextWidth(font, line, size)), y, size, line)
		}
		y -= size * leading
	}
	c.WriteString("Q\n")
}

// x is where a line w wide starts.
func (b textBox) x(r Rect, inset, w float64) float64 {
	switch b.Quad {
	case quadCentre:
		return r.X1 + (r.Width()-w)/2
	case quadRight:
		return r.X2 - inset - w
	}
	return r.X1 + inset
}
