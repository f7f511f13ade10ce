package funcproto

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestRouter(t *testing.T) {
	t.Parallel()
	app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTeapot)
		_, _ = w.Write([]byte("app " + r.URL.Path))
	})
	rt := NewRouter(app)
	rt.Handle("Seal", QueueHandler(func(ctx context.Context, m QueueMessage) error { return nil }))
	rt.Handle("SessionEvent", HTTPInvocation(goldenApp()))

	tests := []struct {
		name, method, path, body string
		wantStatus               int
		wantBody                 string
	}{
		{"readiness", "GET", "/", "", 200, `{"status":"ready"}`},
		{"readiness head", "HEAD", "/", "", 200, ""},
		{"queue invocation", "POST", "/Seal", string(readTestdata(t, "queue_documented.json")), 200, `"Outputs":{}`},
		{"invocation name case-insensitive", "POST", "/seal", string(readTestdata(t, "queue_documented.json")), 200, `"Outputs":{}`},
		{"http invocation", "POST", "/SessionEvent", string(readTestdata(t, "http_documented.json")), 200, `"seal":{"groupId":"g-42"`},
		{"forwarded", "GET", "/api/esign/session/g1/status", "", 418, "app /api/esign/session/g1/status"},
		{"forwarded POST to root", "POST", "/", "", 418, "app /"},
		{"unknown function goes to the app", "POST", "/Nope", "", 418, "app /Nope"},
		{"nested path is not a function", "POST", "/Seal/x", "", 418, "app /Seal/x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := httptest.NewRecorder()
			rt.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, strings.NewReader(tt.body)))
			if rec.Code != tt.wantStatus || !strings.Contains(rec.Body.String(), tt.wantBody) {
				t.Fatalf("%s %s = %d %q; want %d containing %q", tt.method, tt.path, rec.Code, rec.Body.String(), tt.wantStatus, tt.wantBody)
			}
		})
	}
}

func TestRouterNoFallback(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	NewRouter(nil).ServeHTTP(rec, httptest.NewRequest("GET", "/api/x", nil))
	if rec.Code != 404 || rec.Header().Get("Content-Type") != "application/problem+json" {
		t.Fatalf("status %d type %q", rec.Code, rec.Header().Get("Content-Type"))
	}
}

func TestRouterHandleMisuse(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"", "a/b", "API", "Dup"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rt := NewRouter(nil)
			rt.Handle("dup", http.NotFoundHandler())
			defer func() {
				if recover() == nil {
					t.Fatalf("Handle(%q) did not panic", name)
				}
			}()
			rt.Handle(name, http.NotFoundHandler())
		})
	}
}
