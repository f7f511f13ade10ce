package workflowcallback

import (
	"context"
	"encoding/json"
	"fmt"
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
	"github.com/esign-svc/esign/shared/event"
	"github.com/esign-svc/esign/shared/event/webhookstore"
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

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.t = c.t.Add(d) }

type env struct {
	store *workflowstore.Store
	hooks *webhookstore.Store
	rc    *receiver
	url   string
	clk   *clock
	send  *event.Sender
	job   *Job
}

// newEnv is the job and the events' sender it hands callbacks to, on one moved clock; the
// sender signs callbacks with secret (nil client: no WEBHOOK_SECRETS).
func newEnv(t *testing.T, signed bool) *env {
	t.Helper()
	st := apptest.New(t).Workflows()
	clk := &clock{t: time.Now().UTC().Truncate(time.Second)}
	hooks, err := webhookstore.New(azuritetest.Account(t), azuritetest.Name("hooks"), azuritetest.Name("hookx"))
	if err != nil {
		t.Fatal(err)
	}
	if err := hooks.Ensure(context.Background(), clk.Now()); err != nil {
		t.Fatal(err)
	}
	rc := &receiver{t: t}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	send := &event.Sender{Store: hooks, Queue: hooks, Now: clk.Now, OnDirect: Audit(st, clk.Now)}
	if signed {
		if send.DirectClient, err = webhook.New(secret, webhook.WithPolicy(webhook.Policy{AllowLoopback: true}), webhook.WithTimeout(5*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	return &env{store: st, hooks: hooks, rc: rc, url: srv.URL + "/hook?token=s3cr3t-query", clk: clk, send: send,
		job: &Job{Deps: Deps{Workflows: st, Sends: hooks, Now: clk.Now}}}
}

// sends runs the sender once (what the Events timer does) and says how many attempts it made.
func (e *env) sends(t *testing.T) int {
	t.Helper()
	n, err := e.send.Sends(context.Background(), 100)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// log is the tenant's callback deliveries log, oldest first, as "attempt status outcome".
func (e *env) log(t *testing.T, eventID string) []string {
	t.Helper()
	p, err := e.hooks.Attempts(context.Background(), "t1", CallbackLog, "", 100)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i := len(p.Items) - 1; i >= 0; i-- {
		a := p.Items[i]
		if a.EventID != eventID {
			continue
		}
		if a.Type != CallbackType {
			t.Errorf("logged type %q", a.Type)
		}
		out = append(out, fmt.Sprintf("%d %d %s", a.Attempt, a.Status, a.Outcome))
	}
	return out
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

// TestRetriedAfter500ThenDelivered: the job only hands the callback to the events' sender (a
// message handled twice sends it once); the sender's first attempt gets a 500, its retry after
// the events' first back-off (5 s) is delivered, both with one Idempotency-Key, both in the
// deliveries log and audited on the workflow. Before issue 27 the job posted itself and put the
// message back on the workflow-callback queue (a second retry machine), and nothing was logged.
func TestRetriedAfter500ThenDelivered(t *testing.T) {
	t.Parallel()
	e := newEnv(t, true)
	ctx := context.Background()
	w := e.ended(t, e.url)
	e.rc.answers = []int{http.StatusInternalServerError}
	for range 2 {
		if err := e.job.Handle(ctx, msg(t, Message{WorkflowID: w.ID, TenantID: "t1"})); err != nil {
			t.Fatal(err)
		}
	}
	if len(e.rc.bodies) != 0 {
		t.Fatal("the job posted itself")
	}
	if n := e.sends(t); n != 1 {
		t.Fatalf("first run: %d attempt(s), want 1", n)
	}
	if n := e.sends(t); n != 0 {
		t.Fatalf("retried before its back-off: %d", n)
	}
	e.clk.Add(event.Backoff(1))
	if n := e.sends(t); n != 1 {
		t.Fatalf("after the back-off: %d attempt(s), want 1", n)
	}
	e.clk.Add(time.Hour)
	if n := e.sends(t); n != 0 {
		t.Fatalf("a delivered callback was sent again: %d", n)
	}
	want := Body{WorkflowID: w.ID, CorrelationID: w.CorrelationID, State: "cancelled", CompletedAt: w.CompletedAt.UTC()}
	if len(e.rc.bodies) != 2 || e.rc.bodies[0] != want || e.rc.bodies[1] != want {
		t.Fatalf("bodies %+v, want twice %+v", e.rc.bodies, want)
	}
	key := webhook.Key("workflow-callback", w.ID, "cancelled")
	if e.rc.keys[0] != key || e.rc.keys[1] != key {
		t.Fatalf("idempotency keys %q, want %q twice", e.rc.keys, key)
	}
	if got, wantLog := e.log(t, key), []string{"1 500 retrying", "2 204 delivered"}; strings.Join(got, "|") != strings.Join(wantLog, "|") {
		t.Fatalf("deliveries log %q, want %q", got, wantLog)
	}
	got := e.callbackEvents(t, w.ID)
	wantEv := []string{`workflow.callback_attempted {"attempt":1,"status":500}`, `workflow.callback_attempted {"attempt":2,"status":204}`, `workflow.callback_delivered {"attempt":2}`}
	if strings.Join(got, "\n") != strings.Join(wantEv, "\n") {
		t.Fatalf("events\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantEv, "\n"))
	}
}

// handled hands w's callback to the sender and runs it once.
func (e *env) handled(t *testing.T, w *workflow.Workflow) {
	t.Helper()
	if err := e.job.Handle(context.Background(), msg(t, Message{WorkflowID: w.ID, TenantID: "t1"})); err != nil {
		t.Fatal(err)
	}
	e.sends(t)
}

// TestBackoffAndEnds: the events' retry window ends a callback still failing after 24 h; a
// permanent answer or a refused URL ends it at once; no callbackUrl, another tenant, a poisoned
// message, no secret. Turned around in issue 27: it pinned the job's own schedule (1 min,
// 5 min... re-enqueued with the attempt number, Retry-After honoured), now the events' sender's.
func TestBackoffAndEnds(t *testing.T) {
	t.Parallel()
	e := newEnv(t, true)
	ctx := context.Background()

	// 503 until the 24 h are spent: retried with the events' back-off, then failed
	w := e.ended(t, e.url)
	e.rc.answers = []int{503, 503, 503, 503, 503, 503, 503, 503, 503, 503, 503, 503, 503, 503}
	e.handled(t, w)
	for i := 1; i < 20 && len(e.rc.answers) > 0; i++ {
		e.clk.Add(event.Backoff(i))
		e.sends(t)
	}
	got := e.callbackEvents(t, w.ID)
	last := got[len(got)-1]
	if !strings.HasPrefix(last, "workflow.callback_failed") || e.clk.Now().Sub(w.CompletedAt) < event.RetryFor {
		t.Fatalf("events %v at %v", got, e.clk.Now().Sub(w.CompletedAt))
	}
	n := len(got) - 1
	if l := e.log(t, webhook.Key("workflow-callback", w.ID, "cancelled")); len(l) != n || l[n-1] != fmt.Sprintf("%d 503 failed", n) || l[0] != "1 503 retrying" {
		t.Fatalf("log %q", l)
	}

	// a permanent answer ends it at once
	w = e.ended(t, e.url)
	e.rc.answers = []int{http.StatusBadRequest}
	e.handled(t, w)
	e.clk.Add(time.Hour)
	if got := e.callbackEvents(t, w.ID); len(got) != 2 || got[1] != `workflow.callback_failed {"attempt":1}` || e.sends(t) != 0 {
		t.Fatalf("events %v", got)
	}

	// a URL the policy refuses (a private address) is never posted
	w = e.ended(t, "https://10.0.0.1/hook")
	posts := len(e.rc.bodies)
	e.handled(t, w)
	if got := e.callbackEvents(t, w.ID); len(got) != 2 || got[1] != `workflow.callback_failed {"attempt":1,"code":"url_refused"}` || len(e.rc.bodies) != posts {
		t.Fatalf("events %v", got)
	}

	// no callbackUrl, another tenant, a poisoned message
	w = e.ended(t, "")
	e.handled(t, w)
	if got := e.callbackEvents(t, w.ID); len(got) != 0 {
		t.Fatalf("no callbackUrl: %v", got)
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

	// no WEBHOOK_SECRETS: failed once, not posted
	u := newEnv(t, false)
	w = u.ended(t, u.url)
	u.handled(t, w)
	if got := u.callbackEvents(t, w.ID); len(got) != 2 || got[1] != `workflow.callback_failed {"attempt":1,"code":"webhook_not_configured"}` || len(u.rc.bodies) != 0 || u.sends(t) != 0 {
		t.Fatalf("unconfigured: %v", got)
	}
}
