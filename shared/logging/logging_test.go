package logging

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestMiddlewareLogsRoutePatternNotPathOrQuery(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/esign/document/{token}", func(w http.ResponseWriter, r *http.Request) {
		From(r.Context()).Info().Msg("inside")
		w.WriteHeader(http.StatusTeapot)
	})
	h := Middleware(New(&buf, "test", "v1"), mux)
	req := httptest.NewRequest("GET", "/api/esign/document/SECRET-TOKEN?email=a@b.test", nil)
	req.Header.Set(HTTPHeaderCorrelation, "corr-123")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)

	if got := rec.Header().Get(HTTPHeaderCorrelation); got != "corr-123" {
		t.Errorf("correlation header = %q", got)
	}
	out := buf.String()
	if strings.Contains(out, "SECRET-TOKEN") || strings.Contains(out, "a@b.test") {
		t.Fatalf("log leaks path or query: %s", out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 log lines, got %d: %s", len(lines), out)
	}
	var access map[string]any
	if err := json.Unmarshal([]byte(lines[1]), &access); err != nil {
		t.Fatal(err)
	}
	if access["route"] != "GET /api/esign/document/{token}" || access["status"] != float64(418) || access["requestId"] != "corr-123" {
		t.Errorf("access line = %v", access)
	}
	var inner map[string]any
	_ = json.Unmarshal([]byte(lines[0]), &inner)
	if inner["requestId"] != "corr-123" || inner["app"] != "test" {
		t.Errorf("handler line lacks ids: %v", inner)
	}
}

func TestSafeCorrelationIDReplacesUnsafeValues(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"", "has space", "a@b.test", strings.Repeat("x", 129), "new\nline"} {
		got := SafeCorrelationID(bad)
		if got == bad || len(got) != 36 {
			t.Errorf("SafeCorrelationID(%q) = %q, want a new UUID", bad, got)
		}
	}
	if got := SafeCorrelationID("ok-1.2:3_4"); got != "ok-1.2:3_4" {
		t.Errorf("valid id replaced: %q", got)
	}
}
