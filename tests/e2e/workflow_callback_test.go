package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/callbacksig"
)

// wfHook receives the workflows' terminal callbacks: the processor's workflow-callback job posts
// them, signed with WEBHOOK_SECRETS, to this loopback server (allowed by WEBHOOK_ALLOW_LOOPBACK,
// which both apps read).
var wfHook struct {
	srv    *httptest.Server
	secret string
	mu     sync.Mutex
	got    map[string][]map[string]any // by workflowId, the verified bodies
	bad    int                         // posts whose signature did not verify
}

func init() {
	wfHook.secret = strings.Repeat("wf-callback-secret-", 3)
	wfHook.got = map[string][]map[string]any{}
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
		wfHook.got[id] = append(wfHook.got[id], m)
		w.WriteHeader(http.StatusNoContent)
	}))
	extraSettings["WEBHOOK_SECRETS"] = wfHook.secret
	extraSettings["WEBHOOK_ALLOW_LOOPBACK"] = "true"
}

// wfCallbackURL is the receiver's URL for a create body's callbackUrl.
func wfCallbackURL() string { return wfHook.srv.URL + "/workflow-callback" }

// calledBack waits for the callback of workflow id and checks its state and correlationId.
func calledBack(t testing.TB, id, corr, state string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
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
