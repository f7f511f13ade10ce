package pdfdoc

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"

	"github.com/esign-svc/esign/shared/apperr"
)

// classicPDF is a one-page PDF with a classic cross-reference table, written by hand.
func classicPDF() []byte {
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] >>",
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	var offs []int
	for i, o := range objs {
		offs = append(offs, b.Len())
		b.WriteString(strings.Join([]string{itoa(i + 1), " 0 obj\n", o, "\nendobj\n"}, ""))
	}
	xref := b.Len()
	b.WriteString("xref\n0 4\n0000000000 65535 f \n")
	for _, off := range offs {
		s := itoa(off)
		b.WriteString(strings.Repeat("0", 10-len(s)) + s + " 00000 n \n")
	}
	b.WriteString("trailer\n<< /Size 4 /Root 1 0 R >>\nstartxref\n" + itoa(xref) + "\n%%EOF\n")
	return b.Bytes()
}

func itoa(n int) string { return Num(float64(n)) }

// builtPDF is a two-page PDF as this package writes one from nothing.
func builtPDF(t testing.TB) []byte {
	d := New()
	for i := 0; i < 2; i++ {
		if _, err := d.AppendPage(595, 842, []byte("BT /F1 12 Tf 72 720 Td (x) Tj ET"), types.Dict{}); err != nil {
			t.Fatal(err)
		}
	}
	b, err := d.Bytes(nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// FuzzOpen: Open never panics and never hangs on any input (pdfcpu's panics are recovered), a
// PDF it refuses is a 400 problem or its own rewrite failure, and one it opens has a page count.
// One parse stays within the budget: it allocates at most 64 MiB plus eight times the input
// (pdfcpu's copies of the raw bytes), whatever the input's streams decode to. The committed
// corpus under testdata/fuzz/FuzzOpen holds the decompression bombs of bombs_test.go at a
// 16 MiB scale (TestWriteBombCorpus writes them; they are not built here, where compressing
// them under the fuzzer's instrumentation would take each worker minutes).
func FuzzOpen(f *testing.F) {
	classic, built := classicPDF(), builtPDF(f)
	for _, seed := range [][]byte{classic, built, classic[:len(classic)/2], built[:len(built)-20],
		[]byte("%PDF-1.7\n"), nil, []byte("<html></html>")} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		var d *Doc
		var err error
		if heap := allocated(func() { d, err = Open(src) }); heap > heapBudget+8*uint64(len(src)) {
			t.Fatalf("one parse of %d bytes allocated %d bytes, past the budget", len(src), heap)
		}
		if err != nil {
			if e, ok := apperr.As(err); ok && e.Kind != apperr.KindInvalid {
				t.Fatalf("refused as %v, want a 400 problem", err)
			}
			if _, ok := apperr.As(err); !ok && !strings.HasPrefix(err.Error(), "pdfdoc: ") {
				t.Fatalf("refused with %v", err)
			}
			return
		}
		if n, err := d.PageCount(); err != nil || n < 1 {
			t.Fatalf("opened, but page count %d (%v)", n, err)
		}
		d.Release()
	})
}

// TestOpenSeeds holds the seeds' outcomes: the whole PDFs open with their pages, the rest are
// pdf_unreadable.
func TestOpenSeeds(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		src   []byte
		pages int
	}{"classic": {classicPDF(), 1}, "built": {builtPDF(t), 2}} {
		d, err := Open(tc.src)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if n, err := d.PageCount(); err != nil || n != tc.pages {
			t.Errorf("%s: %d pages (%v), want %d", name, n, err, tc.pages)
		}
	}
	// An object number past the PDF limit, in a file whose startxref is lost (so that Open
	// would rewrite it, and pdfcpu's writer would walk every number up to it).
	forged := bytes.Replace(classicPDF(), []byte("3 0 obj"), []byte("55000000000000 0 obj"), 1)
	forged = bytes.Replace(forged, []byte("[3 0 R]"), []byte("[55000000000000 0 R]"), 1)
	forged = forged[:bytes.LastIndex(forged, []byte("startxref"))]
	for _, src := range [][]byte{nil, []byte("%PDF-1.7\n"), []byte("<html></html>"), classicPDF()[:100], forged} {
		if _, err := Open(src); apperr.KindOf(err) != apperr.KindInvalid {
			t.Errorf("%.20q: %v, want %s", src, err, CodeUnreadable)
		}
	}
}

// TestWriteBombCorpus writes the bombs (16 MiB scale) into the FuzzOpen corpus when
// PDFDOC_WRITE_CORPUS is set; the files are committed, this regenerates them.
func TestWriteBombCorpus(t *testing.T) {
	if os.Getenv("PDFDOC_WRITE_CORPUS") == "" {
		t.Skip("PDFDOC_WRITE_CORPUS not set")
	}
	for name, src := range bombs(16 << 20) {
		body := "go test fuzz v1\n[]byte(" + strconv.Quote(string(src)) + ")\n"
		if err := os.WriteFile(filepath.Join("testdata", "fuzz", "FuzzOpen", "bomb-"+name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
