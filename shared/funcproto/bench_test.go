package funcproto

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkHTTPInvocation measures one invocation round trip through the HTTP adapter: decode,
// rebuild the request, route it through a ServeMux, record the reply, encode the response.
func BenchmarkHTTPInvocation(b *testing.B) {
	payloads := map[string][]byte{
		"documented":     readTestdata(b, "http_documented.json"),
		"observed_query": readTestdata(b, "http_observed_string_query.json"),
		"object_body":    readTestdata(b, "http_observed_object_body.json"),
	}
	h := HTTPInvocation(goldenApp())
	for name, payload := range payloads {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(payload)))
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "/SessionEvent", bytes.NewReader(payload))
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("status %d", rec.Code)
				}
			}
		})
	}
}

// BenchmarkParseQueueInvocation measures decoding the observed (double-encoded) queue payload.
func BenchmarkParseQueueInvocation(b *testing.B) {
	payload := readTestdata(b, "queue_observed.json")
	b.ReportAllocs()
	for b.Loop() {
		inv, err := ParseInvocation(payload)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := inv.QueueMessage(QueueBinding); err != nil {
			b.Fatal(err)
		}
	}
}
