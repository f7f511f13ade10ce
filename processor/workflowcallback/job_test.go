package workflowcallback

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/apptest"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/callbacksig"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/webhook"
	"github.com/esign-svc/esign/shared/workflow"
	"github.com/esign-svc/esign/shared/workflow/workflowstore"
)

func TestMain(m *testing.M) { azuritetest.Main(m) }

const secret = "a-webhook-secret-of-enough-length-0123456789"

// receiver is the caller's callback endpoint: it checks every request's signature, answers the
// statuses queued in answers in turn (then 204) and keeps the bodies and idempotency keys.
type receiver struct {
	t       *testing.T
	mu      sync.Mutex
	answers []int
	bodies  []Body
	keys    []string
	retry   string // Retry-After of the next non-2xx answer
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	if err := callbacksig.Verify(r.Header.Get(callbacksig.Header), raw, time.Now(), []string{secret}); err != nil {
		rc.t.Errorf("signature: %v", err)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	var b Body
	if err := dec.Decode(&b); err != nil {
		rc.t.Errorf("body %s: %v", raw, err)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.bodies = append(rc.bodies, b)
	rc.keys = append(rc.keys, r.Header.Get(webhook.IdempotencyHeader))
	status := http.StatusNoContent
	if len(rc.answers) > 0 {
		status, rc.answers = rc.answers[0], rc.answers[1:]
		if rc.retry != "" {
			w.Header().Set("Retry-After", rc.retry)
		}
	}
	w.WriteHeader(status)
}

// requeued records the messages put back on the queue and their delays.
type requeued struct {
	msgs   []Message
	delays []time.Duration
}

func (q *requeued) SendWithVisibilityDelay(_ context.Context, v any, d time.Duration) (string, error) {
	q.msgs, q.delays = append(q.msgs, v.(Message)), append(q.delays, d)
	return "id", nil
}

type env struct {
	store *workflowstore.Store
	rc    *receiver
	url   string
	queue *requeued
	job   *Job
}

func newEnv(t *testing.T) *env {
	t.Helper()
	st := apptest.New(t).Workflows()
	rc := &receiver{t: t}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	poster, err := webhook.New(secret, webhook.WithPolicy(webhook.Policy{AllowLoopback: true}), webhook.WithTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	q := &requeued{}
	return &env{store: st, rc: rc, url: srv.URL + "/hook?token=s3cr3t-query", queue: q, job: &Job{Deps: Deps{Workflows: st, Poster: poster, Queue: q}}}
}

const schemaYAML = `
steps:
  - id: one
    fields:
      - { key: name, type: string }
`

// ended is a workflow cancelled right after its creation, with callbackURL.
func (e *env) ended(t *testing.T, callbackURL string) *workflow.Workflow {
	t.Helper()
	ctx := context.Background()
	s, err := workflow.ParseSchema("schema", []byte(schemaYAML))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	w := &workflow.Workflow{ID: uuid.NewString(), Tenant: "t1", CorrelationID: "corr-" + uuid.NewString()[:8], TemplatePath: "templates/x/", CreatedBy: "oid"}
	w.Setup.CallbackURL = callbackURL
	ch, err := workflow.Create(w, s, nil, now)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.store.Create(ctx, w, ch, now); err != nil {
		t.Fatal(err)
	}
	w, _, err = e.store.Update(ctx, w.ID, func(w *workflow.Workflow) (kernel.Change, error) { return w.Cancel(now) })
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func msg(t *testing.T, m Message) funcproto.QueueMessage {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return funcproto.QueueMessage{ID: "m", Body: b}
}

// callbackEvents are the workflow's callback audit events as "kind attempt status|code".
func (e *env) callbackEvents(t *testing.T, id string) []string {
	t.Helper()
	evs, err := e.store.Events(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ev := range evs {
		if !strings.HasPrefix(ev.Kind, "workflow.callback_") {
			continue
		}
		b, _ := json.Marshal(ev.Data)
		if strings.Contains(string(b), "s3cr3t") || strings.Contains(string(b), "127.0.0.1") {
			t.Errorf("audit data %s hold the URL", b)
		}
		out = append(out, ev.Kind+" "+string(b))
	}
	return out
}

func TestRetriedAfter500ThenDelivered(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	w := e.ended(t, e.url)
	e.rc.answers = []int{http.StatusInternalServerError}
	if err := e.job.Handle(ctx, msg(t, Message{WorkflowID: w.ID, TenantID: "t1"})); err != nil {
		t.Fatal(err)
	}
	if len(e.queue.msgs) != 1 || e.queue.msgs[0] != (Message{WorkflowID: w.ID, TenantID: "t1", Attempt: 2}) || e.queue.delays[0] != time.Minute {
		t.Fatalf("requeued %+v after %v", e.queue.msgs, e.queue.delays)
	}
	if err := e.job.Handle(ctx, msg(t, e.queue.msgs[0])); err != nil {
		t.Fatal(err)
	}
	if len(e.queue.msgs) != 1 {
		t.Fatalf("a delivered callback was queued again: %+v", e.queue.msgs)
	}
	want := Body{WorkflowID: w.ID, CorrelationID: w.CorrelationID, State: "cancelled", CompletedAt: w.CompletedAt.UTC()}
	if len(e.rc.bodies) != 2 || e.rc.bodies[0] != want || e.rc.bodies[1] != want {
		t.Fatalf("bodies %+v, want twice %+v", e.rc.bodies, want)
	}
	if e.rc.keys[0] == "" || e.rc.keys[0] != e.rc.keys[1] {
		t.Fatalf("idempotency keys %q", e.rc.keys)
	}
	got := e.callbackEvents(t, w.ID)
	wantEv := []string{`workflow.callback_attempted {"attempt":1,"status":500}`, `workflow.callback_attempted {"attempt":2,"status":204}`, `workflow.callback_delivered {"attempt":2}`}
	if strings.Join(got, "\n") != strings.Join(wantEv, "\n") {
		t.Fatalf("events\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantEv, "\n"))
	}
}

func TestBackoffAndEnds(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()

	// Retry-After longer than the schedule's delay wins
	w := e.ended(t, e.url)
	e.rc.answers, e.rc.retry = []int{http.StatusTooManyRequests}, "7200"
	if err := e.job.Handle(ctx, msg(t, Message{WorkflowID: w.ID, TenantID: "t1", Attempt: 2})); err != nil {
		t.Fatal(err)
	}
	if len(e.queue.delays) != 1 || e.queue.delays[0] != 2*time.Hour || e.queue.msgs[0].Attempt != 3 {
		t.Fatalf("requeued %+v after %v", e.queue.msgs, e.queue.delays)
	}

	// the last attempt's 503 ends it
	e.rc.retry = ""
	w = e.ended(t, e.url)
	e.rc.answers = []int{http.StatusServiceUnavailable}
	if err := e.job.Handle(ctx, msg(t, Message{WorkflowID: w.ID, TenantID: "t1", Attempt: len(Backoff) + 1})); err != nil {
		t.Fatal(err)
	}
	if got := e.callbackEvents(t, w.ID); len(got) != 2 || got[1] != `workflow.callback_failed {"attempt":7}` || len(e.queue.msgs) != 1 {
		t.Fatalf("events %v, requeued %+v", got, e.queue.msgs)
	}

	// a permanent answer ends it at once
	w = e.ended(t, e.url)
	e.rc.answers = []int{http.StatusBadRequest}
	if err := e.job.Handle(ctx, msg(t, Message{WorkflowID: w.ID, TenantID: "t1"})); err != nil {
		t.Fatal(err)
	}
	if got := e.callbackEvents(t, w.ID); len(got) != 2 || got[1] != `workflow.callback_failed {"attempt":1}` || len(e.queue.msgs) != 1 {
		t.Fatalf("events %v, requeued %+v", got, e.queue.msgs)
	}

	// a URL the policy refuses (a private address) is never posted
	w = e.ended(t, "https://10.0.0.1/hook")
	posts := len(e.rc.bodies)
	if err := e.job.Handle(ctx, msg(t, Message{WorkflowID: w.ID, TenantID: "t1"})); err != nil {
		t.Fatal(err)
	}
	if got := e.callbackEvents(t, w.ID); len(got) != 2 || got[1] != `workflow.callback_failed {"attempt":1,"code":"url_refused"}` || len(e.rc.bodies) != posts {
		t.Fatalf("events %v", got)
	}

	// no callbackUrl, another tenant, a poisoned message
	w = e.ended(t, "")
	if err := e.job.Handle(ctx, msg(t, Message{WorkflowID: w.ID, TenantID: "t1"})); err != nil || len(e.callbackEvents(t, w.ID)) != 0 {
		t.Fatalf("no callbackUrl: %v", err)
	}
	w = e.ended(t, e.url)
	if err := e.job.Handle(ctx, msg(t, Message{WorkflowID: w.ID, TenantID: "t2"})); !funcproto.IsPermanent(err) {
		t.Fatalf("tenant mismatch: %v", err)
	}
	if err := e.job.HandlePoison(ctx, msg(t, Message{WorkflowID: w.ID, TenantID: "t1", Attempt: 3})); err != nil {
		t.Fatal(err)
	}
	if got := e.callbackEvents(t, w.ID); len(got) != 2 || got[1] != `workflow.callback_failed {"attempt":3,"code":"retries_exhausted"}` {
		t.Fatalf("poison events %v", got)
	}
}
