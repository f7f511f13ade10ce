package pdfdoc

import (
	"fmt"
	"unicode"
)

// ShapeRTL is Shape for a paragraph of a right-to-left language (an Arabic statement, its
// heading): the letters are joined as Shape joins them, and the visual order is that of a
// right-to-left paragraph: runs of left-to-right text (Latin letters and digits, with the
// neutrals between them) keep their order and are placed from the right; everything else reads
// from the right, with brackets mirrored. A subset of the bidirectional algorithm, as Shape is:
// explicit controls and bracket pairing are not applied.
func ShapeRTL(s string) string {
	rs := joinArabic([]rune(s))
	n := len(rs)
	ltr := make([]bool, n)
	last := -1
	for i, r := range rs {
		switch {
		case isStrongLTR(r) || unicode.IsDigit(r):
			for k := last + 1; last >= 0 && k < i; k++ {
				ltr[k] = true // a neutral between two left-to-right characters
			}
			ltr[i], last = true, i
		case isRTL(r):
			last = -1
		}
	}
	out, keep := make([]rune, n), make([]bool, n)
	for i := range rs {
		out[n-1-i], keep[n-1-i] = rs[i], ltr[i]
	}
	for i := 0; i < n; {
		if !keep[i] {
			if m, ok := mirror[out[i]]; ok {
				out[i] = m
			}
			i++
			continue
		}
		j := i
		for j < n && keep[j] {
			j++
		}
		for a, b := i, j-1; a < b; a, b = a+1, b-1 {
			out[a], out[b] = out[b], out[a]
		}
		i = j
	}
	return string(out)
}

// TextRTL draws s (logical order, a right-to-left paragraph; see ShapeRTL) with its baseline
// starting at x,y.
func (c *Content) TextRTL(f *Font, fontName string, x, y, size float64, s string) {
	fmt.Fprintf(c, "BT /%s %s Tf %s %s Td %s Tj ET\n", fontName, Num(size), Num(x), Num(y), f.Hex(ShapeRTL(s)))
}
