package e2e

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

	"github.com/esign-svc/esign/shared/callbacksig"
)

// wfHook receives the workflows' terminal callbacks: the processor's events sender posts them
// (handed to it by the workflow-callback job), signed with WEBHOOK_SECRETS, to this loopback
// server (allowed by WEBHOOK_ALLOW_LOOPBACK, which both apps read).
var wfHook struct {
	srv    *httptest.Server
	secret string
	mu     sync.Mutex
	got    map[string][]map[string]any // by workflowId, the verified bodies
	bad    int                         // posts whose signature did not verify
	failed map[string][]string         // by workflowId, the Idempotency-Keys of the posts answered 500
}

// failFirstPrefix: the receiver answers the first post of a workflow whose correlationId starts
// with it 500, as a receiver that is down for a moment.
const failFirstPrefix = "retry500-"

func init() {
	wfHook.secret = strings.Repeat("wf-callback-secret-", 3)
	wfHook.got = map[string][]map[string]any{}
	wfHook.failed = map[string][]string{}
	wfHook.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m map[string]any
		wfHook.mu.Lock()
		defer wfHook.mu.Unlock()
		if callbacksig.Verify(r.Header.Get("X-Esign-Signature"), body, time.Now(), []string{wfHook.secret}) != nil || json.Unmarshal(body, &m) != nil {
			wfHook.bad++
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		id, _ := m["workflowId"].(string)
		if corr, _ := m["correlationId"].(string); strings.HasPrefix(corr, failFirstPrefix) && len(wfHook.failed[id]) == 0 {
			wfHook.failed[id] = append(wfHook.failed[id], r.Header.Get("Idempotency-Key"))
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		m["idempotencyKey"] = r.Header.Get("Idempotency-Key")
		wfHook.got[id] = append(wfHook.got[id], m)
		w.WriteHeader(http.StatusNoContent)
	}))
	extraSettings["WEBHOOK_SECRETS"] = wfHook.secret
	extraSettings["WEBHOOK_ALLOW_LOOPBACK"] = "true"
}

// eventsRun keeps one Events timer run at a time in this package, as the Functions host keeps
// a timer a singleton: two runs at once could both take the same due delivery.
var eventsRun sync.Mutex

// runEvents runs the processor's Events timer once (the host's schedules are off in these
// tests): the events' fan-out and every due delivery, the workflows' callbacks among them. A
// run that fails (a storage call that failed under the whole suite's load) is logged, not
// fatal: as under the host, the next run takes up what it left, and the callers wait for the
// outcome (a delivery, a callback) until their deadline.
func runEvents(t testing.TB) {
	t.Helper()
	eventsRun.Lock()
	defer eventsRun.Unlock()
	if err := svc.host.RunTimer(context.Background(), "Events"); err != nil {
		t.Logf("an Events run failed (the next run takes it up): %v", err)
	}
}

// wfCallbackURL is the receiver's URL for a create body's callbackUrl.
func wfCallbackURL() string { return wfHook.srv.URL + "/workflow-callback" }

// calledBack waits for the callback of workflow id and checks its state and correlationId.
func calledBack(t testing.TB, id, corr, state string) {
	t.Helper()
	calledBackWithin(t, id, corr, state, 30*time.Second)
}

func calledBackWithin(t testing.TB, id, corr, state string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		runEvents(t)
		wfHook.mu.Lock()
		got := wfHook.got[id]
		wfHook.mu.Unlock()
		if len(got) > 0 {
			m := got[0]
			if len(got) != 1 || m["state"] != state || m["correlationId"] != corr || m["completedAt"] == "" {
				t.Fatalf("callbacks of %s: %v", id, got)
			}
			return
		}
		time.Sleep(300 * time.Millisecond)
	}
	t.Fatalf("no callback of workflow %s", id)
}

// TestWorkflowCallbackRetriedAfter500: the receiver answers the first post 500; the events'
// sender posts again after its first back-off (5 s), with the same body and Idempotency-Key,
// and the receiver's 204 ends it.
func TestWorkflowCallbackRetriedAfter500(t *testing.T) {
	t.Parallel()
	body := wfBody(wfPackage(t, false))
	body["correlationId"] = failFirstPrefix + uuid.NewString()
	body["callbackUrl"] = wfCallbackURL()
	wf := createWorkflow(t, tenantA, body)
	wantWF(t, wfJWT(t, "POST", wf.ID, "/cancel", "Esign.Initiator", nil), 200, "cancelled")
	calledBackWithin(t, wf.ID, body["correlationId"].(string), "cancelled", 3*time.Minute)
	wfHook.mu.Lock()
	defer wfHook.mu.Unlock()
	failed, got := wfHook.failed[wf.ID], wfHook.got[wf.ID]
	if len(failed) != 1 || len(got) != 1 || failed[0] == "" || got[0]["idempotencyKey"] != failed[0] {
		t.Fatalf("posts answered 500: %v; delivered: %v", failed, got)
	}
}
