package effects

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/licensing"
	"github.com/esign-svc/esign/shared/queues"
)

// invoke runs fn inside a real HTTP invocation and returns the queue outputs the host would
// write, by binding.
func invoke(t *testing.T, fn func(r *http.Request) error) map[string][]json.RawMessage {
	t.Helper()
	h := funcproto.HTTPInvocation(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := fn(r); err != nil {
			t.Error(err)
		}
		w.WriteHeader(http.StatusOK)
	}))
	inv := `{"Data":{"req":{"Url":"http://127.0.0.1/api/x","Method":"POST","Query":{},"Headers":{},"Params":{},"Body":""}},"Metadata":{}}`
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/X", strings.NewReader(inv)))
	var out struct{ Outputs map[string]json.RawMessage }
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("%s: %v", rec.Body, err)
	}
	res := map[string][]json.RawMessage{}
	for k, v := range out.Outputs {
		var list []json.RawMessage
		if json.Unmarshal(v, &list) != nil {
			list = []json.RawMessage{v}
		}
		res[k] = list
	}
	return res
}

// An on meter queues one Usage with the stable id on the "usage" binding; an off meter (no
// LICENSING_URL) queues nothing.
func TestMeter(t *testing.T) {
	t.Parallel()
	binding := queues.LicenceUsage.Binding()
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	on := licensing.Meter{On: true, Now: func() time.Time { return at }}
	outs := invoke(t, func(r *http.Request) error {
		return Meter(r.Context(), on, licensing.KindBatchRecord, "tid", "b1", "7")
	})
	if len(outs[binding]) != 1 {
		t.Fatalf("outputs %v", outs)
	}
	var u licensing.Usage
	if err := json.Unmarshal(outs[binding][0], &u); err != nil {
		t.Fatalf("%s: %v", outs[binding][0], err)
	}
	if u != (licensing.Usage{ID: "batch.record:b1:7", TenantID: "tid", Kind: licensing.KindBatchRecord, At: at}) {
		t.Fatalf("usage %+v", u)
	}
	outs = invoke(t, func(r *http.Request) error {
		return Meter(r.Context(), licensing.Meter{}, licensing.KindSessionSealed, "tid", "g")
	})
	if len(outs[binding]) != 0 {
		t.Fatalf("an off meter queued %v", outs)
	}
}
