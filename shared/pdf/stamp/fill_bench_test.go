package stamp_test

import (
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/esign-svc/esign/shared/pdf/stamp"
)

// BenchmarkFill fills the 3-page sample template with a full record. Besides ns/op and
// (with -benchmem) allocations, it reports heap-B: the heap one fill allocates with the
// collector off, an upper bound of the fill's peak heap (everything it allocates held at
// once), on top of what the process already holds.
func BenchmarkFill(b *testing.B) {
	src := offerTemplate(b)
	values := offerRecord()
	opts := stamp.FillOptions{Title: "Offer for Zoë Łukasiewicz-Øster"}
	if _, err := opts.Fill(src, values); err != nil { // warm the font's glyph cache
		b.Fatal(err)
	}
	heap := fillHeap(b, func() error { _, err := opts.Fill(src, values); return err })
	b.ResetTimer()
	for b.Loop() {
		if _, err := opts.Fill(src, values); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(heap), "heap-B")
}

// fillHeap is the heap that f allocates with the garbage collector off.
func fillHeap(b *testing.B, f func() error) uint64 {
	b.Helper()
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := f(); err != nil {
		b.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	return after.HeapAlloc - before.HeapAlloc
}
