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

// MeterGroup queues a group's records in one message (one id per name), one record in the
// single-record shape, nothing for no names or an off meter.
func TestMeterGroup(t *testing.T) {
	t.Parallel()
	binding := queues.LicenceUsage.Binding()
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	on := licensing.Meter{On: true, Now: func() time.Time { return at }}
	outs := invoke(t, func(r *http.Request) error {
		return MeterGroup(r.Context(), on, licensing.KindBatchRecord, "tid", [][]string{{"b1", "0"}, {"b1", "3"}, {"b1", "9"}})
	})
	if len(outs[binding]) != 1 {
		t.Fatalf("outputs %v", outs)
	}
	var m licensing.UsageMessage
	if err := json.Unmarshal(outs[binding][0], &m); err != nil || m.Validate() != nil {
		t.Fatalf("%s: %v %v", outs[binding][0], err, m.Validate())
	}
	if len(m.Records) != 3 || m.Records[1] != (licensing.Usage{ID: "batch.record:b1:3", TenantID: "tid", Kind: licensing.KindBatchRecord, At: at}) {
		t.Fatalf("message %s", outs[binding][0])
	}
	outs = invoke(t, func(r *http.Request) error {
		return MeterGroup(r.Context(), on, licensing.KindBatchRecord, "tid", [][]string{{"b1", "4"}})
	})
	if len(outs[binding]) != 1 || string(outs[binding][0]) != `{"id":"batch.record:b1:4","tenantId":"tid","kind":"batch.record","at":"2026-03-04T05:06:07Z"}` {
		t.Fatalf("one record: %s", outs[binding])
	}
	for _, m := range []licensing.Meter{on, {}} {
		outs = invoke(t, func(r *http.Request) error {
			names := [][]string{{"b1", "5"}}
			if m.On {
				names = nil
			}
			return MeterGroup(r.Context(), m, licensing.KindBatchRecord, "tid", names)
		})
		if len(outs[binding]) != 0 {
			t.Fatalf("queued %v", outs)
		}
	}
}
