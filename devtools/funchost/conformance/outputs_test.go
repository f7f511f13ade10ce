package conformance

import (
	"encoding/json"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/esign-svc/esign/devtools/funchost"
	"github.com/esign-svc/esign/shared/azure/queuestore"
	"github.com/google/go-cmp/cmp"
)

// TestResAndQueueOutputs checks the mapping of Outputs.res to the HTTP response and that queue
// outputs are written exactly when the handler's reply is 2xx JSON (whatever res says).
func TestResAndQueueOutputs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		mode     string
		status   int
		body     string
		headers  map[string]string
		messages []string // decoded JSON of the queue messages, in order
	}{
		{"ok", 201, "created", map[string]string{"Content-Type": "text/plain", "X-Custom": "yes"}, []string{`{"body":"{\"k\":\"v\"}","n":1}`}},
		{"statusstr", 202, "accepted", nil, nil},
		{"jsonbody", 200, `{"a":1,"b":[true]}`, map[string]string{"Content-Type": "application/json; charset=utf-8"}, nil},
		{"array", 200, "three", nil, []string{`{"i":1}`, `{"i":2}`, `{"i":3}`}},
		{"client", 400, "bad", nil, nil},
		// The real host writes outputs on every 2xx reply: handlers must drop them with a 4xx res.
		{"client-with-output", 409, "conflict", nil, []string{`{"written":"anyway"}`}},
		{"fail", 500, "", nil, nil},
		{"nonjson", 500, "", nil, nil},
		{"nores", 200, "", nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			q := queueName("out")
			e := startHost(t, funchost.ShapeObserved, map[string]string{"OUT_QUEUE": q}, httpApp(t))
			resp, body := do(t, "POST", e.h.URL()+"/api/out?code="+hostKey, strings.NewReader(`{"k":"v"}`),
				map[string]string{"Content-Type": "application/json", "X-Mode": tc.mode})
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
			}
			if string(body) != tc.body {
				t.Errorf("body %q, want %q", body, tc.body)
			}
			for k, v := range tc.headers {
				if got := resp.Header.Get(k); got != v {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
			// Outputs are written before the reply, so the queue is final now.
			var got []string
			for _, m := range peekAll(t, queueClient(t, q)) {
				b, err := queuestore.DecodeMessage(m)
				if err != nil {
					t.Fatalf("queue message %q is not base64: %v", m, err)
				}
				got = append(got, string(b))
			}
			if diff := cmp.Diff(tc.messages, got); diff != "" {
				t.Errorf("queue messages (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLogs checks that Logs lines are printed with the function name and invocation id, that
// each invocation logs its start and end, and that bodies are never logged.
func TestLogs(t *testing.T) {
	t.Parallel()
	e := startHost(t, funchost.ShapeObserved, map[string]string{"OUT_QUEUE": queueName("logs")}, httpApp(t))
	resp, _ := do(t, "POST", e.h.URL()+"/api/out?code="+hostKey, strings.NewReader(`{"secret":"s3cret-body-value"}`),
		map[string]string{"Content-Type": "application/json", "X-Mode": "ok"})
	if resp.StatusCode != 201 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	out := e.out.String()
	m := regexp.MustCompile(`\[fn=HttpOut id=([0-9a-f-]{36})\] hello from HttpOut\n`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no Logs line with function name and invocation id in:\n%s", out)
	}
	id := m[1]
	for _, want := range []string{
		"[fn=HttpOut id=" + id + "] second line\n",
		"[fn=HttpOut id=" + id + "] Executing (HTTP POST api/out/{kind?})",
		"[fn=HttpOut id=" + id + "] Executed (Succeeded, Duration=",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if strings.Contains(out, "s3cret-body-value") || strings.Contains(out, "created") {
		t.Errorf("a request or response body was logged:\n%s", out)
	}
	// The invocation's records are consistent with the logged id's function.
	if recs := e.records(t, "HttpOut"); len(recs) != 1 {
		t.Fatalf("%d HttpOut invocations, want 1", len(recs))
	} else {
		var req struct {
			Metadata struct {
				Sys struct{ MethodName string } `json:"sys"`
			}
		}
		_ = json.Unmarshal(recs[0].Request, &req)
		if req.Metadata.Sys.MethodName != "HttpOut" {
			t.Errorf("sys.MethodName %q", req.Metadata.Sys.MethodName)
		}
	}
}

// TestDropOutputHook: the test hook loses exactly the messages it picks (here the second of an
// array output) and the host writes the others; without the hook every message is written (the
// cases above).
func TestDropOutputHook(t *testing.T) {
	t.Parallel()
	q := queueName("drop")
	var seen []string
	var mu sync.Mutex
	h, err := funchost.Start(t.Context(), funchost.Options{Apps: []string{httpApp(t)}, Listen: "127.0.0.1:0",
		Settings: map[string]string{"AzureWebJobsStorage": connString(), "TH_RECORD_DIR": t.TempDir(), "OUT_QUEUE": q},
		HostKey:  hostKey, MasterKey: masterKey, Output: &funchost.Output{}, DisableSchedules: true,
		DropOutput: func(function, binding string, message []byte) bool {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, function+" "+binding+" "+string(message))
			return string(message) == `{"i":2}`
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	resp, _ := do(t, "POST", h.URL()+"/api/out?code="+hostKey, strings.NewReader(`{}`), map[string]string{"X-Mode": "array"})
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	var got []string
	for _, m := range peekAll(t, queueClient(t, q)) {
		b, err := queuestore.DecodeMessage(m)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(b))
	}
	if diff := cmp.Diff([]string{`{"i":1}`, `{"i":3}`}, got); diff != "" {
		t.Errorf("queue messages (-want +got):\n%s", diff)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 3 || !strings.HasPrefix(seen[0], "HttpOut out ") {
		t.Errorf("hook saw %q", seen)
	}
}
