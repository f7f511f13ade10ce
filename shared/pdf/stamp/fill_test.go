package stamp_test

import (
	"bytes"
	"image"
	"image/png"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/pdf/internal/fixture"
	"github.com/esign-svc/esign/shared/pdf/pdfdoc"
	"github.com/esign-svc/esign/shared/pdf/stamp"
)

const longNotes = "Relocation support of up to three months is included. The employee may work from home " +
	"on two days a week once the probationary period ends, subject to the needs of the team. Equipment " +
	"is provided by the company and remains its property."

func yes() *bool { b := true; return &b }
func no() *bool  { b := false; return &b }

// offerRecord is a full record of the sample, with values in five scripts.
func offerRecord() map[string]stamp.Value {
	return map[string]stamp.Value{
		"employeeName":  {Text: "Zoë Łukasiewicz-Øster"},
		"employeeEmail": {Text: "zoe@example.com"},
		"employeePhone": {Text: "+44 20 7946 0958"},
		"position":      {Text: "Γενικός διευθυντής"},
		"salary":        {Text: "85000"},
		"currency":      {Text: "EUR"},
		"startDate":     {Text: "2027-01-04"},
		"remote":        {Check: yes()},
		"notes":         {Text: longNotes},
		"managerName":   {Text: "Анна Каренина"},
	}
}

// flat is pdftotext's output without the bidi marks poppler adds around right-to-left runs,
// with whitespace runs made single spaces.
func flat(text string) string {
	text = strings.NewReplacer("\u202A", "", "\u202B", "", "\u202C", "", "\u200E", "", "\u200F", "").Replace(text)
	return strings.Join(strings.Fields(text), " ")
}

// TestFillOffer fills the sample template with a full record and checks the text, the
// removed fields, the manifest, the title and that the file is sound.
func TestFillOffer(t *testing.T) {
	t.Parallel()
	fixture.RequireTools(t)
	src := offerTemplate(t)
	out, err := stamp.FillOptions{Title: "Offer for Zoë Łukasiewicz-Øster"}.Fill(src, offerRecord())
	if err != nil {
		t.Fatal(err)
	}
	fixture.QPDFCheck(t, out.PDF)
	if out.Pages != 3 || len(out.Unknown) != 0 {
		t.Errorf("pages %d, unknown %v; want 3 and none", out.Pages, out.Unknown)
	}
	if !bytes.HasPrefix(out.PDF, src) {
		t.Error("the rendered PDF is not an incremental update of the template")
	}
	text := fixture.PDFToText(t, out.PDF)
	ft := flat(text)
	for key, v := range offerRecord() {
		if v.Text != "" && !strings.Contains(ft, v.Text) {
			t.Errorf("rendered text lacks %s = %q:\n%s", key, v.Text, text)
		}
	}
	if lines := linesWith(text, "Relocation", "property."); lines < 3 {
		t.Errorf("the multi-line notes span %d lines, want them wrapped over at least 3:\n%s", lines, text)
	}
	want, err := stamp.ManifestFromPDF(src)
	if err != nil || len(want) != 6 {
		t.Fatalf("template manifest: %d fields (%v)", len(want), err)
	}
	if diff := cmp.Diff(want, out.Manifest); diff != "" {
		t.Errorf("manifest differs from the template's esign fields (-want +got):\n%s", diff)
	}
	if left, err := stamp.ManifestFromPDF(out.PDF); err != nil || len(left) != 0 {
		t.Errorf("the rendered PDF still has esign fields: %v (%v)", left, err)
	}
	if left := formFields(t, out.PDF); len(left) != 0 {
		t.Errorf("the rendered PDF still has form fields: %v", left)
	}
	if n := widgets(t, out.PDF); n != 0 {
		t.Errorf("the rendered PDF's pages still have %d widget annotations", n)
	}
	info, err := exec.Command("pdfinfo", fixture.WriteTemp(t, "out.pdf", out.PDF)).CombinedOutput()
	if err != nil || !strings.Contains(string(info), "Offer for Zoë Łukasiewicz-Øster") {
		t.Errorf("pdfinfo does not show the title (%v):\n%s", err, info)
	}
}

// linesWith counts the lines of text from the one holding first to the one holding last.
func linesWith(text, first, last string) int {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if !strings.Contains(l, first) {
			continue
		}
		for j := i; j < len(lines); j++ {
			if strings.Contains(lines[j], last) {
				return j - i + 1
			}
		}
	}
	return 0
}

// widgets counts the widget annotations of every page.
func widgets(t *testing.T, pdf []byte) int {
	t.Helper()
	d, err := pdfdoc.Open(pdf)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for p := 1; p <= d.Ctx.PageCount; p++ {
		page, err := d.Page(p)
		if err != nil {
			t.Fatal(err)
		}
		v, _ := d.Deref(page.Dict["Annots"])
		arr, _ := v.(types.Array)
		for _, a := range arr {
			if ad, err := d.DerefDict(a); err == nil && ad["Subtype"] == types.Name("Widget") {
				n++
			}
		}
	}
	return n
}

// TestFillScripts fills a pdfcpu-written fixture (cross-reference stream, object streams)
// with names in five scripts; pdftotext gives each back in logical order, right-to-left
// names right-aligned and left-to-right ones left-aligned.
func TestFillScripts(t *testing.T) {
	t.Parallel()
	fixture.RequireTools(t)
	names := []string{"Zoë Łukasiewicz-Øster", "Γιώργος Παπαδόπουλος", "Анна Каренина", "דוד לוי", "محمد علي"}
	var fields []fixture.FieldSpec
	values := map[string]stamp.Value{}
	for i, n := range names {
		key := "name" + strconv.Itoa(i)
		y := 700 - float64(i)*40
		fields = append(fields, fixture.FieldSpec{Name: key, Page: 1 + i%2, Rect: [4]float64{100, y, 400, y + 20}, Type: "Tx"})
		values[key] = stamp.Value{Text: n}
	}
	fields = append(fields, fixture.TemplateFields...)
	src := fixture.PDF(t, 3, fields, 0)
	if !bytes.Contains(src, []byte("/XRef")) || !bytes.Contains(src, []byte("/ObjStm")) {
		t.Fatal("the fixture has no cross-reference stream or object streams")
	}
	values["not_in_the_pdf"] = stamp.Value{Text: "ignored"}
	values["esign.buyer.date"] = stamp.Value{Text: "never drawn"}
	out, err := stamp.Fill(src, values)
	if err != nil {
		t.Fatal(err)
	}
	fixture.QPDFCheck(t, out.PDF)
	if !slices.Equal(out.Unknown, []string{"customer_name"}) {
		t.Errorf("unknown fields %v, want [customer_name]", out.Unknown)
	}
	text := flat(fixture.PDFToText(t, out.PDF))
	for _, n := range names {
		if !strings.Contains(text, n) {
			t.Errorf("rendered text lacks %q:\n%s", n, text)
		}
	}
	for _, s := range []string{"ignored", "never drawn", "ACME Ltd"} {
		if strings.Contains(text, s) {
			t.Errorf("rendered text has %q", s)
		}
	}
	if len(out.Manifest) != 6 || len(formFields(t, out.PDF)) != 0 {
		t.Errorf("manifest %d fields (want 6), form fields left %v", len(out.Manifest), formFields(t, out.PDF))
	}
	words := wordBoxes(t, out.PDF)
	for i, n := range names {
		top := 841.89 - (700 - float64(i)*40 + 20) // the field's top in pdftotext's top-down space
		line := box{xMin: 1e9}
		for _, w := range words {
			if w.yMin >= top && w.yMax <= top+20 {
				line.xMin, line.xMax = min(line.xMin, w.xMin), max(line.xMax, w.xMax)
			}
		}
		left, right := line.xMin < 110, line.xMax > 390
		if rtl := pdfdoc.RTL(n); left == rtl || right != rtl {
			t.Errorf("%q spans x %.1f..%.1f in its field 100..400; want it %s-aligned", n, line.xMin, line.xMax, map[bool]string{true: "right", false: "left"}[rtl])
		}
	}
}

type box struct {
	text                   string
	xMin, yMin, xMax, yMax float64
}

var wordRE = regexp.MustCompile(`<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)</word>`)

// wordBoxes is pdftotext -bbox: every word with its box, top-down (right-to-left words come
// with their letters in visual order).
func wordBoxes(t *testing.T, pdf []byte) []box {
	t.Helper()
	out, err := exec.Command("pdftotext", "-bbox", "-enc", "UTF-8", fixture.WriteTemp(t, "in.pdf", pdf), "-").CombinedOutput()
	if err != nil {
		t.Fatalf("pdftotext -bbox: %v\n%s", err, out)
	}
	var boxes []box
	for _, g := range wordRE.FindAllStringSubmatch(string(out), -1) {
		var f [4]float64
		for i := range f {
			f[i], _ = strconv.ParseFloat(g[i+1], 64)
		}
		boxes = append(boxes, box{g[5], f[0], f[1], f[2], f[3]})
	}
	return boxes
}

// word is the first box of text among boxes.
func word(boxes []box, text string) box {
	for _, b := range boxes {
		if b.text == text {
			return b
		}
	}
	return box{}
}

// TestFillLayout: a checkbox is drawn checked or unchecked, multi-line text wraps and shrinks
// and is clipped at the bottom when it cannot fit (a field narrower than a letter included), a field with several widgets shows its
// value in each, /Q centres, and the AcroForm loses /NeedAppearances and /XFA.
func TestFillLayout(t *testing.T) {
	t.Parallel()
	fixture.RequireTools(t)
	fields := []fixture.FieldSpec{
		{Name: "on", Page: 1, Rect: [4]float64{100, 600, 120, 620}, Type: "Btn"},
		{Name: "off", Page: 1, Rect: [4]float64{200, 600, 220, 620}, Type: "Btn"},
		{Name: "wrapped", Page: 1, Rect: [4]float64{100, 400, 300, 500}, Type: "Tx", Flags: 1 << 12},
		{Name: "clipped", Page: 1, Rect: [4]float64{350, 400, 450, 430}, Type: "Tx"},
		{Name: "flat", Page: 2, Rect: [4]float64{500, 500, 500, 520}, Type: "Tx", Flags: 1 << 12},
		{Name: "tiny", Page: 2, Rect: [4]float64{500, 400, 500.5, 420}, Type: "Tx", Flags: 1 << 12},
	}
	src := withKidsField(t, fixture.PDF(t, 2, fields, 0))
	words := strings.Fields(longNotes + " " + longNotes)
	many := make([]string, 0, 200)
	for i := 0; i < 200; i++ {
		many = append(many, "w"+strconv.Itoa(i))
	}
	out, err := stamp.Fill(src, map[string]stamp.Value{
		"on": {Check: yes()}, "off": {Check: no()},
		"wrapped": {Text: strings.Join(words, " ")},
		"clipped": {Text: strings.Join(many, " "), Multiline: true},
		"kids":    {Text: "Κοινή τιμή"},
		"flat":    {Text: "no width"},
		"tiny":    {Text: "narrower than a letter"},
	})
	if err != nil {
		t.Fatal(err)
	}
	fixture.QPDFCheck(t, out.PDF)
	text := fixture.PDFToText(t, out.PDF)
	ft := flat(text)
	if !strings.Contains(ft, strings.Join(words, " ")) {
		t.Errorf("the wrapped text is not all there:\n%s", text)
	}
	if strings.Count(ft, "Κοινή τιμή") != 2 {
		t.Errorf("the value of a field with two widgets is not shown twice:\n%s", text)
	}
	if strings.Contains(ft, "no width") {
		t.Errorf("a field without width shows its value:\n%s", text)
	}
	if !strings.Contains(ft, "w0 w1") || strings.Contains(ft, "w199") {
		t.Errorf("text too long for its field is not clipped at the bottom:\n%s", text)
	}
	boxes := wordBoxes(t, out.PDF)
	if b, top := word(boxes, "w0"), 841.89-430; b.yMin < top || b.yMin > top+4 {
		t.Errorf("the clipped field's first line is not at its top %.1f: %+v", top, b)
	}
	if l, r := word(boxes, "Κοινή"), word(boxes, "τιμή"); (l.xMin+r.xMax)/2 < 317 || (l.xMin+r.xMax)/2 > 323 {
		t.Errorf("/Q 1 does not centre the value in 200..440: %+v %+v", l, r)
	}
	page := render(t, out.PDF, 1)
	dark := func(x, y float64) bool { // x, y in points, PDF space; rendered at 2 px per point
		r, g, b, _ := page.At(int(x*2), int((841.89-y)*2)).RGBA()
		return r+g+b < 3*0x8000
	}
	// the check mark's second stroke passes through (x+0.62s, y+0.51s); the box outline is on its side
	if !dark(100+0.62*20, 600+0.51*20) || dark(200+0.62*20, 600+0.51*20) {
		t.Error("the checked box has no mark or the unchecked one has one")
	}
	if !dark(200, 610) || !dark(100, 610) {
		t.Error("a checkbox has no outline")
	}
	d, err := pdfdoc.Open(out.PDF)
	if err != nil {
		t.Fatal(err)
	}
	cat, _, _ := d.Catalog()
	af, _ := d.DerefDict(cat["AcroForm"])
	if af["NeedAppearances"] != nil || af["XFA"] != nil {
		t.Errorf("the AcroForm keeps %v", af)
	}
}

// withKidsField adds (as an update) a field "kids" with /Q 1 and two widget kids, on pages 1
// and 2 at [200 300 440 320], and sets /NeedAppearances and an /XFA on the AcroForm.
func withKidsField(t *testing.T, src []byte) []byte {
	t.Helper()
	d, err := pdfdoc.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	parent := d.Alloc()
	var kids types.Array
	for p := 1; p <= 2; p++ {
		page, err := d.Page(p)
		if err != nil {
			t.Fatal(err)
		}
		w := d.Add(types.Dict{"Type": types.Name("Annot"), "Subtype": types.Name("Widget"), "Parent": parent,
			"Rect": types.NewNumberArray(200, 300, 440, 320), "P": page.Ref})
		kids = append(kids, w)
		annots, _ := d.Deref(page.Dict["Annots"])
		arr, _ := annots.(types.Array)
		page.Dict["Annots"] = append(append(types.Array{}, arr...), w)
		d.Set(page.Ref, page.Dict)
	}
	d.Set(parent, types.Dict{"T": types.StringLiteral("kids"), "FT": types.Name("Tx"), "Q": types.Integer(1), "Kids": kids})
	cat, _, _ := d.Catalog()
	afRef := cat["AcroForm"].(types.IndirectRef)
	af, err := d.DerefDict(afRef)
	if err != nil {
		t.Fatal(err)
	}
	af = af.Clone().(types.Dict)
	fields, _ := d.Deref(af["Fields"])
	af["Fields"] = append(append(types.Array{}, fields.(types.Array)...), parent)
	af["NeedAppearances"] = types.Boolean(true)
	af["XFA"] = d.AddStream(pdfdoc.NewFlateStream(nil, []byte("<xdp:xdp/>")))
	d.Set(afRef, af)
	b, err := d.Bytes(nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// render rasterises page n at 144 dpi with pdftoppm.
func render(t *testing.T, pdf []byte, n int) image.Image {
	t.Helper()
	p := strconv.Itoa(n)
	out, err := exec.Command("pdftoppm", "-png", "-r", "144", "-f", p, "-l", p, "-singlefile", fixture.WriteTemp(t, "in.pdf", pdf)).Output()
	if err != nil {
		t.Fatalf("pdftoppm: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// TestFillUnreadable: bytes that are not a readable PDF are a 400 pdf_unreadable, never a
// panic.
func TestFillUnreadable(t *testing.T) {
	t.Parallel()
	src := offerTemplate(t)
	for name, b := range map[string][]byte{
		"empty": nil, "garbage": []byte("this is not a PDF"), "truncated": src[:len(src)/2],
		"header only": []byte("%PDF-1.7\n%%EOF\n"),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := stamp.Fill(b, offerRecord())
			e, ok := apperr.As(err)
			if !ok || e.Kind != apperr.KindInvalid || e.Code != pdfdoc.CodeUnreadable {
				t.Fatalf("Fill(%s) = %v, want a 400 %s", name, err, pdfdoc.CodeUnreadable)
			}
		})
	}
}

// FuzzFill: no input makes Fill panic or fail with anything but a 400.
func FuzzFill(f *testing.F) {
	src := offerTemplate(f)
	f.Add(src)
	f.Add(src[:len(src)*3/4])
	f.Add(fixture.PDF(f, 1, []fixture.FieldSpec{{Name: "a", Page: 1, Rect: [4]float64{100, 700, 400, 720}, Type: "Tx", Flags: 1 << 12}}, 0))
	f.Add([]byte("%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R/AcroForm<</Fields[3 0 R]>>>>endobj\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, err := stamp.Fill(b, offerRecord())
		if err != nil && apperr.KindOf(err) != apperr.KindInvalid {
			t.Fatalf("Fill: %v is not a 400", err)
		}
	})
}
