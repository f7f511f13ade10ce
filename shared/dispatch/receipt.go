package dispatch

import (
	"fmt"
	"strconv"
	"time"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"

	"github.com/esign-svc/esign/shared/pdf/pdfdoc"
)

// ValidationResult is one record's outcome at intake (the batch's validationResults[]).
type ValidationResult struct {
	Index      int      `json:"index"`
	Status     string   `json:"status"` // valid | warning | invalid
	DocumentID string   `json:"documentId,omitempty"`
	Messages   []string `json:"messages,omitempty"`
}

// Receipt is the intake receipt (DESIGN 9): the PDF answer of a batch submit, the same as JSON
// for Accept: application/json, and kept as receipts/<batchId>.pdf beside
// dispatch/<batchId>/receipt.json.
type Receipt struct {
	BatchID           string             `json:"batchId"`
	CorrelationID     string             `json:"correlationId"`
	State             State              `json:"state"`
	DispatchReadiness Readiness          `json:"dispatchReadiness"`
	Title             string             `json:"title"`
	TemplatePath      string             `json:"templatePath"`
	TemplateName      string             `json:"templateName"`
	TemplateVersion   int                `json:"templateVersion"`
	SubmittedBy       string             `json:"submittedBy"`
	SubmittedAt       time.Time          `json:"submittedAt"`
	Supersedes        string             `json:"supersedes,omitempty"`
	DocumentCount     int                `json:"documentCount"`
	ReadyCount        int                `json:"readyCount"`
	FailedCount       int                `json:"failedCount"`
	WarningCount      int                `json:"warningCount"`
	ValidationResults []ValidationResult `json:"validationResults"`
}

// receiptOf is b's receipt with its records' results.
func receiptOf(b *Batch, results []ValidationResult) Receipt {
	return Receipt{BatchID: b.BatchID, CorrelationID: b.CorrelationID, State: b.State, DispatchReadiness: b.Readiness,
		Title: b.Title, TemplatePath: b.TemplatePath, TemplateName: b.TemplateName, TemplateVersion: b.TemplateVersion,
		SubmittedBy: b.SubmittedBy, SubmittedAt: b.CreatedAt, Supersedes: b.Supersedes, DocumentCount: b.DocumentCount,
		ReadyCount: b.ReadyCount, FailedCount: b.FailedCount, WarningCount: b.WarningCount, ValidationResults: results}
}

// Receipt page geometry (A4 portrait, points).
const (
	rcW, rcH    = 595.28, 841.89
	rcMargin    = 42.0
	rcFooter    = 24.0
	rcBody      = 8.0
	rcLead      = rcBody * 1.35
	rcPad       = 3.0
	rcFont      = "ESF1"
	rcTitleSize = 15.0
)

// rcColumns are the record table's columns: left edge (from the margin) and width.
var rcColumns = [4]struct {
	title string
	x, w  float64
}{
	{"#", 0, 36}, {"Document ID", 36, 150}, {"Status", 186, 70}, {"Messages", 256, rcW - 2*rcMargin - 256},
}

// receiptPDF sets r as a PDF: a head with the batch's identity and counts, then one table row
// per record (index, documentId, status, messages), over as many pages as it needs, each with
// the column titles and a footer. The PDF is 7-bit ASCII (pdfdoc.SetASCII): the render route's
// function is invoked by the Functions host, whose HTTP output carries text.
func receiptPDF(r Receipt) ([]byte, error) {
	d := pdfdoc.New()
	d.SetASCII()
	font, err := pdfdoc.NewFont(d)
	if err != nil {
		return nil, err
	}
	t := &rcTable{font: font}
	t.begin()
	t.head(r)
	t.columnTitles()
	for _, v := range r.ValidationResults {
		t.row(v)
	}
	t.pages = append(t.pages, append([]byte(nil), t.cur.Bytes()...))
	res := types.Dict{"Font": types.Dict{rcFont: font.Ref}}
	for i, pg := range t.pages {
		var foot pdfdoc.Content
		foot.WriteString("0.4 g\n")
		foot.Text(font, rcFont, rcMargin, rcFooter, 7, fmt.Sprintf("Batch intake receipt %s, page %d of %d", r.BatchID, i+1, len(t.pages)))
		if _, err := d.AppendPage(rcW, rcH, append(pg, foot.Bytes()...), res); err != nil {
			return nil, err
		}
	}
	info := d.SetInfo(types.Dict{"Title": pdfdoc.TextString("Batch intake receipt " + r.BatchID),
		"Producer": types.StringLiteral("esign batch dispatch")})
	return d.Bytes(&info)
}

// rcTable lays the receipt out page by page.
type rcTable struct {
	font  *pdfdoc.Font
	pages [][]byte
	cur   pdfdoc.Content
	y     float64
}

func (t *rcTable) begin() { t.cur.Reset(); t.y = rcH - rcMargin }

func (t *rcTable) newPage() {
	t.pages = append(t.pages, append([]byte(nil), t.cur.Bytes()...))
	t.begin()
	t.columnTitles()
}

func (t *rcTable) line(x, size float64, s string) {
	t.y -= size * 1.35
	t.cur.Text(t.font, rcFont, x, t.y, size, s)
}

// head sets the title and the batch's identity, submitter, time and counts.
func (t *rcTable) head(r Receipt) {
	t.cur.WriteString("0 g\n")
	t.line(rcMargin, rcTitleSize, "Batch intake receipt")
	t.y -= 6
	tmpl := fmt.Sprintf("%s, version %d (%s)", r.TemplateName, r.TemplateVersion, r.TemplatePath)
	for _, kv := range [][2]string{
		{"Batch ID", r.BatchID}, {"Correlation ID", r.CorrelationID}, {"Title", r.Title}, {"Template", tmpl},
		{"Submitted by", r.SubmittedBy}, {"Submitted at", r.SubmittedAt.UTC().Format(time.RFC3339)},
		{"State", string(r.State)}, {"Dispatch readiness", string(r.DispatchReadiness)},
		{"Records", fmt.Sprintf("%d submitted, %d ready, %d invalid, %d with warnings", r.DocumentCount, r.ReadyCount, r.FailedCount, r.WarningCount)},
		{"Supersedes", r.Supersedes},
	} {
		if kv[1] == "" {
			continue
		}
		for i, l := range pdfdoc.Wrap(t.font, kv[1], 9, rcW-2*rcMargin-110) {
			t.y -= 9 * 1.35
			if i == 0 {
				t.cur.Text(t.font, rcFont, rcMargin, t.y, 9, kv[0])
			}
			t.cur.Text(t.font, rcFont, rcMargin+110, t.y, 9, l)
		}
	}
	t.y -= 12
}

// columnTitles draws the table's header row.
func (t *rcTable) columnTitles() {
	top := t.y
	t.y -= rcLead + 2*rcPad
	fmt.Fprintf(&t.cur, "q 0.9 g %s %s %s %s re f Q\n0 g\n", pdfdoc.Num(rcMargin), pdfdoc.Num(t.y), pdfdoc.Num(rcW-2*rcMargin), pdfdoc.Num(top-t.y))
	for _, c := range rcColumns {
		t.cur.Text(t.font, rcFont, rcMargin+c.x+rcPad, top-rcPad-rcLead+2, rcBody, c.title)
	}
}

// row sets one record's row; a row moves to the next page whole (a row taller than a page,
// thousands of messages, is cut at the page's end).
func (t *rcTable) row(v ValidationResult) {
	cells := [4][]string{{strconv.Itoa(v.Index)}, t.wrap(v.DocumentID, 1), {v.Status}, nil}
	for _, m := range v.Messages {
		cells[3] = append(cells[3], t.wrap(m, 3)...)
	}
	n := 1
	for _, c := range cells {
		n = max(n, len(c))
	}
	bottom := rcMargin + rcFooter
	if t.y-float64(n)*rcLead-2*rcPad < bottom {
		t.newPage()
		if room := int((t.y - bottom - 2*rcPad) / rcLead); n > room {
			n = room
		}
	}
	top := t.y
	t.y -= float64(n)*rcLead + 2*rcPad
	fmt.Fprintf(&t.cur, "q 0.75 G 0.4 w %s %s m %s %s l S Q\n", pdfdoc.Num(rcMargin), pdfdoc.Num(t.y), pdfdoc.Num(rcW-rcMargin), pdfdoc.Num(t.y))
	if v.Status == ResultInvalid {
		t.cur.WriteString("0.6 0 0 rg\n")
	} else {
		t.cur.WriteString("0 g\n")
	}
	for i, c := range rcColumns {
		for j, l := range cells[i] {
			if j == n {
				break
			}
			t.cur.Text(t.font, rcFont, rcMargin+c.x+rcPad, top-rcPad-float64(j+1)*rcLead+2, rcBody, l)
		}
	}
}

func (t *rcTable) wrap(s string, col int) []string {
	if s == "" {
		return nil
	}
	return pdfdoc.Wrap(t.font, s, rcBody, rcColumns[col].w-2*rcPad)
}
