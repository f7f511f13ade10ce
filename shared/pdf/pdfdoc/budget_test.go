package pdfdoc

import (
	"crypto/rand"
	"fmt"
	"runtime"
	"testing"

	"github.com/esign-svc/esign/shared/apperr"
)

// allocated runs f and returns the bytes it allocated on the heap (TotalAlloc delta: an upper
// bound of the heap it held at its peak).
func allocated(f func()) uint64 {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

const heapBudget = 64 << 20

// TestOpenBombsWithinBudget: each ~200 KB bomb (its streams decode to hundreds of MB) costs one
// parse less than 64 MB of heap, and the structure bombs are refused as pdf_too_complex. Before
// the budget, the object-stream bomb alone cost pdfcpu 700 MB.
func TestOpenBombsWithinBudget(t *testing.T) {
	for name, src := range bombs(200 << 20) {
		t.Run(name, func(t *testing.T) {
			var err error
			var d *Doc
			heap := allocated(func() { d, err = Open(src) })
			t.Logf("%s: %d KB file, %.1f MB allocated, %v", name, len(src)>>10, float64(heap)/(1<<20), err)
			if heap > heapBudget {
				t.Errorf("one parse allocated %d bytes, budget %d", heap, heapBudget)
			}
			switch name {
			case "content":
				if err != nil {
					t.Fatalf("a content stream is not decoded to read the structure, yet: %v", err)
				}
				d.Release()
			case "deep":
				if e, ok := apperr.As(err); err != nil && (!ok || e.Kind != apperr.KindInvalid) {
					t.Fatalf("refused with %v, want a 400 problem", err)
				}
			default:
				if e, ok := apperr.As(err); !ok || e.Code != CodeTooComplex || e.Fields[0].Field != "pdf" {
					t.Fatalf("answer %v, want pdf_too_complex on field pdf", err)
				}
			}
		})
	}
}

// TestOpenUnderLimits: the same shapes under the caps open (the budget refuses size, not form).
func TestOpenUnderLimits(t *testing.T) {
	for name, src := range map[string][]byte{
		"objstm":  objStmBomb(1 << 20),
		"nested":  nestedBomb(1 << 20),
		"many":    manyStreamsBomb(4, 1<<20),
		"objects": manyObjectsBomb(1000),
	} {
		if err := prescan(src, DefaultLimits); err != nil {
			t.Errorf("%s: refused under the limits: %v", name, err)
		}
	}
}

// TestOpenLimitsEachCap pins which limit each bomb trips, with small limits.
func TestOpenLimitsEachCap(t *testing.T) {
	l := Limits{StreamBytes: 1 << 20, TotalBytes: 3 << 20, Objects: 1000}
	for _, c := range []struct {
		name string
		src  []byte
		want string
	}{
		{"stream", objStmBomb(2 << 20), "a structure stream decodes to more than 1048576 bytes"},
		{"nested", nestedBomb(2 << 20), "a structure stream decodes to more than 1048576 bytes"},
		{"total", manyStreamsBomb(4, 1<<20-100), "the structure streams decode to more than 3145728 bytes"},
		{"objects", manyObjectsBomb(1001), "a stream declares more than 1000 objects"},
		{"xref", xrefStmBomb(2 << 20), "a structure stream decodes to more than 1048576 bytes"},
	} {
		_, err := OpenWithin(c.src, l)
		e, ok := apperr.As(err)
		if !ok || e.Code != CodeTooComplex || e.Fields[0].Message != c.want {
			t.Errorf("%s: %v, want pdf_too_complex %q", c.name, err, c.want)
		}
	}
}

// TestOpenLarge: a legitimate 50 MiB PDF (one page drawing a 50 MiB incompressible image)
// opens under the default limits.
func TestOpenLarge(t *testing.T) {
	src := largePDF(t, 50<<20)
	d, err := Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Release()
	if n, err := d.PageCount(); err != nil || n != 1 {
		t.Fatalf("pages %d, %v", n, err)
	}
}

// largePDF returns a one-page PDF of exactly size bytes whose bulk is an uncompressed image of
// random bytes.
func largePDF(t testing.TB, size int) []byte {
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /XObject << /Im 4 0 R >> >> /Contents 5 0 R >>",
		"", // the image, sized below
		stream("", []byte("q 595 0 0 842 0 0 cm /Im Do Q")),
	}
	frame := len(pdfFile(append(objs[:3:3], stream(imageDict(1), nil), objs[4]), ""))
	n := size - frame
	n -= 2*(len(fmt.Sprint(n))-1) + 16 // the /Length, /Height and startxref digits
	data := make([]byte, n)
	if _, err := rand.Read(data); err != nil {
		t.Fatal(err)
	}
	objs[3] = stream(imageDict(n), data)
	data = nil
	src := pdfFile(objs, "")
	t.Logf("large PDF: %d bytes", len(src))
	if len(src) > size || len(src) < size-64 {
		t.Fatalf("built %d bytes, want %d (at most 64 less)", len(src), size)
	}
	return src
}

func imageDict(n int) string {
	return fmt.Sprintf("/Type /XObject /Subtype /Image /Width 1 /Height %d /ColorSpace /DeviceGray /BitsPerComponent 8", n)
}

// BenchmarkOpen: one parse of a normal 50-page document with the budget (Open: pre-scan,
// semaphore, pdfcpu with limits) and without it (pdfcpu alone, as before issue 21).
func BenchmarkOpen(b *testing.B) {
	d := New()
	for i := 0; i < 50; i++ {
		if _, err := d.AppendPage(595, 842, []byte("BT /F1 12 Tf 72 720 Td (page text) Tj ET"), nil); err != nil {
			b.Fatal(err)
		}
	}
	src, err := d.Bytes(nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("budget", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			d, err := Open(src)
			if err != nil {
				b.Fatal(err)
			}
			d.Release()
		}
	})
	b.Run("unbounded", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			d, err := open(src, Limits{StreamBytes: 512 << 20, TotalBytes: 1 << 40, Objects: 10_000_000})
			if err != nil {
				b.Fatal(err)
			}
			d.Release()
		}
	})
}
