package web

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestCORSOnlyForTheOrigin(t *testing.T) {
	t.Parallel()
	c := CORS{Origin: "https://portal.test", AllowHeaders: "Authorization", ExposeHeaders: "ETag"}
	ok := c.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(200) }))
	for _, tc := range []struct {
		origin string
		allow  bool
	}{{"https://portal.test", true}, {"https://evil.test", false}, {"", false}, {"https://portal.test.evil", false}} {
		for name, h := range map[string]http.Handler{"preflight": c.Preflight("GET, POST"), "actual": ok} {
			req := httptest.NewRequest("OPTIONS", "/", nil)
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			got := rec.Header().Get("Access-Control-Allow-Origin")
			if (got == tc.origin && tc.allow) != tc.allow || (!tc.allow && got != "") || got == "*" {
				t.Errorf("%s from %q: Allow-Origin %q", name, tc.origin, got)
			}
			if tc.allow && name == "preflight" && (rec.Header().Get("Access-Control-Allow-Methods") != "GET, POST" || rec.Code != 204) {
				t.Errorf("preflight headers %v code %d", rec.Header(), rec.Code)
			}
			if tc.allow && name == "actual" && rec.Header().Get("Access-Control-Expose-Headers") != "ETag" {
				t.Errorf("expose headers %v", rec.Header())
			}
		}
	}
}
