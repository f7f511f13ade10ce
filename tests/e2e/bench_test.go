package e2e

import (
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
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
