package server

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/callbacksig"
	"github.com/esign-svc/esign/shared/portalclient"
)

var (
	secretA = strings.Repeat("a", 32)
	secretB = strings.Repeat("b", 32)
	now     = time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
)

func newServer(t *testing.T, portalURL string) *Server {
	t.Helper()
	s, err := New(Config{PortalURL: portalURL, ServiceURL: "http://127.0.0.1:7071", FunctionKey: "key",
		Secrets: []string{secretA, secretB}, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func do(h http.Handler, method, target string, body string, headers map[string]string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	for k, v := range headers {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestNewNamesTheSettingAtFault(t *testing.T) {
	t.Parallel()
	ok := Config{PortalURL: "https://sign.example.com", ServiceURL: "https://api.example.com", FunctionKey: "k", Secrets: []string{secretA}}
	for _, tc := range []struct {
		name   string
		change func(*Config)
		want   string
	}{
		{"portal URL relative", func(c *Config) { c.PortalURL = "/sign" }, "PORTAL_URL"},
		{"portal URL with query", func(c *Config) { c.PortalURL = "https://x.example?a=1" }, "PORTAL_URL"},
		{"service URL missing", func(c *Config) { c.ServiceURL = "" }, "BASE_URL"},
		{"no function key", func(c *Config) { c.FunctionKey = "" }, "HOST_KEY"},
		{"no secret", func(c *Config) { c.Secrets = nil }, "PORTAL_CALLBACK_SECRETS"},
		{"short secret", func(c *Config) { c.Secrets = []string{"short"} }, "PORTAL_CALLBACK_SECRETS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.change(&c)
			if _, err := New(c); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New: %v, want an error naming %s", err, tc.want)
			}
		})
	}
	if _, err := New(ok); err != nil {
		t.Fatalf("a valid config: %v", err)
	}
}

// Every page carries the strict policy; the service's origin is the only other one it may call.
func TestPagesCarryTheSecurityHeaders(t *testing.T) {
	t.Parallel()
	s := newServer(t, "http://127.0.0.1:7080")
	for _, path := range []string{"/sign?token=x", "/transfer?token=x", "/deliver/d1?t=x", "/workflow/w1?pt=x", "/workflow/w1/review?pt=x", "/"} {
		w := do(s, "GET", path, "", nil)
		if w.Code != 200 || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") {
			t.Fatalf("GET %s: %d %s", path, w.Code, w.Header().Get("Content-Type"))
		}
		csp := w.Header().Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'none'", "script-src 'self'", "connect-src 'self' http://127.0.0.1:7071", "frame-ancestors 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("GET %s: policy %q lacks %q", path, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
			t.Errorf("GET %s: policy %q allows inline code", path, csp)
		}
		body := w.Body.String()
		if strings.Contains(body, secretA) || strings.Contains(body, "key") && strings.Contains(body, "code=") {
			t.Errorf("GET %s: the page holds a secret", path)
		}
		if !strings.Contains(body, `data-api="http://127.0.0.1:7071/api"`) {
			t.Errorf("GET %s: the page does not name the service's API", path)
		}
	}
	if w := do(s, "GET", "/static/vendor/pdf.min.mjs", "", nil); w.Code != 200 || !strings.Contains(w.Header().Get("Content-Type"), "javascript") {
		t.Fatalf("pdf.js: %d %s", w.Code, w.Header().Get("Content-Type"))
	}
}

// Under a base path every route moves below it, and nothing answers outside it.
func TestBasePath(t *testing.T) {
	t.Parallel()
	s := newServer(t, "https://example.com/portal/")
	if w := do(s, "GET", "/portal/sign?token=x", "", nil); w.Code != 200 || !strings.Contains(w.Body.String(), `src="/portal/static/sign.js"`) {
		t.Fatalf("GET /portal/sign: %d", w.Code)
	}
	for _, path := range []string{"/sign?token=x", "/portalx/sign", "/static/sign.js"} {
		if w := do(s, "GET", path, "", nil); w.Code != 404 {
			t.Errorf("GET %s: %d, want 404", path, w.Code)
		}
	}
}

func problemCode(t *testing.T, w *httptest.ResponseRecorder) (string, []string) {
	t.Helper()
	var p struct {
		Code   string `json:"code"`
		Errors []struct {
			Field string `json:"field"`
		} `json:"errors"`
	}
	raw, _ := io.ReadAll(w.Body)
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatalf("not a problem: %s", raw)
	}
	var fields []string
	for _, e := range p.Errors {
		fields = append(fields, e.Field)
	}
	return p.Code, fields
}

// The sign route refuses another site's page before anything else, and names missing fields;
// neither reaches the service.
func TestSignRefusals(t *testing.T) {
	t.Parallel()
	s := newServer(t, "http://127.0.0.1:7080")
	plain := map[string]string{"Content-Type": "application/json"}
	cross := map[string]string{"Content-Type": "application/json", "Origin": "https://evil.example"}
	w := do(s, "POST", "/portal-api/sign", `{}`, cross)
	if code, _ := problemCode(t, w); w.Code != 403 || code != CodeCrossOrigin {
		t.Fatalf("cross-origin: %d %s", w.Code, code)
	}
	w = do(s, "POST", "/portal-api/sign", `{}`, map[string]string{"Content-Type": "application/json", "Sec-Fetch-Site": "cross-site"})
	if w.Code != 403 {
		t.Fatalf("cross-site without Origin: %d", w.Code)
	}
	w = do(s, "POST", "/portal-api/sign", `{"sessionId":"s1","signerName":" "}`, plain)
	code, fields := problemCode(t, w)
	if w.Code != 400 || code != CodeInvalidField || strings.Join(fields, ",") != "accessToken,signerName,signaturePng" {
		t.Fatalf("missing fields: %d %s %v", w.Code, code, fields)
	}
	w = do(s, "POST", "/portal-api/sign", `{"sessionId":"s1","extra":1}`, plain)
	if code, fields := problemCode(t, w); w.Code != 400 || code != "unknown_field" || len(fields) != 1 || fields[0] != "extra" {
		t.Fatalf("unknown field: %d %s %v", w.Code, code, fields)
	}
	if s.Held("s1") {
		t.Fatal("a refused request left something held")
	}
}

func purgeBody(t *testing.T, ids ...string) []byte {
	t.Helper()
	b, err := json.Marshal(portalclient.PurgeRequest{GroupID: "g1", SessionIDs: ids, Reason: portalclient.ReasonSealed})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The purge accepts the processor's signature (any of the secrets), drops what is held for the
// slots and answers 404 when nothing was held; a bad or stale signature changes nothing.
func TestPurge(t *testing.T) {
	t.Parallel()
	s := newServer(t, "http://127.0.0.1:7080")
	s.attempts.begin("s1")
	s.attempts.finish("s1", &result{Status: 200, ContentType: "application/json", Body: []byte(`{}`)})
	body := purgeBody(t, "s1", "s2")
	hdr := func(secret string, at time.Time) map[string]string {
		return map[string]string{"Content-Type": "application/json", callbacksig.Header: callbacksig.Sign(secret, at, body)}
	}
	for _, tc := range []struct {
		name string
		h    map[string]string
		code string
	}{
		{"unsigned", map[string]string{"Content-Type": "application/json"}, callbacksig.CodeMissing},
		{"wrong secret", hdr(strings.Repeat("c", 32), now), callbacksig.CodeInvalid},
		{"stale", hdr(secretA, now.Add(-10*time.Minute)), callbacksig.CodeStale},
	} {
		w := do(s, "POST", "/v1/purge", string(body), tc.h)
		if code, _ := problemCode(t, w); w.Code != 401 || code != tc.code {
			t.Fatalf("%s: %d %s, want 401 %s", tc.name, w.Code, code, tc.code)
		}
		if !s.Held("s1") {
			t.Fatalf("%s: the refused purge dropped the slot", tc.name)
		}
	}
	if w := do(s, "POST", "/v1/purge", string(body), hdr(secretB, now)); w.Code != 204 || s.Held("s1") {
		t.Fatalf("signed with the second secret: %d, held %v", w.Code, s.Held("s1"))
	}
	if w := do(s, "POST", "/v1/purge", string(body), hdr(secretA, now)); w.Code != 404 {
		t.Fatalf("again: %d, want 404 (nothing held)", w.Code)
	}
	bad := []byte(`{"groupId":"g1","sessionIds":[],"reason":"sealed"}`)
	w := do(s, "POST", "/v1/purge", string(bad), map[string]string{"Content-Type": "application/json", callbacksig.Header: callbacksig.Sign(secretA, now, bad)})
	if code, fields := problemCode(t, w); w.Code != 400 || code != portalclient.CodeInvalidRequest || len(fields) != 1 || fields[0] != "sessionIds" {
		t.Fatalf("empty sessionIds: %d %s %v", w.Code, code, fields)
	}
}

// A slot's signature is forwarded once: while one is in flight another is refused; an accepted
// one is answered again; a refused one frees the slot; outcomes lapse after a day.
func TestAttempts(t *testing.T) {
	t.Parallel()
	clock := now
	a := newAttempts(func() time.Time { return clock })
	if prev, done := a.begin("s1"); prev != nil || done {
		t.Fatal("a new slot is not free")
	}
	if prev, done := a.begin("s1"); prev == nil || done {
		t.Fatal("a slot in flight is not reported")
	}
	a.finish("s1", &result{Status: 409})
	if prev, done := a.begin("s1"); prev != nil || done {
		t.Fatal("a refused signature did not free the slot")
	}
	ok := &result{Status: 200, Body: []byte("accepted")}
	a.finish("s1", ok)
	if prev, done := a.begin("s1"); !done || prev != ok {
		t.Fatal("an accepted signature is not answered again")
	}
	clock = clock.Add(attemptTTL + time.Minute)
	if prev, done := a.begin("s1"); prev != nil || done {
		t.Fatal("an outcome older than a day is still held")
	}
}
