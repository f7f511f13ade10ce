package fault

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/esign-svc/esign/devtools/devkeys"
	"github.com/esign-svc/esign/shared/webhook"
)

// The processor killed while it delivers a session's events (its first POST held by the
// listener) and started again: the next runs of the Events timer deliver every event of the
// session, each with its one webhook-id and a signature that verifies; nothing is lost.
func TestProcessorKilledWhileSendingEvents(t *testing.T) {
	tok, err := devkeys.MintFromDir(svc.keysDir, devkeys.TokenOptions{Tenant: tenant, Roles: []string{"Service.Admin"}})
	if err != nil {
		t.Fatal(err)
	}
	admin := map[string]string{"Authorization": "Bearer " + tok}
	var (
		mu      sync.Mutex
		secret  string
		got     = map[string][]string{} // type -> webhook-ids, of the session's events
		bad     int
		held    = make(chan struct{})
		release = make(chan struct{})
		once    sync.Once
		group   string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		first := false
		once.Do(func() { first = true })
		if first { // the first POST waits until the processor was killed
			close(held)
			<-release
			w.WriteHeader(http.StatusNoContent)
			return
		}
		var m struct {
			Type string `json:"type"`
			Data struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		_ = json.Unmarshal(b, &m)
		mu.Lock()
		defer mu.Unlock()
		if _, err := webhook.VerifyStandard([]string{secret}, r.Header, b, time.Now()); err != nil {
			bad++
		}
		if m.Data.ID == group {
			if id := r.Header.Get(webhook.HeaderID); !slices.Contains(got[m.Type], id) {
				got[m.Type] = append(got[m.Type], id)
			}
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	c := must(t, http.StatusCreated, "POST", "webhooks", map[string]any{"url": srv.URL, "events": []string{"*"}}, admin)
	mu.Lock()
	secret = c.str("secret")
	mu.Unlock()
	defer must(t, http.StatusNoContent, "DELETE", "webhooks/"+c.str("id"), nil, admin)

	s := create(t, initiator(t))
	mu.Lock()
	group = s.GroupID
	mu.Unlock()
	invited(t, s)
	sign(t, s)
	complete(t, s)

	go func() { _ = svc.host.RunTimer(context.Background(), "Events") }() // dies with the processor
	select {
	case <-held:
	case <-time.After(deadline):
		t.Fatal("no event reached the listener")
	}
	if err := svc.host.RestartHandler(context.Background(), "processor"); err != nil {
		t.Fatal(err)
	}
	close(release)
	want := []string{"session.completed", "session.created", "slot.activated", "slot.signed"}
	eventually(t, "every event of the session", func() bool {
		if err := svc.host.RunTimer(context.Background(), "Events"); err != nil {
			t.Logf("Events: %v", err)
		}
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, typ := range want {
			if len(got[typ]) > 0 {
				n++
			}
		}
		return n == len(want)
	})
	mu.Lock()
	defer mu.Unlock()
	if bad != 0 {
		t.Fatalf("%d posts with a signature that does not verify", bad)
	}
	for typ, ids := range got {
		if len(ids) != 1 {
			t.Errorf("%s arrived under %d webhook-ids: %v", typ, len(ids), ids)
		}
	}
}
