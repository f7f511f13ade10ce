package dispatch_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/esign-svc/esign/shared/apptest/heaptest"
)

// intakeHeap submits n valid records (no approval) and returns the peak heap above the heap
// holding the request.
func intakeHeap(tb testing.TB, f *fixture, n int) uint64 {
	tb.Helper()
	recs := make([]map[string]any, n)
	for i := range recs {
		recs[i] = offer(i)
	}
	req := request(f.pkg, recs, "")
	recs = nil
	var err error
	peak := heaptest.Peak(func() {
		_, err = f.in.Submit(context.Background(), alice, req)
	})
	if err != nil {
		tb.Fatal(err)
	}
	return peak
}

// TestIntakeHeapIsBounded: a 10,000-record intake holds no decoded record, encrypted row or
// copy of the records past the chunk being stored: its peak heap above the request stays within
// a bound that the whole-batch intake (every record decoded, encrypted and copied at once) went
// far past.
func TestIntakeHeapIsBounded(t *testing.T) {
	f := newFixture(t)
	small, large := intakeHeap(t, f, 1000), intakeHeap(t, f, 10000)
	t.Logf("peak heap above the request: 1,000 records %.1f MiB, 10,000 records %.1f MiB", heaptest.MiB(small), heaptest.MiB(large))
	if limit := uint64(heapLimit10k); large > limit {
		t.Errorf("10,000 records: peak heap %.1f MiB above the request, want at most %.1f MiB", heaptest.MiB(large), heaptest.MiB(limit))
	}
}

// heapLimit10k bounds a 10,000-record intake's peak heap above the request: 5.6 MiB measured
// streamed (the receipt: a result per record, its JSON and PDF), 15.8 MiB whole-batch.
const heapLimit10k = 10 << 20

// BenchmarkIntake submits 1,000 and 10,000 records per run and reports the peak heap above
// the request.
func BenchmarkIntake(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			f := newFixture(b)
			var peak uint64
			for b.Loop() {
				peak = max(peak, intakeHeap(b, f, n))
			}
			b.ReportMetric(heaptest.MiB(peak), "peakMiB")
		})
	}
}
