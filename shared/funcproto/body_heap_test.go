package funcproto

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/esign-svc/esign/shared/apptest/heaptest"
	"github.com/esign-svc/esign/shared/web"
)

// largeInvocation is an invocation of POST /api/render carrying a JSON body of about 20 MiB
// (records with a 2,000-character notes field, as a batch render's), with the body it carries.
func largeInvocation(tb testing.TB) (payload, body []byte) {
	tb.Helper()
	recs := make([]map[string]any, 10000)
	for i := range recs {
		recs[i] = map[string]any{"n": i, "position": "Engineer", "notes": strings.Repeat("n", 2000)}
	}
	body, err := json.Marshal(map[string]any{"templatePath": "t.zip", "dataSource": recs})
	if err != nil {
		tb.Fatal(err)
	}
	text, _ := json.Marshal(string(body))
	payload = invocationFor("POST", "http://127.0.0.1:7071/api/render", `{"Content-Type":["application/json"]}`, `{}`, string(text))
	return payload, body
}

// TestInvocationBodyIsHeldOnce: an invoked route that decodes a large JSON body (the batch
// render) receives it as one copy of the payload's bytes (unquoted over them, handed to
// web.ReadBody whole, its raw member a slice of them), and the invocation keeps no other: all
// the invocation allocates, from reading the payload to the handler's decoded request, stays
// within 1.25 payloads (reading, splitting and unquoting it copy by copy allocated about eight),
// and the handler sees the body as sent. Invocation(ctx) keeps the trigger's members but its
// Body.
func TestInvocationBodyIsHeldOnce(t *testing.T) {
	payload, body := largeInvocation(t)
	var got struct {
		TemplatePath string          `json:"templatePath"`
		DataSource   json.RawMessage `json:"dataSource"`
	}
	var derr error
	var kept json.RawMessage
	h := HTTPInvocation(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		derr = web.DecodeJSON(r, 32<<20, &got)
		inv, _ := Invocation(r.Context())
		kept = inv.Data["req"]
		w.WriteHeader(http.StatusAccepted)
	}))
	var rec *httptest.ResponseRecorder
	alloc := heaptest.Allocated(func() {
		r := httptest.NewRequest("POST", "/render", bytes.NewReader(payload))
		rec = httptest.NewRecorder()
		h.ServeHTTP(rec, r)
	})
	runtime.KeepAlive(payload)
	t.Logf("payload %.1f MiB; the invocation allocated %.1f MiB (%.2f payloads)", heaptest.MiB(uint64(len(payload))),
		heaptest.MiB(alloc), float64(alloc)/float64(len(payload)))
	if derr != nil || rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"statusCode":202`) {
		t.Fatalf("decode %v, reply %d %.300s", derr, rec.Code, rec.Body)
	}
	var want map[string]json.RawMessage
	if err := json.Unmarshal(body, &want); err != nil || got.TemplatePath != "t.zip" || !bytes.Equal(got.DataSource, want["dataSource"]) {
		t.Fatalf("the handler decoded another body (%v)", err)
	}
	if bytes.Contains(kept, []byte(`"Body"`)) || !bytes.Contains(kept, []byte(`"Url"`)) {
		t.Fatalf("Invocation(ctx) keeps Data.req %.300s", kept)
	}
	if limit := uint64(len(payload)) * 5 / 4; alloc > limit {
		t.Errorf("allocated %.1f MiB, want at most %.1f MiB (1.25 payloads)", heaptest.MiB(alloc), heaptest.MiB(limit))
	}
}

// TestInvocationTextBodyUnquotedInPlace: a text body unquoted over the payload's bytes is the
// body encoding/json reads from the JSON string: escapes, surrogate pairs, a lone surrogate
// and bytes that are not UTF-8 (U+FFFD each, unquoted into a new buffer then).
func TestInvocationTextBodyUnquotedInPlace(t *testing.T) {
	t.Parallel()
	for _, text := range []string{`"plain"`, `"{\"a\":\"\\u00e9\\n\"}\r\n\t\/\ud83d\ude00"`, `"lone \ud83d end"`, "\"bad \xff byte \\\" \"", `""`} {
		var want string
		if err := json.Unmarshal([]byte(text), &want); err != nil {
			t.Fatal(err)
		}
		var got []byte
		h := HTTPInvocation(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, err := web.ReadBody(r, 1<<20)
			if err != nil {
				t.Error(err)
			}
			got = b
			w.WriteHeader(http.StatusNoContent)
		}))
		payload := invocationFor("POST", "http://127.0.0.1:7071/api/x", `{"Content-Type":["text/plain"]}`, `{}`, text)
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/x", bytes.NewReader(payload)))
		if string(got) != want {
			t.Errorf("%s: body %q, want %q", text, got, want)
		}
	}
}
