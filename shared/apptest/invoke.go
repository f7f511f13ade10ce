package apptest

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/esign-svc/esign/shared/funcproto"
)

// Reply is what the Functions host gets from one invocation: the status, the output bindings'
// messages and the log lines.
type Reply struct {
	Status  int
	Outputs map[string]json.RawMessage
	Logs    []string
}

// Messages is the output binding's messages: one object, or each of an array.
func (r Reply) Messages(binding string) []json.RawMessage {
	raw, ok := r.Outputs[binding]
	if !ok || len(raw) == 0 {
		return nil
	}
	if raw[0] == '[' {
		var list []json.RawMessage
		_ = json.Unmarshal(raw, &list)
		return list
	}
	return []json.RawMessage{raw}
}

// Count is the number of messages over all output bindings.
func (r Reply) Count() int {
	n := 0
	for b := range r.Outputs {
		n += len(r.Messages(b))
	}
	return n
}

// Invoke runs fn through funcproto.QueueHandler on the message text body, in the payload shape
// the host sends (the text JSON-encoded twice, metadata as quoted strings; dequeue count 1),
// and returns the reply. A 200 whose body is not a reply fails the test.
func Invoke(tb testing.TB, fn func(context.Context, funcproto.QueueMessage) error, body []byte) Reply {
	tb.Helper()
	once, _ := json.Marshal(string(body))
	twice, _ := json.Marshal(string(once))
	payload := `{"Data":{"msg":` + string(twice) + `},"Metadata":{"DequeueCount":"1","Id":"\"m1\""}}`
	rec := httptest.NewRecorder()
	funcproto.QueueHandler(fn).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/x", bytes.NewReader([]byte(payload))))
	r := Reply{Status: rec.Code}
	if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil && rec.Code == http.StatusOK {
		tb.Fatalf("reply %q: %v", rec.Body.String(), err)
	}
	r.Status = rec.Code
	return r
}

// InvokeJSON is Invoke on msg's JSON.
func InvokeJSON(tb testing.TB, fn func(context.Context, funcproto.QueueMessage) error, msg any) Reply {
	tb.Helper()
	b, err := json.Marshal(msg)
	if err != nil {
		tb.Fatal(err)
	}
	return Invoke(tb, fn, b)
}

// Serve posts one invocation with the given Data (binding name to value; a timer's or a queue
// message's) and dequeue count 1 to h, a funcproto handler, and returns the reply. A body that
// is not a reply fails the test, whatever the status.
func Serve(tb testing.TB, h http.Handler, data map[string]any) Reply {
	tb.Helper()
	body, err := json.Marshal(map[string]any{"Data": data, "Metadata": map[string]any{"DequeueCount": 1}})
	if err != nil {
		tb.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, "/x", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var r Reply
	if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
		tb.Fatalf("reply %d %q: %v", rec.Code, rec.Body.String(), err)
	}
	r.Status = rec.Code
	return r
}

// QueueData is the Data of a queue invocation on binding "msg" carrying v's JSON, for Serve.
func QueueData(tb testing.TB, v any) map[string]any {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return map[string]any{"msg": string(b)}
}
