package certificate

import (
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"

	"github.com/esign-svc/esign/shared/pdf/pdfdoc"
)

// Record is a record appended to a sealed PDF other than a signing session's certificate (the
// workflow record page): a title, a footer label and sections of labelled values, set in the
// certificate's layout and embedded font.
type Record struct {
	Title    string
	Footer   string // each page's footer is "<Footer>, page i of n"
	Sections []Section
	// EvidenceHeadHash is the head hash of the record's evidence bundle (hex), stored in the
	// document information dictionary under InfoKeyEvidenceHead.
	EvidenceHeadHash string
}

// Section is a heading and its items, in order.
type Section struct {
	Heading string
	Items   []Item
}

// Item is one labelled value. A Verbatim value is set as an indented paragraph of its own
// under "Label:", byte for byte (a justification, a comment).
type Item struct {
	Label    string
	Value    string
	Verbatim bool
}

func (r Record) blocks() []block {
	bs := []block{{style: styleTitle, text: r.Title}}
	for _, s := range r.Sections {
		bs = append(bs, block{style: styleHeading, text: s.Heading})
		for _, it := range s.Items {
			if it.Verbatim {
				bs = append(bs, block{style: styleBody, text: it.Label + ":"}, block{style: styleVerbatim, text: orDash(it.Value)})
				continue
			}
			bs = append(bs, block{style: styleBody, text: it.Label + ": " + orDash(it.Value)})
		}
	}
	return bs
}

// AppendRecord renders r as pages at the end of d, in the page size of d's source
// (PageSizeOf), and records r's evidence head hash in the information dictionary. It returns
// the new /Info reference to pass to the signer.
func AppendRecord(d *pdfdoc.Doc, font *pdfdoc.Font, r Record) (types.IndirectRef, error) {
	if err := appendBlocks(d, font, r.blocks(), PageSizeOf(d), r.Footer); err != nil {
		return types.IndirectRef{}, err
	}
	return setInfo(d, r.EvidenceHeadHash)
}
