package template

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/esign-svc/esign/shared/apperr"
)

// deflated is a ZIP of one deflated entry holding n zero bytes under a header declaring
// declared bytes (a zip bomb when n is far past the entry's limit: zeros deflate ~1000:1).
func deflated(tb testing.TB, name string, n int, declared uint64, more ...rawEntry) []byte {
	tb.Helper()
	var comp bytes.Buffer
	fw, _ := flate.NewWriter(&comp, flate.BestCompression)
	zero := make([]byte, 64<<10)
	for left := n; left > 0; left -= len(zero) {
		fw.Write(zero[:min(left, len(zero))])
	}
	fw.Close()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateRaw(&zip.FileHeader{Name: name, Method: zip.Deflate, CRC32: crcOfZeros(n),
		CompressedSize64: uint64(comp.Len()), UncompressedSize64: declared})
	if err != nil {
		tb.Fatal(err)
	}
	w.Write(comp.Bytes())
	for _, e := range more {
		w, _ := zw.Create(e.name)
		w.Write(e.body)
	}
	zw.Close()
	return buf.Bytes()
}

func crcOfZeros(n int) uint32 {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.CreateHeader(&zip.FileHeader{Name: "z", Method: zip.Store})
	zero := make([]byte, 64<<10)
	for left := n; left > 0; left -= len(zero) {
		w.Write(zero[:min(left, len(zero))])
	}
	zw.Close()
	zr, _ := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	return zr.File[0].CRC32
}

func zipOf(tb testing.TB, files map[string][]byte) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, b := range files {
		w, err := zw.Create(name)
		if err != nil {
			tb.Fatal(err)
		}
		w.Write(b)
	}
	zw.Close()
	return buf.Bytes()
}

// billionLaughs is YAML whose aliases expand to 10^9 "lol"s.
const billionLaughs = "name: n\nversion: 1\nesign:\n  a: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol,lol]\n" +
	"  b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\n  c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\n" +
	"  d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\n  e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\n" +
	"  f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\n  g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f,*f]\n" +
	"  h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g,*g]\n  i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h,*h]\n"

// loadZip is Loader.Load's path for a ZIP blob after the read: unzip, then Parse.
func loadZip(raw []byte) (*Package, error) {
	bad := func(format string, args ...any) error {
		return apperr.Invalid(CodeInvalid, apperr.Field("templatePath", fmt.Sprintf(format, args...)))
	}
	files, err := unzip(raw, bad)
	if err != nil {
		return nil, err
	}
	return Parse("templatePath", files)
}

// zipBudget is what reading raw may allocate: each file the reader looks for at most its
// limit, the YAML's tree a fixed multiple of its
// bytes, and a fixed allowance for the reader's own structures.
func zipBudget(raw []byte) uint64 {
	zr, err := zip.NewReader(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		return 64<<20 + 64*uint64(len(raw))
	}
	var b uint64 = 64 << 20 // CEL environment, compiled rules, the zip directory
	for _, f := range zr.File {
		b += 512 // each directory entry
		for name, limit := range map[string]uint64{FileYAML: MaxYAMLBytes, FilePDF: MaxPDFBytes, FileSchema: MaxSchemaBytes} {
			if strings.HasSuffix(f.Name, name) {
				b += min(limit+1, f.UncompressedSize64+1) + 64<<10
				if name == FileYAML {
					b += 256 * min(limit, f.UncompressedSize64)
				}
			}
		}
	}
	return b
}

// FuzzUnzip: any bytes as a ZIP package are a package or a 400 template_invalid at
// templatePath; a package holds exactly the files found, each within its limit; and reading
// never allocates past the limits, whatever the entries inflate to (zip bombs, headers that
// lie about sizes) or the YAML's aliases expand to.
func FuzzUnzip(f *testing.F) {
	y := sampleYAML(f)
	f.Add(zipOf(f, map[string][]byte{FileYAML: y, FilePDF: fakePDF}))
	f.Add(zipOf(f, map[string][]byte{"offer/" + FileYAML: y, "offer/" + FilePDF: fakePDF, "offer/" + FileSchema: []byte("steps: []\n")}))
	f.Add(zipOf(f, map[string][]byte{"a/" + FileYAML: y, "b/" + FileYAML: y}))
	f.Add(zipOf(f, map[string][]byte{"../" + FileYAML: y, "/" + FilePDF: fakePDF, `a\` + FileYAML: y}))
	f.Add(zipOf(f, map[string][]byte{FileYAML: []byte(billionLaughs), FilePDF: fakePDF}))
	f.Add(zipOf(f, map[string][]byte{FileYAML: []byte("name: n\nversion: 1\nesign: &a {enabled: true}\ndelivery: *a\n"), FilePDF: fakePDF}))
	// zip bombs: 1 MiB of zeros as template.yaml (limit 256 KiB) declared honestly, declared
	// small (the header lies) and declared exactly at the limit (TestZipBombIsRefusedWithBoundedMemory
	// has a 96 MiB one for the PDF's limit, too slow to mutate)
	for _, declared := range []uint64{1 << 20, 100, MaxYAMLBytes} {
		f.Add(deflated(f, FileYAML, 1<<20, declared, rawEntry{name: FilePDF, body: fakePDF}))
	}
	f.Add([]byte("PK\x05\x06" + strings.Repeat("\x00", 18)))
	f.Add([]byte("not a zip"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		budget := zipBudget(raw)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		pkg, err := loadZip(raw)
		runtime.ReadMemStats(&after)
		if used := after.TotalAlloc - before.TotalAlloc; used > budget {
			t.Fatalf("allocated %d bytes reading a %d-byte ZIP (budget %d)", used, len(raw), budget)
		}
		if err != nil {
			e, ok := apperr.As(err)
			if !ok || e.Code != CodeInvalid || e.Kind != apperr.KindInvalid || len(e.Fields) != 1 ||
				e.Fields[0].Field != "templatePath" || e.Fields[0].Message == "" {
				t.Fatalf("err = %#v", err)
			}
			return
		}
		if len(pkg.PDF) > MaxPDFBytes || len(pkg.Schema) > MaxSchemaBytes || !bytes.Contains(pkg.PDF[:min(len(pkg.PDF), 1024)], []byte("%PDF-")) {
			t.Fatalf("package past its limits: pdf %d, schema %d", len(pkg.PDF), len(pkg.Schema))
		}
		if pkg.Name == "" || pkg.Version < 1 || !strings.HasPrefix(pkg.PDFHash, "sha256:") {
			t.Fatalf("inconsistent package %+v", pkg)
		}
	})
}

// TestZipBombIsRefusedWithBoundedMemory: a 96 KiB ZIP whose template.pdf inflates to 96 MiB
// (past the 64 MiB limit) is refused, whatever its header declares, having allocated no more
// than the limit allows; so is a template.yaml of aliases expanding to 10^9 values.
func TestZipBombIsRefusedWithBoundedMemory(t *testing.T) {
	const n = 96 << 20
	for _, declared := range []uint64{n, 1000, MaxPDFBytes} {
		raw := deflated(t, FilePDF, n, declared, rawEntry{name: FileYAML, body: sampleYAML(t)})
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := loadZip(raw)
		runtime.ReadMemStats(&after)
		used := after.TotalAlloc - before.TotalAlloc
		t.Logf("declared %d: %d-byte ZIP, allocated %d bytes: %v", declared, len(raw), used, err)
		if e, ok := apperr.As(err); !ok || e.Code != CodeInvalid {
			t.Fatalf("declared %d: err = %v", declared, err)
		}
		if used > MaxPDFBytes+4<<20 {
			t.Fatalf("declared %d: allocated %d bytes", declared, used)
		}
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := loadZip(zipOf(t, map[string][]byte{FileYAML: []byte(billionLaughs), FilePDF: fakePDF}))
	runtime.ReadMemStats(&after)
	if e, ok := apperr.As(err); !ok || e.Code != CodeInvalid || !strings.Contains(e.Fields[0].Message, "anchors and aliases are not allowed") {
		t.Fatalf("billion laughs: err = %v", err)
	}
	if used := after.TotalAlloc - before.TotalAlloc; used > 8<<20 {
		t.Fatalf("billion laughs: allocated %d bytes", used)
	}
}
