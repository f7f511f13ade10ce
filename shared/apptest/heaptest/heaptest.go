// Package heaptest measures the peak live heap of a piece of work, for the tests that bound a
// use case's memory (the batch intake, the render route's decode of a batch body).
package heaptest

import (
	"runtime"
	"runtime/debug"
	"sync"
	"time"
)

// Peak runs fn and returns the highest live heap sampled while it ran (every millisecond), above
// the heap before it. GOGC is 5 while it runs: the sampled heap is
// close to what is live, not garbage awaiting a cycle. What fn's caller holds before (the
// request) is part of the heap before.
func Peak(fn func()) uint64 {
	defer debug.SetGCPercent(debug.SetGCPercent(5))
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base, peak := ms.HeapAlloc, ms.HeapAlloc
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapAlloc)
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	fn()
	close(stop)
	wg.Wait()
	if peak < base {
		return 0
	}
	return peak - base
}

// MiB is n bytes in MiB.
func MiB(n uint64) float64 { return float64(n) / (1 << 20) }

// Allocated runs fn and returns the bytes it allocated on the heap (whether still live or not):
// unlike the sampled Peak, an exact count, for a bound on the copies a piece of work makes.
func Allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
