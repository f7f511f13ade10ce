package seal

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/esign-svc/esign/shared/apptest"
	"github.com/esign-svc/esign/shared/audit"
	"github.com/esign-svc/esign/shared/azure/tablestore"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/esign/sessionstore"
	"github.com/esign-svc/esign/shared/funcproto"
)

// Evidence that does not read back fails the seal for good: seal.failed, the seal-failure
// notice, no signed PDF, certificate or bundle (never a certificate with a gap).
func TestCorruptEvidenceFailsTheSeal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		corrupt func(t *testing.T, e *env, f fixture)
		reason  string // in the recorded sealError
	}{
		{"an audit row's data", func(t *testing.T, e *env, f fixture) {
			rows, err := e.rows.Query(context.Background(), f.sess.GroupID, &tablestore.QueryOptions{RowKeyPrefix: audit.RowPrefix,
				Filter: "kind eq " + tablestore.Quote(esign.EvSlotConsented)})
			if err != nil || len(rows) == 0 {
				t.Fatalf("consent events: %d, %v", len(rows), err)
			}
			e.merge(t, rows[0].PartitionKey, rows[0].RowKey, map[string]any{"data": `{"statement":"document_rev`})
		}, "audit trail is unreadable"},
		{"the session's manifest", func(t *testing.T, e *env, f fixture) {
			e.merge(t, f.sess.GroupID, "session", map[string]any{"manifest": `[{"name":"esign.buyer.signature","page":`})
		}, "stored session is unreadable (manifest)"},
		{"a slot of the session", func(t *testing.T, e *env, f fixture) {
			e.merge(t, f.sess.GroupID, "session", map[string]any{"slot00": `{"slotIndex":0,"state":`})
		}, "stored session is unreadable (slot00)"},
		{"a signature row's consents", func(t *testing.T, e *env, f fixture) {
			e.merge(t, f.sess.GroupID, "sig-00", map[string]any{"consents": `[{"id":"document_reviewed"`})
		}, "consents of slot 0 are unreadable"},
		{"a signature row's image", func(t *testing.T, e *env, f fixture) {
			e.merge(t, f.sess.GroupID, "sig-00", map[string]any{"pngSize": int64(12)})
		}, "signature of slot 0 is unreadable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			e := newEnv(t)
			f := e.sealingSession(t, twoSigners()[:1], "")
			tt.corrupt(t, e, f)
			msg := apptest.QueueData(t, esign.SealMessage{GroupID: f.sess.GroupID, TenantID: f.sess.TenantID})

			r := apptest.Serve(t, funcproto.QueueHandler(e.job.Handle), msg)
			n := notices(t, r)
			if r.Status != 200 || len(n) != 1 || n[0].Kind != "requester_seal_failure" || n[0].Slot != -1 {
				t.Fatalf("status %d notices %+v logs %v", r.Status, n, r.Logs)
			}
			e.assertNoOutputs(t, f)
			row, err := e.rows.Get(ctx, f.sess.GroupID, "session")
			if err != nil {
				t.Fatal(err)
			}
			if row.String("state") != string(esign.SessionSealing) || !strings.Contains(row.String("sealError"), tt.reason) {
				t.Fatalf("session row: state %q sealError %q, want sealing and %q", row.String("state"), row.String("sealError"), tt.reason)
			}
			if got := e.count(t, f.sess.GroupID, esign.EvSealFailed); got != 1 {
				t.Fatalf("%d seal.failed events, want 1", got)
			}

			// The poison handler records the same failure for such a session (never loops on it).
			r = apptest.Serve(t, funcproto.QueueHandler(e.job.HandlePoison), msg)
			if n := notices(t, r); r.Status != 200 || len(n) != 1 || n[0].Kind != "requester_seal_failure" {
				t.Fatalf("poison: status %d notices %+v logs %v", r.Status, n, r.Logs)
			}
			if got := e.count(t, f.sess.GroupID, esign.EvSealFailed); got != 2 {
				t.Fatalf("%d seal.failed events after the poison message, want 2", got)
			}
			e.assertNoOutputs(t, f)
		})
	}
}

// The recorded failure leaves an unreadable session row as it was found.
func TestCorruptSessionRowIsKept(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	f := e.sealingSession(t, twoSigners()[:1], "")
	const bad = `[{"name":"esign.buyer.signature",`
	e.merge(t, f.sess.GroupID, "session", map[string]any{"manifest": bad})
	_, _, err := e.store.Load(ctx, f.sess.GroupID)
	var c *sessionstore.CorruptError
	if !errors.As(err, &c) || !errors.Is(err, sessionstore.ErrCorrupt) || c.Prop != "manifest" || c.Session.State != esign.SessionSealing {
		t.Fatalf("load: %v", err)
	}
	if r := apptest.Serve(t, funcproto.QueueHandler(e.job.Handle), apptest.QueueData(t, esign.SealMessage{GroupID: f.sess.GroupID, TenantID: f.sess.TenantID})); r.Status != 200 {
		t.Fatalf("status %d logs %v", r.Status, r.Logs)
	}
	row, err := e.rows.Get(ctx, f.sess.GroupID, "session")
	if err != nil {
		t.Fatal(err)
	}
	if row.String("manifest") != bad || row.String("slot00") == "" {
		t.Fatalf("the failure rewrote the row: manifest %q", row.String("manifest"))
	}
	// A corrupt session of another tenant is refused like any other.
	r := apptest.Serve(t, funcproto.QueueHandler(e.job.Handle), apptest.QueueData(t, esign.SealMessage{GroupID: f.sess.GroupID, TenantID: "someone-else"}))
	if r.Status != 200 || len(r.Outputs) != 0 || !strings.Contains(strings.Join(r.Logs, "\n"), "permanent failure") {
		t.Fatalf("wrong tenant: status %d outputs %v logs %v", r.Status, r.Outputs, r.Logs)
	}
}

func (e *env) merge(t *testing.T, pk, rk string, props map[string]any) {
	t.Helper()
	if _, err := e.rows.Merge(context.Background(), tablestore.Entity{PartitionKey: pk, RowKey: rk, ETag: "*", Props: props}); err != nil {
		t.Fatal(err)
	}
}

// count is the number of the session's audit events of kind, read from the kind column alone.
func (e *env) count(t *testing.T, groupID, kind string) int {
	t.Helper()
	rows, err := e.rows.Query(context.Background(), groupID, &tablestore.QueryOptions{RowKeyPrefix: audit.RowPrefix,
		Filter: "kind eq " + tablestore.Quote(kind)})
	if err != nil {
		t.Fatal(err)
	}
	return len(rows)
}

func (e *env) assertNoOutputs(t *testing.T, f fixture) {
	t.Helper()
	base := f.sess.TenantID + "/" + f.sess.GroupID + "/"
	for _, p := range [][2]string{{"signed", base + "signed.pdf"}, {"signed", base + "certificate.pdf"}, {"evidence", base + "evidence.jsonl"}} {
		if _, ok := e.readBlob(t, p[0], p[1]); ok {
			t.Fatalf("%s/%s written from corrupt evidence", p[0], p[1])
		}
	}
}
