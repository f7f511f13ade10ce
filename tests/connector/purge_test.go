package connector

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/connector/jobs"
	"github.com/esign-svc/esign/connector/settings"
)

// finishedJob adds a one-row job to st and finishes it done at st's clock.
func finishedJob(t *testing.T, st *jobs.Store) string {
	t.Helper()
	ctx := context.Background()
	id, err := st.Add(ctx, jobs.NewJob{Profile: "erp", TemplatePath: offerPath, Request: json.RawMessage(`{}`),
		Records: []json.RawMessage{json.RawMessage(`{}`)}, MaxRetries: 1})
	if err != nil {
		t.Fatal(err)
	}
	row, ok, err := st.Claim(ctx, id, time.Minute)
	if err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	if state, err := st.Succeed(ctx, row, json.RawMessage(`{}`)); err != nil || state != jobs.JobCompleted {
		t.Fatalf("succeed: %q %v", state, err)
	}
	return id
}

// TestRetentionPurge: `jobs purge` removes finished jobs and upload-log rows older than
// SERVICE_LOG_RETENTION_DAYS (default 90) and keeps newer ones and unfinished jobs; 0 disables
// it. The old rows are made by the store with its clock set back, then an upload through the
// service adds a fresh log row.
func TestRetentionPurge(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	set := connSettings(t, nil)
	st, err := jobs.Open(ctx, set[settings.KeyStorePath])
	if err != nil {
		t.Fatal(err)
	}
	st.Now = func() time.Time { return time.Now().AddDate(0, 0, -91) }
	old := finishedJob(t, st)
	if err := st.LogUpload(ctx, jobs.Upload{File: "old.pdf", PDFBlobPath: "documents/uploads/old.pdf", PDFHash: "sha256:0", Size: 1, Pages: 1}); err != nil {
		t.Fatal(err)
	}
	// Queued long ago but never finished: kept whatever its age.
	pending, err := st.Add(ctx, jobs.NewJob{Profile: "erp", TemplatePath: offerPath, Request: json.RawMessage(`{}`),
		Records: []json.RawMessage{json.RawMessage(`{}`)}, MaxRetries: 1})
	if err != nil {
		t.Fatal(err)
	}
	st.Now = func() time.Time { return time.Now().AddDate(0, 0, -89) }
	recent := finishedJob(t, st)
	st.Close()
	ok(t, set, "upload", "../e2e/testdata/plain-1p.pdf")

	disabled := connSettings(t, map[string]string{settings.KeyStorePath: set[settings.KeyStorePath], settings.KeyRetentionDays: "0"})
	if out := ok(t, disabled, "jobs", "purge"); !strings.Contains(out, "purge disabled, nothing removed") {
		t.Fatalf("purge with 0 days: %s", out)
	}
	if n := len(listJobs(t, set)); n != 3 {
		t.Fatalf("%d jobs after a disabled purge, want 3", n)
	}
	var p jobs.Purged
	if err := json.Unmarshal([]byte(ok(t, set, "jobs", "purge", "--output", "json")), &p); err != nil {
		t.Fatal(err)
	}
	if p != (jobs.Purged{Jobs: 1, Rows: 1, Uploads: 1}) {
		t.Fatalf("purged %+v", p)
	}
	left := map[string]bool{}
	for _, j := range listJobs(t, set) {
		left[j.ID] = true
	}
	if left[old] || !left[recent] || !left[pending] {
		t.Fatalf("left %v (old %s, recent %s, pending %s)", left, old, recent, pending)
	}
	var ups []jobs.Upload
	if err := json.Unmarshal([]byte(ok(t, set, "jobs", "uploads", "--output", "json")), &ups); err != nil {
		t.Fatal(err)
	}
	if len(ups) != 1 || ups[0].File != "plain-1p.pdf" {
		t.Fatalf("upload log after the purge: %+v", ups)
	}
}

func listJobs(t *testing.T, set map[string]string) []jobs.Job {
	t.Helper()
	var l []jobs.Job
	if err := json.Unmarshal([]byte(ok(t, set, "jobs", "list", "--output", "json")), &l); err != nil {
		t.Fatal(err)
	}
	return l
}
