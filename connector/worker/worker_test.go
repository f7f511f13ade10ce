package worker

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/esign-svc/esign/connector/client"
	"github.com/esign-svc/esign/connector/jobs"
	"github.com/esign-svc/esign/connector/settings"
	"github.com/esign-svc/esign/shared/callbacksig"
)

// renderer answers every row with a document (the dispatcher's part is tested in tests/connector).
type renderer struct{}

func (renderer) Render(_ context.Context, req client.RenderRequest, _ client.Record) (*client.Rendered, error) {
	return &client.Rendered{CorrelationID: req.Options.CorrelationID, PDFBlobPath: "documents/t/rendered/x.pdf", PDFHash: "sha256:00"}, nil
}

func openStore(t *testing.T) (*jobs.Store, *time.Time) {
	t.Helper()
	st, err := jobs.Open(context.Background(), filepath.Join(t.TempDir(), "s", "jobs.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	now := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	st.Now = func() time.Time { return now }
	return st, &now
}

func addJob(t *testing.T, st *jobs.Store) string {
	t.Helper()
	req, _ := json.Marshal(Request{CorrelationPrefix: "job"})
	id, err := st.Add(context.Background(), jobs.NewJob{Profile: "erp", TemplatePath: "templates/x.zip", Request: req,
		Records: []json.RawMessage{json.RawMessage(`{"a":1}`)}, MaxRetries: 1})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

type posted struct {
	sig  string
	body []byte
}

func receiver(t *testing.T) (string, func() []posted) {
	t.Helper()
	var mu sync.Mutex
	var got []posted
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, posted{r.Header.Get(callbacksig.Header), b})
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(ts.Close)
	return ts.URL, func() []posted { mu.Lock(); defer mu.Unlock(); return append([]posted(nil), got...) }
}

// TestNoticeSignedOrNot: with SERVICE_BATCH_NOTIFY_SECRET the notice carries X-Esign-Signature
// that verifies with it; with the webhook URL alone it is posted unsigned, the same body.
func TestNoticeSignedOrNot(t *testing.T) {
	t.Parallel()
	secret := strings.Repeat("k", settings.MinNotifySecretLen)
	for _, tc := range []struct {
		name, secret string
	}{{"signed", secret}, {"unsigned", ""}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st, _ := openStore(t)
			st.Notify = Wants(settings.NotifyAlways)
			url, got := receiver(t)
			n, err := NewNotifier(url, tc.secret)
			if err != nil {
				t.Fatal(err)
			}
			id := addJob(t, st)
			w := &Worker{Store: st, Renderer: renderer{}, Notifier: n}
			if err := w.Drain(context.Background(), ""); err != nil {
				t.Fatal(err)
			}
			p := got()
			if len(p) != 1 {
				t.Fatalf("%d notices, want 1", len(p))
			}
			var body Notice
			if err := json.Unmarshal(p[0].body, &body); err != nil || body.JobID != id || body.Outcome != "Completed" || body.Succeeded != 1 {
				t.Fatalf("notice %s: %v", p[0].body, err)
			}
			if tc.secret == "" && p[0].sig != "" {
				t.Fatalf("an unsigned notice carries %s: %q", callbacksig.Header, p[0].sig)
			}
			if tc.secret != "" {
				if err := callbacksig.Verify(p[0].sig, p[0].body, time.Now(), []string{tc.secret}); err != nil {
					t.Fatalf("signature: %v", err)
				}
			}
			if j, err := st.Get(context.Background(), id); err != nil || j.NotifyState != jobs.NoticeSent {
				t.Fatalf("job %+v %v", j, err)
			}
		})
	}
	if _, err := NewNotifier("https://hooks.example.test/x", "short"); err == nil {
		t.Fatal("a short secret was accepted")
	}
}

// TestRetentionDaily: a worker with SERVICE_LOG_RETENTION_DAYS purges finished jobs and
// upload-log rows older than that by itself, once a day of the store's clock: the second Drain of
// the day leaves an old job alone, the next day's removes it; unfinished jobs and newer ones stay;
// 0 never purges.
func TestRetentionDaily(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, now := openStore(t)
	start := *now
	finishAt := func(at time.Time) string {
		*now = at
		id := addJob(t, st)
		if err := (&Worker{Store: st, Renderer: renderer{}}).Drain(ctx, id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	old := finishAt(start.AddDate(0, 0, -91))
	if err := st.LogUpload(ctx, jobs.Upload{File: "old.pdf", PDFBlobPath: "documents/uploads/old.pdf"}); err != nil {
		t.Fatal(err)
	}
	recent := finishAt(start.AddDate(0, 0, -89))
	*now = start.AddDate(0, 0, -200)
	pending := addJob(t, st) // queued long ago, never done (each Drain below is of another job)
	var purged []jobs.Purged
	w := &Worker{Store: st, Renderer: renderer{}, RetentionDays: 90, OnPurge: func(p jobs.Purged) { purged = append(purged, p) }}
	has := func(id string) bool {
		_, err := st.Get(ctx, id)
		return err == nil
	}
	*now = start
	if err := w.Drain(ctx, "none"); err != nil {
		t.Fatal(err)
	}
	if has(old) || !has(recent) || !has(pending) || len(purged) != 1 || purged[0].Jobs != 1 || purged[0].Uploads != 1 {
		t.Fatalf("first purge: old kept %v, recent kept %v, pending kept %v, purges %+v", has(old), has(recent), has(pending), purged)
	}
	// Later the same day (another worker, so no in-memory memory): not due.
	old2 := finishAt(start.AddDate(0, 0, -95))
	*now = start.Add(23 * time.Hour)
	w2 := &Worker{Store: st, Renderer: renderer{}, RetentionDays: 90}
	if err := w2.Drain(ctx, "none"); err != nil || !has(old2) {
		t.Fatalf("a second purge within the day: %v, old job kept %v", err, has(old2))
	}
	*now = start.Add(24 * time.Hour)
	if err := w.Drain(ctx, "none"); err != nil || has(old2) || !has(recent) || len(purged) != 2 {
		t.Fatalf("next day: %v, old job kept %v, recent %v, purges %+v", err, has(old2), has(recent), purged)
	}
	old3 := finishAt(start.AddDate(0, 0, -300))
	*now = start.AddDate(0, 0, 5)
	if err := (&Worker{Store: st, Renderer: renderer{}, RetentionDays: 0}).Drain(ctx, "none"); err != nil || !has(old3) {
		t.Fatalf("0 days purged: %v %v", err, has(old3))
	}
}
