package funcproto

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden response files under testdata/")

func parseGolden(t *testing.T, name string) *InvocationRequest {
	t.Helper()
	inv, err := ParseInvocation(readTestdata(t, name))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return inv
}

func TestGoldenHTTPRequests(t *testing.T) {
	t.Parallel()
	event := []byte(`{"kind":"viewed","slot":1}`)
	tests := []struct {
		file    string
		want    HTTPRequestData
		wantSys SysMetadata
	}{
		{"http_documented.json", HTTPRequestData{
			URL: "http://127.0.0.1:7071/api/esign/session/g-42/events?x=1", Method: "POST",
			Query:   url.Values{"x": {"1"}},
			Headers: http.Header{"Content-Type": {"application/json"}, "X-Correlation-Id": {"c-1"}},
			Params:  map[string]string{"groupId": "g-42"}, Body: event,
		}, SysMetadata{MethodName: "SessionEvent", UtcNow: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), RandGuid: "6f6a1d5e-0000-4000-8000-000000000001"}},
		{"http_observed_string_query.json", HTTPRequestData{
			URL: "http://127.0.0.1:7071/api/esign/session/g-42/events?x=1&x=2&code=redacted", Method: "POST",
			Query: url.Values{"x": {"1,2"}, "code": {"redacted"}},
			Headers: http.Header{"Content-Type": {"application/json; charset=utf-8"}, "Accept": {"application/json", "text/plain"},
				"X-Correlation-Id": {"c-2"}},
			Params: map[string]string{"groupId": "g-42"}, Body: event,
		}, SysMetadata{MethodName: "SessionEvent", UtcNow: time.Date(2026, 11, 22, 10, 0, 0, 123456700, time.UTC), RandGuid: "6f6a1d5e-0000-4000-8000-000000000002"}},
		{"http_observed_object_body.json", HTTPRequestData{
			URL: "http://127.0.0.1:7071/api/esign/session/g-42/events", Method: "POST",
			Query:   url.Values{"a": {"1"}, "b": {"2"}},
			Headers: http.Header{"Content-Type": {"application/json"}, "X-Correlation-Id": {"c-3"}, "X-Retry": {"2"}},
			Params:  map[string]string{"groupId": "g-42"},
			Body:    []byte(`{"kind":"viewed","slot":1,"meta":{"z":true,"a":[1,2.50]}}`),
		}, SysMetadata{MethodName: "SessionEvent", UtcNow: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), RandGuid: "6f6a1d5e-0000-4000-8000-000000000003"}},
		{"http_observed_base64_body.json", HTTPRequestData{
			URL: "http://127.0.0.1:7071/api/esign/documents/upload?name=contract.pdf", Method: "PUT",
			Query:   url.Values{"name": {"contract.pdf"}},
			Headers: http.Header{"Content-Type": {"application/octet-stream"}, "X-Correlation-Id": {"c-4"}},
			Params:  map[string]string{},
			Body:    []byte("%PDF-1.7\n%\xc4\xe5\xf2\xe5\xeb\xa7\xf3\xa0\xd0\xc4\xc6\n"),
		}, SysMetadata{MethodName: "UploadDocument", UtcNow: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), RandGuid: "6f6a1d5e-0000-4000-8000-000000000004"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			inv := parseGolden(t, tt.file)
			got, err := inv.HTTPRequest(HTTPBinding)
			if err != nil {
				t.Fatalf("HTTPRequest: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("HTTPRequestData (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantSys, inv.Metadata.Sys); diff != "" {
				t.Errorf("sys (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGoldenQueueMessages(t *testing.T) {
	t.Parallel()
	want := QueueMessage{
		ID:              "b6b2c1a0-7d4e-4f5a-9b1c-0d2e3f405162",
		PopReceipt:      "AgAAAAMAAAAAAAAAx5n2Xg==",
		DequeueCount:    1,
		InsertionTime:   time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC),
		ExpirationTime:  time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC),
		NextVisibleTime: time.Date(2026, 11, 22, 10, 10, 0, 0, time.UTC),
		Body:            []byte(`{"groupId":"g1","attempt":1}`),
	}
	for _, file := range []string{"queue_documented.json", "queue_observed.json"} {
		t.Run(file, func(t *testing.T) {
			t.Parallel()
			inv := parseGolden(t, file)
			got, err := inv.QueueMessage(QueueBinding)
			if err != nil {
				t.Fatalf("QueueMessage: %v", err)
			}
			if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); diff != "" {
				t.Errorf("QueueMessage (-want +got):\n%s", diff)
			}
			if inv.Metadata.Sys.MethodName != "Seal" {
				t.Errorf("MethodName = %q", inv.Metadata.Sys.MethodName)
			}
			var v struct {
				GroupID string `json:"groupId"`
				Attempt int    `json:"attempt"`
			}
			if err := got.Decode(&v); err != nil || v.GroupID != "g1" || v.Attempt != 1 {
				t.Errorf("Decode = %+v, %v", v, err)
			}
		})
	}
}

func TestGoldenTimer(t *testing.T) {
	t.Parallel()
	got, err := parseGolden(t, "timer.json").Timer(TimerBinding)
	if err != nil {
		t.Fatal(err)
	}
	want := TimerInfo{
		IsPastDue: false, AdjustForDST: true,
		Last:        time.Date(2026, 11, 22, 9, 55, 0, 0, time.UTC),
		Next:        time.Date(2026, 11, 22, 10, 5, 0, 0, time.UTC),
		LastUpdated: time.Date(2026, 11, 22, 9, 55, 0, 533100, time.UTC),
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); diff != "" {
		t.Errorf("TimerInfo (-want +got):\n%s", diff)
	}
}

// sealRequest is the queue message the golden app handler enqueues.
type sealRequest struct {
	GroupID string `json:"groupId"`
	Reason  string `json:"reason"`
}

// goldenApp is a small app: POST /api/esign/session/{groupId}/events enqueues a seal request
// and answers 202; a body without "kind" is a 400 problem (after trying to enqueue).
func goldenApp() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/esign/session/{groupId}/events", func(w http.ResponseWriter, r *http.Request) {
		var ev struct {
			Kind string `json:"kind"`
		}
		_ = json.NewDecoder(r.Body).Decode(&ev)
		if err := AddOutput(r.Context(), "seal", sealRequest{GroupID: r.PathValue("groupId"), Reason: ev.Kind}); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		if ev.Kind == "" {
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"type":"about:blank","title":"Bad Request","status":400,"code":"invalid_request"}`))
			return
		}
		Logf(r.Context(), "event %s accepted", ev.Kind)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte(`{"groupId":"` + r.PathValue("groupId") + `","accepted":true}`))
	})
	return mux
}

func invokeHTTP(t testing.TB, h http.Handler, payload []byte) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequestWithContext(context.Background(), http.MethodPost, "/SessionEvent", bytes.NewReader(payload))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(InvocationIDHeader, "inv-1")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func compareGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, got, "", "  "); err != nil {
		t.Fatalf("reply is not JSON: %v\n%s", err, got)
	}
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, pretty.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), pretty.String()); diff != "" {
		t.Errorf("%s (-want +got):\n%s", name, diff)
	}
}

func TestGoldenResponses(t *testing.T) {
	t.Parallel()
	noKind := bytes.Replace(readTestdata(t, "http_documented.json"),
		[]byte(`"Body": "{\"kind\":\"viewed\",\"slot\":1}"`), []byte(`"Body": "{\"slot\":1}"`), 1)
	if bytes.Equal(noKind, readTestdata(t, "http_documented.json")) {
		t.Fatal("test payload was not modified")
	}
	tests := []struct {
		name    string
		payload []byte
		golden  string
	}{
		{"2xx with queue output", readTestdata(t, "http_documented.json"), "response_2xx_queue_output.json"},
		{"4xx without outputs", noKind, "response_4xx_no_outputs.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := invokeHTTP(t, HTTPInvocation(goldenApp()), tt.payload)
			if rec.Code != http.StatusOK {
				t.Fatalf("host reply status %d, want 200", rec.Code)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json; charset=utf-8" {
				t.Fatalf("Content-Type %q", ct)
			}
			compareGolden(t, tt.golden, rec.Body.Bytes())
		})
	}
}
