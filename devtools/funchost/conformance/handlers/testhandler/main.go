// Command testhandler is the custom handler the conformance tests run under funchost. It speaks
// the handler's side of the protocol by hand (no shared/funcproto), so the host is tested on its
// own. Every invocation request is recorded, raw, in $TH_RECORD_DIR as <Function>-<n>.json:
// {"fn":..., "concurrent": <invocations running at its start>, "request": <raw body>}.
//
// Behaviour:
//   - GET / answers 200 (readiness), after $TH_START_DELAY if set; $TH_CRASH=1 exits 3 at once.
//   - /api/... (forwarded requests) echoes the body, with X-Seen-* headers describing the request;
//     with the request header X-Answer-Early it answers 413 at once, reading none of the body.
//   - POST /Http* (HTTP invocations) answers according to the request header X-Mode.
//   - POST /Fail* replies 500; POST /Slow* sleeps 300ms; others succeed.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

var (
	running atomic.Int64
	seq     atomic.Int64
)

func main() {
	if os.Getenv("TH_CRASH") == "1" {
		fmt.Fprintln(os.Stderr, "fatal: boom (TH_CRASH)")
		os.Exit(3)
	}
	if d, err := time.ParseDuration(os.Getenv("TH_START_DELAY")); err == nil {
		time.Sleep(d)
	}
	port := os.Getenv("FUNCTIONS_CUSTOMHANDLER_PORT")
	fmt.Println("testhandler listening on", port)
	mux := http.NewServeMux()
	mux.HandleFunc("/", route)
	if err := http.ListenAndServe("127.0.0.1:"+port, mux); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func route(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/" && r.Method == http.MethodGet:
		_, _ = io.WriteString(w, "ready")
	case strings.HasPrefix(strings.ToLower(r.URL.Path), "/api/"):
		echo(w, r)
	case r.Method == http.MethodPost:
		invocation(w, r, strings.TrimPrefix(r.URL.Path, "/"))
	default:
		http.NotFound(w, r)
	}
}

func echo(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("X-Answer-Early") != "" { // answers 413 without reading the body
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		_, _ = io.WriteString(w, "early")
		return
	}
	_ = http.NewResponseController(w).EnableFullDuplex()
	h := w.Header()
	h.Set("X-Seen-Method", r.Method)
	h.Set("X-Seen-Path", r.URL.Path)
	h.Set("X-Seen-Query", r.URL.RawQuery)
	h.Set("X-Seen-Content-Length", strconv.FormatInt(r.ContentLength, 10))
	h.Set("X-Seen-Transfer-Encoding", strings.Join(r.TransferEncoding, ","))
	h.Set("X-Seen-Forwarded-For", strings.Join(r.Header.Values("X-Forwarded-For"), " | "))
	if ct := r.Header.Get("Content-Type"); ct != "" {
		h.Set("Content-Type", ct)
	}
	w.WriteHeader(http.StatusOK)
	_, _ = io.Copy(w, r.Body)
}

func invocation(w http.ResponseWriter, r *http.Request, fn string) {
	n := running.Add(1)
	defer running.Add(-1)
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	record(fn, n, raw)
	var req struct {
		Data map[string]json.RawMessage
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		http.Error(w, "request is not JSON", http.StatusBadRequest)
		return
	}
	logs := []string{"hello from " + fn, "second line"}
	switch {
	case strings.HasPrefix(fn, "Http"):
		httpInvocation(w, fn, req.Data["req"], logs)
	case strings.HasPrefix(fn, "Fail"):
		w.WriteHeader(http.StatusInternalServerError)
		reply(w, map[string]any{"Outputs": map[string]any{"relay": map[string]any{"never": true}}, "Logs": logs})
	case strings.HasPrefix(fn, "Slow"):
		time.Sleep(300 * time.Millisecond)
		reply(w, map[string]any{"Outputs": map[string]any{}, "Logs": logs})
	default:
		// Queue and timer triggers: relay the trigger data to the "relay" output when the
		// function declares one (the host ignores undeclared outputs).
		var data any
		for _, v := range req.Data {
			_ = json.Unmarshal(v, &data)
		}
		reply(w, map[string]any{"Outputs": map[string]any{"relay": map[string]any{"got": data}}, "Logs": logs, "ReturnValue": nil})
	}
}

func httpInvocation(w http.ResponseWriter, fn string, rawReq json.RawMessage, logs []string) {
	var req struct {
		Headers map[string]any
		Body    any
	}
	_ = json.Unmarshal(rawReq, &req)
	mode := ""
	for k, v := range req.Headers {
		if strings.EqualFold(k, "X-Mode") {
			switch v := v.(type) {
			case string:
				mode = v
			case []any:
				if len(v) > 0 {
					mode, _ = v[0].(string)
				}
			}
		}
	}
	out := map[string]any{}
	switch mode {
	case "", "ok":
		out["res"] = map[string]any{"statusCode": 201, "headers": map[string]any{"Content-Type": "text/plain", "X-Custom": "yes"}, "body": "created"}
		out["out"] = map[string]any{"n": 1, "body": req.Body}
	case "statusstr":
		out["res"] = map[string]any{"statusCode": "202", "body": "accepted"}
	case "jsonbody":
		out["res"] = map[string]any{"statusCode": 200, "body": map[string]any{"a": 1, "b": []any{true}}}
	case "array":
		out["res"] = map[string]any{"statusCode": 200, "body": "three"}
		out["out"] = []any{map[string]any{"i": 1}, map[string]any{"i": 2}, map[string]any{"i": 3}}
	case "client":
		out["res"] = map[string]any{"statusCode": 400, "body": "bad"}
	case "client-with-output":
		out["res"] = map[string]any{"statusCode": 409, "body": "conflict"}
		out["out"] = map[string]any{"written": "anyway"}
	case "fail":
		w.WriteHeader(http.StatusInternalServerError)
		out["res"] = map[string]any{"statusCode": 200}
		out["out"] = map[string]any{"never": true}
	case "nonjson":
		_, _ = io.WriteString(w, "this is not JSON")
		return
	case "nores":
	}
	reply(w, map[string]any{"Outputs": out, "Logs": logs, "ReturnValue": nil})
}

func reply(w http.ResponseWriter, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

func record(fn string, concurrent int64, raw []byte) {
	dir := os.Getenv("TH_RECORD_DIR")
	if dir == "" {
		return
	}
	b, _ := json.Marshal(map[string]any{"fn": fn, "concurrent": concurrent, "request": json.RawMessage(raw)})
	name := fmt.Sprintf("%s-%06d.json", fn, seq.Add(1))
	tmp := filepath.Join(dir, "."+name)
	if err := os.WriteFile(tmp, b, 0o600); err == nil {
		_ = os.Rename(tmp, filepath.Join(dir, name))
	}
}
