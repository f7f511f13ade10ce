package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/callbacksig"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/esign/sessionstore"
	"github.com/esign-svc/esign/shared/portalclient"
)

// purgePortal is the signing portal's stand-in for the post-seal purge (shared/portalclient):
// an httptest server on loopback, given to the processor as PORTAL_API_URL before the host
// starts. It checks each request's signature with the harness's PORTAL_CALLBACK_SECRETS, read at
// request time (devkeys makes the secret after init runs), answers 204 (401 when the signature
// is wrong, 404 for another path) and records every request by groupId. Every session any e2e
// test completes is purged here.
var purgePortal = struct {
	srv *httptest.Server
	mu  sync.Mutex
	got map[string][]purgeSeen
}{got: map[string][]purgeSeen{}}

// purgeSeen is one purge request the stand-in received.
type purgeSeen struct {
	ContentType, IdempotencyKey string
	SigErr                      error
	Req                         portalclient.PurgeRequest
}

func init() {
	purgePortal.srv = httptest.NewServer(http.HandlerFunc(servePurge))
	extraSettings[portalclient.SettingURL] = purgePortal.srv.URL
}

func servePurge(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != portalclient.PurgePath {
		http.NotFound(w, r)
		return
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil || svc == nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	seen := purgeSeen{ContentType: r.Header.Get("Content-Type"), IdempotencyKey: r.Header.Get(portalclient.IdempotencyHeader)}
	secrets := strings.Split(svc.settings[portalclient.SettingSecrets], ",")
	seen.SigErr = callbacksig.Verify(r.Header.Get(callbacksig.Header), raw, time.Now(), secrets)
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&seen.Req); err != nil && seen.SigErr == nil {
		seen.SigErr = fmt.Errorf("body: %w", err)
	}
	purgePortal.mu.Lock()
	purgePortal.got[seen.Req.GroupID] = append(purgePortal.got[seen.Req.GroupID], seen)
	purgePortal.mu.Unlock()
	if seen.SigErr != nil {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func purgesOf(groupID string) []purgeSeen {
	purgePortal.mu.Lock()
	defer purgePortal.mu.Unlock()
	return append([]purgeSeen(nil), purgePortal.got[groupID]...)
}

// TestPortalPurgeAfterSeal: once a session is sealed and complete the processor asks the portal
// (signed like a callback) to purge exactly the session's slots, and records pii.purged for the
// portal's data once, next to the seal job's own pii.purged for the signature images.
func TestPortalPurgeAfterSeal(t *testing.T) {
	t.Parallel()
	body := createBody(t, "parallel", 2)
	corr := body["correlationId"].(string)
	created := createSession(t, tenantA, body)
	groupID := created.str("groupId")
	slots := slotsOf(t, created, "slots")
	for _, s := range slots {
		sign(t, s.Link)
	}
	waitState(t, tenantA, corr, "complete")

	var seen []purgeSeen
	eventually(t, "the portal purge request", func() bool {
		seen = purgesOf(groupID)
		return len(seen) > 0
	})
	want := []string{slots[0].SessionID, slots[1].SessionID}
	sort.Strings(want)
	for i, s := range seen {
		if s.SigErr != nil {
			t.Fatalf("purge %d: %v", i, s.SigErr)
		}
		got := append([]string(nil), s.Req.SessionIDs...)
		sort.Strings(got)
		if strings.Join(got, ",") != strings.Join(want, ",") || s.Req.Reason != "sealed" {
			t.Fatalf("purge %d asks for %v (%q), want the slots' sessionIds %v (sealed)", i, s.Req.SessionIDs, s.Req.Reason, want)
		}
		if s.ContentType != "application/json" || s.IdempotencyKey != groupID+":purge" {
			t.Fatalf("purge %d headers: Content-Type %q, Idempotency-Key %q", i, s.ContentType, s.IdempotencyKey)
		}
	}

	// The status shows the two pii.purged events (signature images, portal data).
	eventually(t, "pii.purged for the portal's data", func() bool {
		return count(eventKinds(status(t, tenantA, corr), -1), esign.EvPIIPurged) == 2
	})
	acct, err := azconn.New(azconn.Config{ConnectionString: svc.azurite.ConnectionString()})
	if err != nil {
		t.Fatal(err)
	}
	store, err := sessionstore.New(acct, "esignsessions", "esignindex")
	if err != nil {
		t.Fatal(err)
	}
	evs, err := store.Events(context.Background(), groupID)
	if err != nil {
		t.Fatal(err)
	}
	portal := 0
	for _, e := range evs {
		if e.Kind == esign.EvPIIPurged && e.Data["what"] == "portal session data" {
			portal++
			if fmt.Sprint(e.Data["slots"]) != "2" {
				t.Errorf("portal pii.purged slots %v, want 2", e.Data["slots"])
			}
		}
		if strings.HasPrefix(e.Kind, "pii.purge_") {
			t.Errorf("unexpected %s %v", e.Kind, e.Data)
		}
	}
	if portal != 1 {
		t.Fatalf("%d pii.purged events for the portal's data, want 1", portal)
	}
}
