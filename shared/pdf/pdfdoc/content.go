package pdfdoc

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Content builds a page content stream.
type Content struct{ bytes.Buffer }

// Num formats a coordinate compactly.
func Num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// Text draws s (logical order; shaped here) with its baseline starting at x,y. fontName is
// the resource name under which f is registered on the page.
func (c *Content) Text(f *Font, fontName string, x, y, size float64, s string) {
	fmt.Fprintf(c, "BT /%s %s Tf %s %s Td %s Tj ET\n", fontName, Num(size), Num(x), Num(y), f.Hex(Shape(s)))
}

// TextWidth is the drawn width of s (logical order) at size.
func TextWidth(f *Font, s string, size float64) float64 { return f.Width(Shape(s), size) }

// Wrap splits s into lines no wider than width at size: at spaces where possible, else inside
// a word (at least one letter a line, even when a letter is wider than width). Newlines in s
// start new lines.
func Wrap(f *Font, s string, size, width float64) []string {
	var lines []string
	for _, para := range strings.Split(s, "\n") {
		line := ""
		for _, word := range strings.Fields(para) {
			cand := word
			if line != "" {
				cand = line + " " + word
			}
			if TextWidth(f, cand, size) <= width {
				line = cand
				continue
			}
			if line != "" {
				lines = append(lines, line)
				line = ""
			}
			for TextWidth(f, word, size) > width && utf8.RuneCountInString(word) > 1 {
				// the longest head that fits, grown from one letter: measuring from the whole
				// word down made a long word cubic in its length
				rs := []rune(word)
				n := 1
				for n+1 < len(rs) && TextWidth(f, string(rs[:n+1]), size) <= width {
					n++
				}
				lines = append(lines, string(rs[:n]))
				word = string(rs[n:])
			}
			line = word
		}
		lines = append(lines, line)
	}
	return lines
}
