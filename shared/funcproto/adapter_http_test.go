package funcproto

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// hostReply is the invocation response as the host reads it.
type hostReply struct {
	Outputs map[string]json.RawMessage
	Logs    []string
}

func decodeReply(t *testing.T, rec *httptest.ResponseRecorder) (hostReply, HTTPResponseData) {
	t.Helper()
	var r hostReply
	if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
		t.Fatalf("reply is not JSON: %v\n%s", err, rec.Body.String())
	}
	var res HTTPResponseData
	if raw, ok := r.Outputs["res"]; ok {
		if err := json.Unmarshal(raw, &res); err != nil {
			t.Fatalf("res: %v", err)
		}
	}
	return r, res
}

// invocationFor builds an HTTP invocation payload.
func invocationFor(method, rawURL, headers, params, body string) []byte {
	return []byte(`{"Data":{"req":{"Url":"` + rawURL + `","Method":"` + method + `","Headers":` + headers +
		`,"Params":` + params + `,"Body":` + body + `}},"Metadata":{"sys":{"MethodName":"F"}}}`)
}

func TestHTTPInvocationRebuildsRequest(t *testing.T) {
	t.Parallel()
	type seen struct {
		Method, Path, RawQuery, Host, RequestURI string
		PathValue, Param, ParamFold              string
		ContentType, Body                        string
		ContentLength                            int64
		InvocationID                             string
		HasInvocation                            bool
	}
	var got seen
	mux := http.NewServeMux()
	mux.HandleFunc("PUT /api/items/{id}", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		_, has := Invocation(r.Context())
		got = seen{
			Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Host: r.Host, RequestURI: r.RequestURI,
			PathValue: r.PathValue("id"), Param: Param(r, "id"), ParamFold: Param(r, "ID"),
			ContentType: r.Header.Get("Content-Type"), Body: string(b), ContentLength: r.ContentLength,
			InvocationID: InvocationID(r.Context()), HasInvocation: has,
		}
		w.WriteHeader(http.StatusNoContent)
	})
	payload := invocationFor("put", "http://127.0.0.1:7071/api/items/42?b=2&a=1&a=3",
		`{"Content-Type":["text/plain"]}`, `{"id":"42"}`, `"hello"`)
	rec := invokeHTTP(t, HTTPInvocation(mux), payload)
	_, res := decodeReply(t, rec)
	if res.StatusCode != http.StatusNoContent {
		t.Fatalf("res status %d, body %q", res.StatusCode, res.Body)
	}
	want := seen{
		Method: "PUT", Path: "/api/items/42", RawQuery: "b=2&a=1&a=3", Host: "127.0.0.1:7071",
		RequestURI: "/api/items/42?b=2&a=1&a=3", PathValue: "42", Param: "42", ParamFold: "42",
		ContentType: "text/plain", Body: "hello", ContentLength: 5, InvocationID: "inv-1", HasInvocation: true,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("request seen by the handler (-want +got):\n%s", diff)
	}
}

func TestHTTPInvocationParamsWithoutMuxPattern(t *testing.T) {
	t.Parallel()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, r.PathValue("groupId")+"|"+Param(r, "groupId")+"|"+Param(r, "missing"))
	})
	rec := invokeHTTP(t, HTTPInvocation(h), invocationFor("GET", "http://h/api/s/g1", `{}`, `{"groupId":"g1"}`, `null`))
	_, res := decodeReply(t, rec)
	if res.StatusCode != 200 || res.Body != "g1|g1|" {
		t.Fatalf("res = %+v", res)
	}
}

func TestHTTPInvocationOutputs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		status      int
		adds        int
		wantOutputs []string // JSON of Outputs.seal; nil means absent
		wantDropLog bool
	}{
		{"one output on 201", 201, 1, []string{`{"n":0}`}, false},
		{"array on several outputs", 200, 3, []string{`[{"n":0},{"n":1},{"n":2}]`}, false},
		{"no outputs on 200", 200, 0, nil, false},
		{"dropped on 400", 400, 2, nil, true},
		{"dropped on 409", 409, 1, nil, true},
		{"dropped on 500", 500, 1, nil, true},
		{"dropped on 302", 302, 1, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				for i := 0; i < tt.adds; i++ {
					if err := AddOutput(r.Context(), "seal", map[string]int{"n": i}); err != nil {
						t.Errorf("AddOutput: %v", err)
					}
				}
				w.WriteHeader(tt.status)
			})
			rec := invokeHTTP(t, HTTPInvocation(h), invocationFor("POST", "http://h/api/x", `{}`, `{}`, `"{}"`))
			if rec.Code != http.StatusOK {
				t.Fatalf("host reply status %d, want 200 always", rec.Code)
			}
			reply, res := decodeReply(t, rec)
			if res.StatusCode != tt.status {
				t.Fatalf("res status %d, want %d", res.StatusCode, tt.status)
			}
			seal, has := reply.Outputs["seal"]
			switch {
			case tt.wantOutputs == nil && has:
				t.Fatalf("seal output %s present, want none", seal)
			case tt.wantOutputs != nil && string(seal) != tt.wantOutputs[0]:
				t.Fatalf("seal output %s, want %s", seal, tt.wantOutputs[0])
			}
			if len(reply.Outputs) != 1+boolInt(tt.wantOutputs != nil) {
				t.Fatalf("outputs %v", reply.Outputs)
			}
			dropLogged := strings.Contains(strings.Join(reply.Logs, "\n"), "dropped")
			if dropLogged != tt.wantDropLog {
				t.Fatalf("logs %q, want drop logged %v", reply.Logs, tt.wantDropLog)
			}
		})
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestAddOutputErrors(t *testing.T) {
	t.Parallel()
	var errs []error
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		errs = []error{
			AddOutput(ctx, "seal", "a string"),
			AddOutput(ctx, "seal", []int{1}),
			AddOutput(ctx, "res", map[string]int{"a": 1}),
			AddOutput(ctx, "", map[string]int{"a": 1}),
			AddOutput(ctx, "seal", map[string]any{"f": func() {}}),
		}
	})
	invokeHTTP(t, HTTPInvocation(h), invocationFor("POST", "http://h/api/x", `{}`, `{}`, `null`))
	for i, err := range errs {
		if e, ok := asAppErr(err); !ok || e.Code != "invalid_output" {
			t.Errorf("call %d: error %v, want invalid_output", i, err)
		}
	}
	if e, ok := asAppErr(AddOutput(t.Context(), "seal", map[string]int{})); !ok || e.Code != "no_invocation" {
		t.Errorf("outside an invocation: %v, want no_invocation", e)
	}
	Logf(t.Context(), "outside an invocation: no effect, no panic")
}

func TestHTTPInvocationPanic(t *testing.T) {
	t.Parallel()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = AddOutput(r.Context(), "seal", map[string]int{"n": 1})
		w.Header().Set("X-Partial", "yes")
		_, _ = io.WriteString(w, "partial")
		var m map[string]int
		m["boom"] = 1 // nil map write
	})
	rec := invokeHTTP(t, HTTPInvocation(h), invocationFor("POST", "http://h/api/x", `{"X-Correlation-Id":"corr-9"}`, `{}`, `null`))
	if rec.Code != http.StatusOK {
		t.Fatalf("host reply %d", rec.Code)
	}
	reply, res := decodeReply(t, rec)
	if res.StatusCode != 500 || res.Headers["Content-Type"] != "application/problem+json" || res.Headers["X-Partial"] != "" {
		t.Fatalf("res = %+v", res)
	}
	var p struct {
		Code      string `json:"code"`
		RequestID string `json:"requestId"`
	}
	if err := json.Unmarshal([]byte(res.Body), &p); err != nil || p.Code != "internal_error" || p.RequestID != "corr-9" {
		t.Fatalf("problem %+v, %v from %q", p, err, res.Body)
	}
	if _, has := reply.Outputs["seal"]; has {
		t.Fatal("outputs kept after a panic")
	}
	logs := strings.Join(reply.Logs, "\n")
	if !strings.Contains(logs, "panicked") || !strings.Contains(logs, "nil map") {
		t.Fatalf("logs %q do not record the panic", reply.Logs)
	}
}

func TestHTTPInvocationBadInvocation(t *testing.T) {
	t.Parallel()
	called := false
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { called = true })
	tests := []struct{ name, payload string }{
		{"not JSON", `{{`},
		{"no Url", `{"Data":{"req":{"Method":"GET"}}}`},
		{"bad method", string(invocationFor("G ET", "http://h/x", `{}`, `{}`, `null`))},
		{"bad base64", string(invocationFor("POST", "http://h/x", `{"Content-Type":"image/png"}`, `{}`, `"!!"`))},
		{"bad url", string(invocationFor("POST", "http://h/%zz", `{}`, `{}`, `null`))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := invokeHTTP(t, HTTPInvocation(h), []byte(tt.payload))
			if rec.Code != http.StatusOK {
				t.Fatalf("host reply %d, want 200 with res 400", rec.Code)
			}
			reply, res := decodeReply(t, rec)
			if res.StatusCode != 400 || !strings.Contains(res.Body, `"code":"invalid_invocation"`) {
				t.Fatalf("res = %+v", res)
			}
			if len(reply.Logs) == 0 {
				t.Fatal("no log line")
			}
		})
	}
	if called {
		t.Fatal("handler called for an invocation that did not decode")
	}
}

func TestHTTPInvocationBinaryReply(t *testing.T) {
	t.Parallel()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = AddOutput(r.Context(), "seal", map[string]int{"n": 1})
		_, _ = w.Write([]byte{0xff, 0xfe, 0x00})
	})
	reply, res := decodeReply(t, invokeHTTP(t, HTTPInvocation(h), invocationFor("GET", "http://h/x", `{}`, `{}`, `null`)))
	if res.StatusCode != 500 || len(reply.Outputs) != 1 {
		t.Fatalf("res %+v outputs %v", res, reply.Outputs)
	}
}

func TestHTTPInvocationReplyDetails(t *testing.T) {
	t.Parallel()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Vary", "Origin")
		w.Header().Add("Vary", "Accept")
		w.Header().Add("Set-Cookie", "a=1")
		w.Header().Add("Set-Cookie", "b=2")
		_, _ = io.WriteString(w, "héllo <b>") // implicit 200
	})
	_, res := decodeReply(t, invokeHTTP(t, HTTPInvocation(h), invocationFor("GET", "http://h/x", `{}`, `{}`, `null`)))
	want := HTTPResponseData{StatusCode: 200, Headers: map[string]string{"Vary": "Origin, Accept", "Set-Cookie": "a=1"}, Body: "héllo <b>"}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Fatalf("res (-want +got):\n%s", diff)
	}
}

func TestHTTPInvocationMethodNotPost(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	HTTPInvocation(http.NotFoundHandler()).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/F", nil))
	if rec.Code != http.StatusMethodNotAllowed || !json.Valid(rec.Body.Bytes()) {
		t.Fatalf("status %d body %q", rec.Code, rec.Body.String())
	}
}
