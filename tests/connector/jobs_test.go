package connector

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/esign-svc/esign/devtools/devkeys"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/connector/jobs"
	"github.com/esign-svc/esign/connector/settings"
	"github.com/esign-svc/esign/connector/worker"
	"github.com/esign-svc/esign/shared/callbacksig"
)

// receiver is a local webhook receiver that checks each notice's signature (with no secret:
// that the notice carries none).
type receiver struct {
	secret string
	mu     sync.Mutex
	got    map[string][]worker.Notice // by job id
	bad    []string
}

func newReceiver(t *testing.T) (*receiver, string) {
	t.Helper()
	return startReceiver(t, "notify-"+strings.Repeat(uuid.NewString()[:8], 4))
}

func startReceiver(t *testing.T, secret string) (*receiver, string) {
	t.Helper()
	r := &receiver{secret: secret, got: map[string][]worker.Notice{}}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		defer r.mu.Unlock()
		if sig := req.Header.Get(callbacksig.Header); r.secret == "" && sig != "" {
			r.bad = append(r.bad, "a signature without a secret: "+sig)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if err := callbacksig.Verify(req.Header.Get(callbacksig.Header), body, time.Now(), []string{r.secret}); r.secret != "" && err != nil {
			r.bad = append(r.bad, err.Error())
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		var n worker.Notice
		if err := json.Unmarshal(body, &n); err != nil || req.Header.Get("Idempotency-Key") == "" {
			r.bad = append(r.bad, fmt.Sprintf("body %s: %v", body, err))
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		r.got[n.JobID] = append(r.got[n.JobID], n)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(ts.Close)
	return r, ts.URL
}

func (r *receiver) notices(t *testing.T, job string) []worker.Notice {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.bad) > 0 {
		t.Fatalf("the receiver refused notices: %v", r.bad)
	}
	return r.got[job]
}

func erpSettings(t *testing.T, rc *receiver, url, on string, over map[string]string) map[string]string {
	m := map[string]string{settings.KeyNotifyWebhookURL: url, settings.KeyNotifySecret: rc.secret, settings.KeyNotifyOn: on}
	for k, v := range over {
		m[k] = v
	}
	return connSettings(t, m)
}

// offersJSON writes records of the sample package as a JSON array; invalid ones have a
// negative salary (the template's min is 0).
func offersJSON(t *testing.T, n int, invalid ...int) string {
	t.Helper()
	start := time.Now().AddDate(0, 1, 0).Format("2006-01-02")
	var recs []map[string]any
	for i := range n {
		recs = append(recs, map[string]any{"employeeName": fmt.Sprintf("Employee %d", i), "employeeEmail": fmt.Sprintf("e%d@example.test", i),
			"position": "Engineer", "salary": 50000 + i, "currency": "EUR", "startDate": start})
	}
	for _, i := range invalid {
		recs[i]["salary"] = -5
	}
	b, _ := json.Marshal(recs)
	return writeFile(t, fmt.Sprintf("records-%d.json", n), b)
}

type jobView struct {
	jobs.Job
	Rows []jobs.RowState `json:"rows"`
}

func showJob(t *testing.T, set map[string]string, id string) jobView {
	t.Helper()
	var j jobView
	if err := json.Unmarshal([]byte(ok(t, set, "jobs", "show", id, "--output", "json")), &j); err != nil {
		t.Fatal(err)
	}
	return j
}

func queueJob(t *testing.T, set map[string]string, args ...string) string {
	t.Helper()
	var j jobs.Job
	out := ok(t, set, append([]string{"render", "--profile", "erp", "--output", "json"}, args...)...)
	if err := json.Unmarshal([]byte(out), &j); err != nil || j.ID == "" {
		t.Fatalf("%v: %s", err, out)
	}
	return j.ID
}

// TestERPRetriesThenSucceeds: a background job whose template is not there yet fails its first
// two attempts (400 template_not_found, kept on the row), then succeeds once it is; the job is
// completed and, with SERVICE_BATCH_NOTIFY_ON Always, its signed notice reaches the receiver.
func TestERPRetriesThenSucceeds(t *testing.T) {
	t.Parallel()
	rc, url := newReceiver(t)
	set := erpSettings(t, rc, url, settings.NotifyAlways, nil)
	name := "connector/late-" + uuid.NewString() + ".zip"
	id := queueJob(t, set, "--template", "templates/shared/"+name, "--data", offersJSON(t, 1), "--mode", "background")
	for attempt := 1; attempt <= 2; attempt++ {
		ok(t, set, "jobs", "work", "--once", "--retry-delay", "0", "--job", id)
		j := showJob(t, set, id)
		if j.State != jobs.JobQueued || j.Rows[0].State != jobs.RowPending || j.Rows[0].Attempts != attempt ||
			!strings.Contains(j.Rows[0].LastError, "400 template_not_found") {
			t.Fatalf("after attempt %d: %+v", attempt, j)
		}
	}
	if _, err := putPackage(context.Background(), name, offerFiles(nil)); err != nil {
		t.Fatal(err)
	}
	ok(t, set, "jobs", "work", "--once", "--retry-delay", "0", "--job", id)
	j := showJob(t, set, id)
	if j.State != jobs.JobCompleted || j.Done != 1 || j.Rows[0].Attempts != 3 || j.NotifyState != jobs.NoticeSent {
		t.Fatalf("after the third attempt: %+v", j)
	}
	var res worker.Result
	if err := json.Unmarshal(j.Rows[0].Result, &res); err != nil || !strings.HasPrefix(res.PDFBlobPath, "documents/"+devkeys.DevTenantID+"/rendered/") {
		t.Fatalf("result %s: %v", j.Rows[0].Result, err)
	}
	n := rc.notices(t, id)
	if len(n) != 1 || n[0].Outcome != "Completed" || n[0].Succeeded != 1 || n[0].Dead != 0 || n[0].Total != 1 || n[0].Event != "svcconnect.job.finished" {
		t.Fatalf("notices %+v", n)
	}
}

// TestERPUnsignedNotice: with SERVICE_BATCH_NOTIFY_WEBHOOK_URL alone (spec 001: no other key)
// a failed job's notice reaches the receiver without X-Esign-Signature, and the worker warns
// once that notices go unsigned.
func TestERPUnsignedNotice(t *testing.T) {
	t.Parallel()
	rc, url := startReceiver(t, "")
	set := connSettings(t, map[string]string{settings.KeyNotifyWebhookURL: url})
	id := queueJob(t, set, "--template", offerPath, "--data", offersJSON(t, 1, 0), "--mode", "background", "--max-retries", "1")
	r := svcconnect(t, set, "", false, "jobs", "work", "--drain", "--job", id)
	if r.code != 0 || strings.Count(r.stderr, "warning:") != 1 || !strings.Contains(r.stderr, "completion notices are posted unsigned") {
		t.Fatalf("jobs work: exit %d %q", r.code, r.stderr)
	}
	if j := showJob(t, set, id); j.State != jobs.JobFailed || j.NotifyState != jobs.NoticeSent {
		t.Fatalf("job %+v", j.Job)
	}
	n := rc.notices(t, id)
	if len(n) != 1 || n[0].Outcome != "Failed" || n[0].Dead != 1 || n[0].Failures[0].Error != "400 record_invalid: dataSource.salary" {
		t.Fatalf("notices %+v", n)
	}
}

// TestERPDeadAfterRetries: a row the service refuses every time is dead after its own max
// retries while the other row is done: the job is partial and, with FailureOnly, notified with
// the dead row (its error names the code and field, not the value). Generating now exits 1 on a
// dead row; a scheduled job waits for its time; jobs retry revives dead rows.
func TestERPDeadAfterRetries(t *testing.T) {
	t.Parallel()
	rc, url := newReceiver(t)
	set := erpSettings(t, rc, url, settings.NotifyFailureOnly, nil)
	id := queueJob(t, set, "--template", offerPath, "--data", offersJSON(t, 2, 0), "--mode", "background", "--max-retries", "2")
	ok(t, set, "jobs", "work", "--drain", "--retry-delay", "0", "--job", id)
	j := showJob(t, set, id)
	if j.State != jobs.JobPartial || j.Done != 1 || j.Dead != 1 || j.Rows[0].State != jobs.RowDead || j.Rows[0].Attempts != 2 ||
		j.Rows[0].LastError != "400 record_invalid: dataSource.salary" {
		t.Fatalf("job %+v", j)
	}
	n := rc.notices(t, id)
	if len(n) != 1 || n[0].Outcome != "Partial" || n[0].Dead != 1 || len(n[0].Failures) != 1 || n[0].Failures[0].Index != 0 || n[0].Failures[0].Attempts != 2 {
		t.Fatalf("notices %+v", n)
	}
	out := ok(t, set, "jobs", "retry", id)
	if !strings.Contains(out, "1 dead rows queued again") || showJob(t, set, id).State != jobs.JobQueued {
		t.Fatalf("retry: %s", out)
	}

	// Generate now: the rows run here with a progress bar; a dead row is exit status 1 naming
	// the job.
	r := onTerminal(set, "render", "--profile", "erp", "--template", offerPath, "--data", offersJSON(t, 2, 1), "--max-retries", "1")
	if r.code != 1 || !strings.Contains(r.stderr, "1 of 2 rows dead") || !strings.Contains(r.stderr, "generate [##############################] 2/2") {
		t.Fatalf("generate now: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	// Scheduled in an hour: a worker leaves it alone.
	sid := queueJob(t, set, "--template", offerPath, "--data", offersJSON(t, 1), "--mode", "schedule", "--at", time.Now().Add(time.Hour).UTC().Format(time.RFC3339))
	ok(t, set, "jobs", "work", "--drain", "--job", sid)
	if j := showJob(t, set, sid); j.State != jobs.JobScheduled || j.Rows[0].Attempts != 0 {
		t.Fatalf("scheduled job %+v", j)
	}
	if r := svcconnect(t, set, "", false, "render", "--profile", "erp", "--template", offerPath, "--data", offersJSON(t, 1), "--mode", "schedule", "--at", "tomorrow"); r.code != 2 || !strings.Contains(r.stderr, "--at") {
		t.Fatalf("bad --at: exit %d %s", r.code, r.stderr)
	}
}

// TestERPKillAndResume: at SERVICE_BATCH_ASYNC_THRESHOLD records the ERP profile asks how to
// run (refused without an answer off a terminal); in the background, a worker process is killed
// mid-run; a new worker takes the killed worker's row once its lease passes and finishes the
// job: every row done once, nothing lost. A completed job is not notified under FailureOnly.
func TestERPKillAndResume(t *testing.T) {
	t.Parallel()
	const n = 30
	rc, url := newReceiver(t)
	set := erpSettings(t, rc, url, settings.NotifyFailureOnly, map[string]string{settings.KeyAsyncThreshold: "10"})
	data := offersJSON(t, n)
	r := svcconnect(t, set, "", false, "render", "--profile", "erp", "--template", offerPath, "--data", data)
	if r.code != 2 || !strings.Contains(r.stderr, "30 records reach SERVICE_BATCH_ASYNC_THRESHOLD (10): choose --mode") {
		t.Fatalf("no mode off a terminal: exit %d %s", r.code, r.stderr)
	}
	r = svcconnect(t, set, "background\n", true, "render", "--profile", "erp", "--template", offerPath, "--data", data, "--output", "json")
	var queued jobs.Job
	if err := json.Unmarshal([]byte(r.stdout), &queued); r.code != 0 || err != nil || queued.State != jobs.JobQueued || queued.Total != n {
		t.Fatalf("background at a terminal: exit %d %s %s", r.code, r.stdout, r.stderr)
	}

	cmd := exec.Command(binary, "jobs", "work", "--lease", "2s", "--poll", "100ms", "--retry-delay", "0")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	for k, v := range set {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		j := showJob(t, set, queued.ID)
		if j.Done >= 3 {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("the worker did not get going: %+v", j.Job)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	killed := showJob(t, set, queued.ID)
	if killed.State != jobs.JobQueued || killed.Done == n {
		t.Fatalf("the worker finished before it was killed: %+v", killed.Job)
	}

	t.Logf("killed with %d of %d rows done, %d running", killed.Done, n, killed.Running)
	ok(t, set, "jobs", "work", "--drain", "--lease", "2s", "--retry-delay", "0")
	j := showJob(t, set, queued.ID)
	if j.State != jobs.JobCompleted || j.Done != n || j.Dead != 0 || j.NotifyState != jobs.NoticeNone {
		t.Fatalf("after the resume: %+v (killed at %d done, %d running)", j.Job, killed.Done, killed.Running)
	}
	// The row the killed worker held ran again: a second attempt, done.
	for _, row := range killed.Rows {
		if row.State == jobs.RowRunning && (j.Rows[row.Index].Attempts != 2 || j.Rows[row.Index].State != jobs.RowDone) {
			t.Fatalf("row %d held by the killed worker: %+v", row.Index, j.Rows[row.Index])
		}
	}
	st, err := blobs()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, row := range j.Rows {
		var res worker.Result
		if err := json.Unmarshal(row.Result, &res); err != nil {
			t.Fatal(err)
		}
		container, blob, _ := strings.Cut(res.PDFBlobPath, "/")
		if ok, err := st.Exists(context.Background(), container, blob); err != nil || !ok || seen[res.CorrelationID] {
			t.Fatalf("row %d: %+v exists %v %v", row.Index, res, ok, err)
		}
		seen[res.CorrelationID] = true
	}
	if got := rc.notices(t, queued.ID); len(got) != 0 {
		t.Fatalf("a completed job was notified under FailureOnly: %+v", got)
	}
}
