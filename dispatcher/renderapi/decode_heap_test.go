package renderapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/esign-svc/esign/shared/apptest/heaptest"
	"github.com/esign-svc/esign/shared/dispatch"
)

// batchBody is a batch of n records as the e2e intake benchmark sends it (a 2,000-character
// notes field each: about 21 MiB for dispatch.MaxRecords).
func batchBody(tb testing.TB, n int) []byte {
	tb.Helper()
	recs := make([]map[string]any, n)
	for i := range recs {
		recs[i] = map[string]any{"employeeName": fmt.Sprintf("Person %d", i), "employeeEmail": fmt.Sprintf("person%d@example.test", i),
			"position": "Engineer", "salary": 50000 + i, "currency": "EUR", "startDate": "2027-01-04", "notes": strings.Repeat("n", 2000)}
	}
	body, err := json.Marshal(map[string]any{"templatePath": "templates/bench/offer.zip",
		"options": map[string]any{"title": "Offers"}, "features": map[string]bool{"dispatch": true}, "dataSource": recs})
	if err != nil {
		tb.Fatal(err)
	}
	return body
}

// decodeHeap decodes body as the route does and returns the peak heap above the heap holding
// the body as sent (the request's reader), with the decoded request's dataSource length.
func decodeHeap(tb testing.TB, body []byte) (peak uint64, records int) {
	tb.Helper()
	r := httptest.NewRequest("POST", "/api/render", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	var err error
	var n int
	peak = heaptest.Peak(func() {
		req, derr := decodeRequest(r)
		err = derr
		n = bytes.Count(req.DataSource, []byte(`"employeeName"`))
	})
	runtime.KeepAlive(body) // the body as sent is in the heap before and after: it stays the base
	if err != nil {
		tb.Fatal(err)
	}
	return peak, n
}

// TestBatchBodyIsHeldOnce: the route's decode of a 10,000-record batch body (about 21 MiB)
// holds the body once, its dataSource a slice of it: its peak heap above the body as sent stays
// within 1.5 bodies, and all it allocates within 1.25 bodies. Reading the body by a growing
// buffer, buffering it again in a json.Decoder and copying dataSource out of it peaked at 2.4
// bodies and allocated 6.4.
func TestBatchBodyIsHeldOnce(t *testing.T) {
	body := batchBody(t, dispatch.MaxRecords)
	peak, n := decodeHeap(t, body)
	alloc := heaptest.Allocated(func() { decodeHeap(t, body) })
	t.Logf("body %.1f MiB; its decode: peak heap %.1f MiB (%.2f bodies), allocated %.1f MiB (%.2f bodies)",
		heaptest.MiB(uint64(len(body))), heaptest.MiB(peak), float64(peak)/float64(len(body)), heaptest.MiB(alloc),
		float64(alloc)/float64(len(body)))
	if n != dispatch.MaxRecords {
		t.Fatalf("dataSource holds %d records, want %d", n, dispatch.MaxRecords)
	}
	if limit := uint64(len(body)) * 3 / 2; peak > limit {
		t.Errorf("peak heap %.1f MiB, want at most %.1f MiB (1.5 bodies)", heaptest.MiB(peak), heaptest.MiB(limit))
	}
	if limit := uint64(len(body)) * 5 / 4; alloc > limit {
		t.Errorf("allocated %.1f MiB, want at most %.1f MiB (1.25 bodies)", heaptest.MiB(alloc), heaptest.MiB(limit))
	}
}

// BenchmarkBatchDecode decodes a 10,000-record batch body as the route does and reports the
// peak heap above the body, in MiB and in bodies.
func BenchmarkBatchDecode(b *testing.B) {
	body := batchBody(b, dispatch.MaxRecords)
	var peak uint64
	for b.Loop() {
		p, _ := decodeHeap(b, body)
		peak = max(peak, p)
	}
	b.ReportMetric(heaptest.MiB(peak), "peakMiB")
	b.ReportMetric(float64(peak)/float64(len(body)), "bodies")
}
