package certificate

import (
	"fmt"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"

	"github.com/esign-svc/esign/shared/pdf/pdfdoc"
)

// InfoKeyEvidenceHead is the document information dictionary key holding the evidence
// bundle's head hash, so that a verifier reads it without text extraction.
const InfoKeyEvidenceHead = "EsignEvidenceHead"

const (
	pageW, pageH = 595.28, 841.89 // A4
	margin       = 50.0
	footer       = 30.0
)

var sizes = map[style]float64{styleTitle: 16, styleHeading: 12, styleSubheading: 10, styleBody: 8.5, styleVerbatim: 8.5}

// Append renders c as pages at the end of d, each with a page footer, and records the head
// hash in the information dictionary (see InfoKeyEvidenceHead). It returns the new /Info
// reference to pass to d.Bytes.
func Append(d *pdfdoc.Doc, font *pdfdoc.Font, c Certificate) (types.IndirectRef, error) {
	pages := layout(font, c)
	for i, content := range pages {
		var foot pdfdoc.Content
		foot.WriteString("0.4 g\n")
		foot.Text(font, "ESF1", margin, footer, 7, fmt.Sprintf("Evidence certificate, correlation ID %s, page %d of %d", orDash(c.CorrelationID), i+1, len(pages)))
		body := append(content, foot.Bytes()...)
		res := types.Dict{"Font": types.Dict{"ESF1": font.Ref}}
		if _, err := d.AppendPage(pageW, pageH, body, res); err != nil {
			return types.IndirectRef{}, err
		}
	}
	return setInfo(d, c.EvidenceHeadHash)
}

// Standalone renders c as a PDF of its own.
func Standalone(c Certificate) ([]byte, error) {
	d := pdfdoc.New()
	font, err := pdfdoc.NewFont(d)
	if err != nil {
		return nil, err
	}
	info, err := Append(d, font, c)
	if err != nil {
		return nil, err
	}
	return d.Bytes(&info)
}

func setInfo(d *pdfdoc.Doc, head string) (types.IndirectRef, error) {
	info := types.Dict{}
	if ref := d.Info(); ref != nil {
		old, err := d.DerefDict(*ref)
		if err == nil && old != nil {
			info = old.Clone().(types.Dict)
		}
	}
	info[InfoKeyEvidenceHead] = types.StringLiteral(head)
	info["Producer"] = types.StringLiteral("esign evidence sealer")
	if ref := d.Info(); ref != nil {
		d.Set(*ref, info)
		return *ref, nil
	}
	return d.Add(info), nil
}

// layout wraps and paginates the certificate lines into page content streams.
func layout(font *pdfdoc.Font, c Certificate) [][]byte {
	var pages [][]byte
	var cur pdfdoc.Content
	y := pageH - margin
	width := pageW - 2*margin
	flush := func() {
		pages = append(pages, append([]byte(nil), cur.Bytes()...))
		cur.Reset()
		y = pageH - margin
	}
	for _, l := range c.lines() {
		size := sizes[l.style]
		indent := 0.0
		if l.style == styleVerbatim {
			indent = 14
		}
		lead := size * 1.35
		before := 0.0
		switch l.style {
		case styleHeading:
			before = 10
		case styleSubheading:
			before = 5
		}
		wrapped := pdfdoc.Wrap(font, l.text, size, width-indent)
		// keep headings with at least one following line
		need := before + lead*float64(len(wrapped))
		if l.style == styleHeading || l.style == styleSubheading {
			need += 2 * lead
		}
		if y-need < margin+footer && y < pageH-margin {
			flush()
			before = 0
		}
		y -= before
		if l.style == styleVerbatim {
			cur.WriteString("0.15 g\n")
		} else {
			cur.WriteString("0 g\n")
		}
		for _, w := range wrapped {
			if y-lead < margin+footer {
				flush()
			}
			y -= lead
			cur.Text(font, "ESF1", margin+indent, y, size, w)
		}
	}
	if cur.Len() > 0 || len(pages) == 0 {
		flush()
	}
	return pages
}
