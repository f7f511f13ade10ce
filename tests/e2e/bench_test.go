package e2e

import (
	"encoding/json"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/callbacksig"
)

// BenchmarkCreateSession measures signing-session creates through the local Functions host
// (invocation, JWT check, blob hash by streaming, manifest from the PDF, one table transaction,
// queue outputs), 4 requests in flight. It reports creates per second.
func BenchmarkCreateSession(b *testing.B) {
	body := createBody(b, "parallel", 2)
	tok := bearer(svc.jwt(b, tenantA, "Esign.Initiator"))
	var failed atomic.Int64
	b.SetParallelism(2) // 2 x GOMAXPROCS(2) = 4 in flight
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m := map[string]any{}
			for k, v := range body {
				m[k] = v
			}
			m["correlationId"] = "bench-" + uuid.NewString()
			if r := call(b, "POST", svc.url("esign/session"), m, tok); r.Status != http.StatusCreated {
				failed.Add(1)
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "creates/s")
	if n := failed.Load(); n > 0 {
		b.Fatalf("%d creates failed", n)
	}
}

// BenchmarkCallback measures signed callbacks through the local Functions host (invocation,
// HMAC check, token check, slot lookup, one table transaction with the signature rows and the
// callback id, queue outputs), 4 requests in flight. The b.N slots are created, activated,
// viewed and consented before the timer starts (parallel sessions of two slots, so each
// callback signs one slot and none of them seals); only the callbacks are timed. It reports
// callbacks per second.
func BenchmarkCallback(b *testing.B) {
	template := createBody(b, "parallel", 2)
	tok := bearer(svc.jwt(b, tenantA, "Esign.Initiator"))
	secret := callbackSecret(b)
	bodies := make(chan []byte, b.N)
	for len(bodies) < b.N {
		m := map[string]any{}
		for k, v := range template {
			m[k] = v
		}
		m["correlationId"] = "bench-cb-" + uuid.NewString()
		r := call(b, "POST", svc.url("esign/session"), m, tok)
		if r.Status != http.StatusCreated {
			b.Fatalf("create %d %s", r.Status, r.Raw)
		}
		for _, s := range slotsOf(b, r, "slots") {
			if len(bodies) == b.N {
				break
			}
			raw, err := json.Marshal(callbackBody(walk(b, s.Link)))
			if err != nil {
				b.Fatal(err)
			}
			bodies <- raw
		}
	}
	close(bodies)
	var failed atomic.Int64
	b.SetParallelism(2) // 2 x GOMAXPROCS(2) = 4 in flight
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			raw := <-bodies
			r := postCallback(b, raw, callbacksig.Sign(secret, time.Now(), raw))
			if r.Status != http.StatusOK {
				failed.Add(1)
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "callbacks/s")
	if n := failed.Load(); n > 0 {
		b.Fatalf("%d callbacks failed", n)
	}
}
