package conformance

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/devtools/funchost"
	"github.com/google/go-cmp/cmp"
)

// httpApp has forwarded routes of every template kind, invocation routes that show which
// function ran, and the auth levels.
func httpApp(t *testing.T) string {
	fwd := func(route, methods, auth string) string {
		r := ""
		if route != "" {
			r = `,"route":"` + route + `"`
		}
		m := ""
		if methods != "" {
			m = `,"methods":[` + methods + `]`
		}
		return `{"bindings":[{"type":"httpTrigger","direction":"in","name":"req","authLevel":"` + auth + `"` + m + r + `},{"type":"http","direction":"out","name":"res"}]}`
	}
	inv := func(route, methods, auth string) string {
		return `{"bindings":[{"type":"httpTrigger","direction":"in","name":"req","authLevel":"` + auth + `","methods":[` + methods + `],"route":"` + route + `"},` +
			`{"type":"http","direction":"out","name":"res"},{"type":"queue","direction":"out","name":"out","queueName":"%OUT_QUEUE%","connection":"AzureWebJobsStorage"}]}`
	}
	return writeApp(t, fastQueues(), map[string]string{
		"Items":       fwd("items/{id:int}", `"get","POST"`, "anonymous"),
		"ItemsByName": fwd("items/{name:alpha}", `"get"`, "anonymous"),
		"Files":       fwd("files/{*path}", `"get"`, "anonymous"),
		"Opt":         fwd("opt/{x?}", `"get"`, "anonymous"),
		"Default":     fwd("", "", "anonymous"),
		"Keyed":       fwd("keyed/{id:guid}", `"get","post"`, "function"),
		"Admin":       fwd("adm", `"get"`, "admin"),
		"HttpParam":   inv("p/{id}", `"get","post"`, "anonymous"),
		"HttpSpecial": inv("p/special", `"get"`, "anonymous"),
		"HttpOut":     inv("out/{kind?}", `"post"`, "function"),
		"Tick":        `{"bindings":[{"type":"timerTrigger","direction":"in","name":"timer","schedule":"0 0 0 1 1 *"}]}`,
	})
}

func do(t *testing.T, method, url string, body io.Reader, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

func TestRoutesAndMethods(t *testing.T) {
	t.Parallel()
	e := startHost(t, funchost.ShapeObserved, map[string]string{"OUT_QUEUE": queueName("routes")}, httpApp(t))
	tests := []struct {
		method, path string
		status       int
		seenPath     string // forwarded: path the handler saw
		invoked      string // invocation: function the handler saw
		allow        string
	}{
		{"GET", "/api/items/42", 200, "/api/items/42", "", ""},
		{"get", "/API/Items/42", 200, "/API/Items/42", "", ""},
		{"POST", "/api/items/42", 200, "/api/items/42", "", ""},
		{"GET", "/api/items/abc", 200, "/api/items/abc", "", ""},
		{"POST", "/api/items/abc", 405, "", "", "GET"},
		{"DELETE", "/api/items/42", 405, "", "", "GET, POST"},
		{"GET", "/api/items/4x2", 404, "", "", ""},
		{"GET", "/api/files/a/b/c.txt", 200, "/api/files/a/b/c.txt", "", ""},
		{"GET", "/api/opt", 200, "/api/opt", "", ""},
		{"GET", "/api/opt/1", 200, "/api/opt/1", "", ""},
		{"GET", "/api/opt/1/2", 404, "", "", ""},
		{"PATCH", "/api/Default", 200, "/api/Default", "", ""},
		{"GET", "/api/nothing", 404, "", "", ""},
		{"GET", "/items/42", 404, "", "", ""},
		{"GET", "/api/p/special", 200, "", "HttpSpecial", ""},
		{"GET", "/api/p/other", 200, "", "HttpParam", ""},
		{"PUT", "/api/p/other", 405, "", "", "GET, POST"},
	}
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			before := 0
			if tc.invoked != "" {
				before = len(e.records(t, tc.invoked))
			}
			resp, _ := do(t, tc.method, e.h.URL()+tc.path, nil, map[string]string{"X-Mode": "nores"})
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
			}
			if got := resp.Header.Get("X-Seen-Path"); got != tc.seenPath {
				t.Errorf("handler saw path %q, want %q", got, tc.seenPath)
			}
			if tc.seenPath != "" && !strings.EqualFold(resp.Header.Get("X-Seen-Method"), tc.method) {
				t.Errorf("handler saw method %q", resp.Header.Get("X-Seen-Method"))
			}
			if xff := resp.Header.Get("X-Seen-Forwarded-For"); tc.seenPath != "" && !regexp.MustCompile(`^127\.0\.0\.1:\d+$`).MatchString(xff) {
				t.Errorf("forwarded with X-Forwarded-For %q, want the client's address and port", xff)
			}
			if got := resp.Header.Get("Allow"); got != tc.allow {
				t.Errorf("Allow %q, want %q", got, tc.allow)
			}
			if tc.invoked != "" {
				if got := len(e.records(t, tc.invoked)); got != before+1 {
					t.Errorf("%s invoked %d times, want %d", tc.invoked, got-before, 1)
				}
			}
		})
	}
	// A forwarded request's X-Forwarded-For keeps what the client sent, the client's address last.
	resp, _ := do(t, "GET", e.h.URL()+"/api/items/42", nil, map[string]string{"X-Forwarded-For": "198.51.100.66"})
	if xff := resp.Header.Get("X-Seen-Forwarded-For"); !regexp.MustCompile(`^198\.51\.100\.66, 127\.0\.0\.1:\d+$`).MatchString(xff) {
		t.Errorf("forwarded a forged X-Forwarded-For as %q", xff)
	}
	recs := e.records(t, "HttpParam")
	if len(recs) == 0 {
		t.Fatal("HttpParam never invoked")
	}
	var req struct {
		Data struct {
			Req struct{ Params map[string]string }
		}
	}
	if err := json.Unmarshal(recs[len(recs)-1].Request, &req); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"id": "other"}, req.Data.Req.Params); diff != "" {
		t.Errorf("Params (-want +got):\n%s", diff)
	}
}

func TestHostKeys(t *testing.T) {
	t.Parallel()
	e := startHost(t, funchost.ShapeObserved, map[string]string{"OUT_QUEUE": queueName("keys")}, httpApp(t))
	const g = "/api/keyed/6f6a1c2e-1111-4a2b-8c3d-0123456789ab"
	tests := []struct {
		name, method, path string
		hdr                map[string]string
		status             int
	}{
		{"function route, no key", "GET", g, nil, 401},
		{"function route, wrong code", "GET", g + "?code=nope", nil, 401},
		{"function route, wrong header", "GET", g, map[string]string{"x-functions-key": "nope"}, 401},
		{"function route, host key code", "GET", g + "?code=" + hostKey, nil, 200},
		{"function route, host key header", "POST", g, map[string]string{"x-functions-key": hostKey}, 200},
		{"function route, master key", "GET", g + "?code=" + masterKey, nil, 200},
		{"admin route, host key", "GET", "/api/adm?code=" + hostKey, nil, 401},
		{"admin route, master key", "GET", "/api/adm?code=" + masterKey, nil, 200},
		{"anonymous route, no key", "GET", "/api/items/1", nil, 200},
		{"admin API, no key", "POST", "/admin/functions/Tick", nil, 401},
		{"admin API, host key", "POST", "/admin/functions/Tick?code=" + hostKey, nil, 401},
		{"admin API, master key", "POST", "/admin/functions/Tick", map[string]string{"x-functions-key": masterKey}, 202},
		{"admin API, unknown function", "POST", "/admin/functions/Nope?code=" + masterKey, nil, 404},
		{"admin API, HTTP function", "POST", "/admin/functions/Items?code=" + masterKey, nil, 400},
		{"admin API, wrong method", "GET", "/admin/functions/Tick?code=" + masterKey, nil, 405},
		{"admin host status", "GET", "/admin/host/status?code=" + masterKey, nil, 200},
	}
	t.Run("keys", func(t *testing.T) {
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				var body io.Reader
				if tc.method == "POST" {
					body = strings.NewReader(`{"input":""}`)
				}
				resp, b := do(t, tc.method, e.h.URL()+tc.path, body, tc.hdr)
				if resp.StatusCode != tc.status {
					t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
				}
				if tc.status == 401 && len(b) != 0 {
					t.Errorf("401 body %q, want empty", b)
				}
			})
		}
	})
	// The admin API call with the master key fired the timer function in the background.
	e.waitRecords(t, "Tick", 1, 10*time.Second)
}

func TestForwardingStreamsLargeBodies(t *testing.T) {
	t.Parallel()
	e := startHost(t, funchost.ShapeObserved, map[string]string{"OUT_QUEUE": queueName("fwd")}, httpApp(t))
	payload := make([]byte, 8<<20)
	if _, err := rand.Read(payload); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		body    func() io.Reader
		wantLen string
		wantTE  string
		query   string
		wantQ   string
	}{
		{"content-length", func() io.Reader { return bytes.NewReader(payload) }, "8388608", "", "?a=1&b=x%20y", "a=1&b=x%20y"},
		{"chunked", func() io.Reader { return io.MultiReader(bytes.NewReader(payload)) }, "-1", "chunked", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			resp, got := do(t, "POST", e.h.URL()+"/api/items/7"+tc.query, tc.body(), map[string]string{"Content-Type": "application/octet-stream"})
			if resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			if !bytes.Equal(got, payload) {
				t.Fatalf("echoed %d bytes, not byte-identical to the %d sent", len(got), len(payload))
			}
			if h := resp.Header.Get("X-Seen-Content-Length"); h != tc.wantLen {
				t.Errorf("handler saw Content-Length %s, want %s", h, tc.wantLen)
			}
			if h := resp.Header.Get("X-Seen-Transfer-Encoding"); h != tc.wantTE {
				t.Errorf("handler saw Transfer-Encoding %q, want %q", h, tc.wantTE)
			}
			if h := resp.Header.Get("X-Seen-Query"); h != tc.wantQ {
				t.Errorf("handler saw query %q, want %q", h, tc.wantQ)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/octet-stream" {
				t.Errorf("Content-Type %q", ct)
			}
		})
	}
}

func TestInvocationRequestShape(t *testing.T) {
	t.Parallel()
	for _, shape := range []struct {
		name  string
		shape funchost.RequestShape
	}{{"observed", funchost.ShapeObserved}, {"documented", funchost.ShapeDocumented}} {
		t.Run(shape.name, func(t *testing.T) {
			t.Parallel()
			e := startHost(t, shape.shape, map[string]string{"OUT_QUEUE": queueName("shape")}, httpApp(t))
			resp, _ := do(t, "POST", e.h.URL()+"/api/p/abc?x=1&y=two", strings.NewReader(`{"a":1}`),
				map[string]string{"Content-Type": "application/json", "X-Mode": "nores", "X-Multi": "v1", "X-Forwarded-For": "198.51.100.66"})
			if resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			resp, _ = do(t, "POST", e.h.URL()+"/api/p/bin", bytes.NewReader([]byte{0, 1, 2, 0xff}),
				map[string]string{"Content-Type": "application/octet-stream", "X-Mode": "nores"})
			if resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			recs := e.waitRecords(t, "HttpParam", 2, 5*time.Second)
			var got struct {
				Data struct {
					Req struct {
						URL        string `json:"Url"`
						Method     string
						Query      json.RawMessage
						Headers    map[string][]string
						Params     map[string]string
						Body       string
						Identities json.RawMessage
					} `json:"req"`
				}
				Metadata struct {
					Query   json.RawMessage
					Headers map[string]string
					ID      string                                        `json:"id"`
					Sys     struct{ MethodName, UtcNow, RandGuid string } `json:"sys"`
				}
			}
			if err := json.Unmarshal(recs[0].Request, &got); err != nil {
				t.Fatalf("%v\n%s", err, recs[0].Request)
			}
			r := got.Data.Req
			if !strings.HasSuffix(r.URL, "/api/p/abc?x=1&y=two") || !strings.HasPrefix(r.URL, "http://127.0.0.1:") {
				t.Errorf("Url %q", r.URL)
			}
			if r.Method != "POST" || r.Body != `{"a":1}` {
				t.Errorf("Method %q Body %q", r.Method, r.Body)
			}
			if diff := cmp.Diff([]string{"application/json"}, r.Headers["Content-Type"]); diff != "" {
				t.Errorf("Headers[Content-Type] (-want +got):\n%s", diff)
			}
			if got.Metadata.Headers["X-Multi"] != "v1" {
				t.Errorf("Metadata.Headers %v", got.Metadata.Headers)
			}
			// The front end appends the client's address and port to what the client sent.
			if xff := r.Headers["X-Forwarded-For"]; len(xff) != 1 || !regexp.MustCompile(`^198\.51\.100\.66, 127\.0\.0\.1:\d+$`).MatchString(xff[0]) ||
				got.Metadata.Headers["X-Forwarded-For"] != xff[0] {
				t.Errorf("X-Forwarded-For %q, metadata %q", xff, got.Metadata.Headers["X-Forwarded-For"])
			}
			if diff := cmp.Diff(map[string]string{"id": "abc"}, r.Params); diff != "" {
				t.Errorf("Params (-want +got):\n%s", diff)
			}
			if got.Metadata.ID != "abc" || got.Metadata.Sys.MethodName != "HttpParam" || got.Metadata.Sys.RandGuid == "" {
				t.Errorf("Metadata %+v", got.Metadata)
			}
			if !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`).MatchString(got.Metadata.Sys.UtcNow) {
				t.Errorf("sys.UtcNow %q", got.Metadata.Sys.UtcNow)
			}
			wantQuery := map[string]string{"x": "1", "y": "two"}
			for _, q := range []json.RawMessage{r.Query, got.Metadata.Query} {
				var m map[string]string
				if shape.shape == funchost.ShapeObserved {
					var s string
					if err := json.Unmarshal(q, &s); err != nil {
						t.Fatalf("observed Query %s is not a JSON string", q)
					}
					q = json.RawMessage(s)
				}
				if err := json.Unmarshal(q, &m); err != nil {
					t.Fatalf("Query %s: %v", q, err)
				}
				if diff := cmp.Diff(wantQuery, m); diff != "" {
					t.Errorf("Query (-want +got):\n%s", diff)
				}
			}
			if hasIdentities := r.Identities != nil; hasIdentities != (shape.shape == funchost.ShapeObserved) {
				t.Errorf("Identities present = %v in the %s shape", hasIdentities, shape.name)
			}
			var bin struct {
				Data struct {
					Req struct{ Body string } `json:"req"`
				}
			}
			if err := json.Unmarshal(recs[1].Request, &bin); err != nil {
				t.Fatal(err)
			}
			if want := base64.StdEncoding.EncodeToString([]byte{0, 1, 2, 0xff}); bin.Data.Req.Body != want {
				t.Errorf("binary Body %q, want base64 %q", bin.Data.Req.Body, want)
			}
		})
	}
}
