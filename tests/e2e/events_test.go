package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/webhook"
)

// eventListener is a subscriber's endpoint: it keeps every request it gets, with whether its
// Standard Webhooks signature verified against the secret it is given once the subscription
// exists.
type eventListener struct {
	mu     sync.Mutex
	secret string
	got    []gotEvent
	srv    *httptest.Server
}

type gotEvent struct {
	ID       string // webhook-id
	Verified bool
	Body     map[string]any
	Raw      []byte
}

func newEventListener(t *testing.T) *eventListener {
	l := &eventListener{}
	l.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		l.mu.Lock()
		defer l.mu.Unlock()
		id, err := webhook.VerifyStandard([]string{l.secret}, r.Header, b, time.Now())
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		l.got = append(l.got, gotEvent{ID: r.Header.Get(webhook.HeaderID), Verified: err == nil && id != "", Body: m, Raw: b})
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(l.srv.Close)
	return l
}

// of is what the listener received about aggregate id (data.id).
func (l *eventListener) of(id string) []gotEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []gotEvent
	for _, g := range l.got {
		if d, _ := g.Body["data"].(map[string]any); d != nil && d["id"] == id {
			out = append(out, g)
		}
	}
	return out
}

// TestEventsOfASigningSession: an admin subscribes a local listener (http on loopback:
// WEBHOOK_ALLOW_LOOPBACK); another tenant's admin gets 404 for it and an initiator 403; a ping
// arrives signed; a signing session run to completion sends session.created, slot.activated,
// slot.signed and session.completed, each once (a retry would repeat its webhook-id), each
// signed the Standard Webhooks way, with ids, states and times only; the deliveries log shows
// the attempts; a deleted subscription is gone.
func TestEventsOfASigningSession(t *testing.T) {
	t.Parallel()
	l := newEventListener(t)
	admin := bearer(svc.jwt(t, tenantA, "Service.Admin"))

	bad := call(t, "POST", svc.url("webhooks"), map[string]any{"url": l.srv.URL, "events": []string{"session.nope"}}, admin)
	if bad.Status != http.StatusBadRequest || bad.code() != "invalid_request" || !slices.Equal(bad.fields(), []string{"events[0]"}) {
		t.Fatalf("bad create: %d %s", bad.Status, bad.Raw)
	}
	if r := call(t, "GET", svc.url("webhooks"), nil, bearer(svc.jwt(t, tenantA, "Esign.Initiator"))); r.Status != http.StatusForbidden || r.code() != "role_required" {
		t.Fatalf("initiator: %d %s", r.Status, r.Raw)
	}
	c := call(t, "POST", svc.url("webhooks"), map[string]any{"url": l.srv.URL + "/events",
		"events": []string{"session.created", "slot.activated", "slot.signed", "session.completed"}, "description": "e2e"}, admin)
	if c.Status != http.StatusCreated || !strings.HasPrefix(c.str("secret"), "whsec_") || c.str("state") != "active" {
		t.Fatalf("create: %d %s", c.Status, c.Raw)
	}
	remember("webhook secret", c.str("secret"))
	l.mu.Lock()
	l.secret = c.str("secret")
	l.mu.Unlock()
	id := c.str("id")
	if r := call(t, "GET", svc.url("webhooks/"+id), nil, bearer(svc.jwt(t, tenantB, "Service.Admin"))); r.Status != http.StatusNotFound || r.code() != "webhook_not_found" {
		t.Fatalf("other tenant's get: %d %s", r.Status, r.Raw)
	}
	if r := call(t, "GET", svc.url("webhooks/"+id), nil, admin); r.Status != http.StatusOK || r.str("secret") != "" || r.str("url") != l.srv.URL+"/events" {
		t.Fatalf("get: %d %s", r.Status, r.Raw)
	}
	if r := call(t, "POST", svc.url("webhooks/"+id+"/ping"), nil, admin); r.Status != http.StatusOK || r.str("outcome") != "delivered" {
		t.Fatalf("ping: %d %s", r.Status, r.Raw)
	}
	if p := l.of(id); len(p) != 1 || !p[0].Verified || p[0].Body["type"] != "webhook.ping" {
		t.Fatalf("ping received: %+v", p)
	}

	body := createBody(t, "parallel", 1)
	created := createSession(t, tenantA, body)
	group := created.str("groupId")
	inv := waitInvitations(t, signerEmail(body, 0), 1)
	sign(t, inv[0].Link)
	waitState(t, tenantA, body["correlationId"].(string), "complete")

	want := []string{"session.completed", "session.created", "slot.activated", "slot.signed"}
	var got []gotEvent
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		runEvents(t)
		got = l.of(group)
		types := map[string]bool{}
		for _, g := range got {
			types[g.Body["type"].(string)] = true
		}
		if len(types) == len(want) {
			break
		}
	}
	byType := map[string][]string{}
	for _, g := range got {
		if !g.Verified {
			t.Errorf("an event's signature does not verify: %s", g.Raw)
		}
		if bytes.Contains(g.Raw, []byte("@")) || bytes.Contains(g.Raw, []byte(inv[0].Link)) {
			t.Errorf("an event carries an address or a link: %s", g.Raw)
		}
		if g.Body["tenantId"] != tenantA || g.Body["id"] != g.ID {
			t.Errorf("event %s", g.Raw)
		}
		typ := g.Body["type"].(string)
		if !slices.Contains(byType[typ], g.ID) {
			byType[typ] = append(byType[typ], g.ID)
		}
	}
	var types []string
	for typ, ids := range byType {
		types = append(types, typ)
		if len(ids) != 1 {
			t.Errorf("%s sent as %d events", typ, len(ids))
		}
	}
	slices.Sort(types)
	if !slices.Equal(types, want) {
		t.Fatalf("events of the session: %v, want %v", types, want)
	}
	if d, _ := l.of(group)[0].Body["data"].(map[string]any); d["object"] != "session" {
		t.Errorf("data %v", d)
	}
	log := call(t, "GET", svc.url("webhooks/"+id+"/deliveries?limit=200"), nil, admin)
	items, _ := log.JSON["items"].([]any)
	if log.Status != http.StatusOK || len(items) < 5 {
		t.Fatalf("deliveries: %d %s", log.Status, log.Raw)
	}
	if r := call(t, "DELETE", svc.url("webhooks/"+id), nil, admin); r.Status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", r.Status, r.Raw)
	}
	if r := call(t, "GET", svc.url("webhooks/"+id), nil, admin); r.Status != http.StatusNotFound {
		t.Fatalf("get after delete: %d %s", r.Status, r.Raw)
	}
}

// TestEventRetriedWithOneWebhookID: a listener that answers 500 twice, then 200, gets the
// event three times with one webhook-id (the back-off is 5 s, then 30 s); the deliveries log
// shows the three attempts, newest first.
func TestEventRetriedWithOneWebhookID(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var ids []string
	group := "" // the session's, once created: other tests' sessions of the tenant reach the listener too
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		d, _ := m["data"].(map[string]any)
		mu.Lock()
		defer mu.Unlock()
		if m["type"] != "session.created" || d == nil || d["id"] != group || group == "" {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		ids = append(ids, r.Header.Get(webhook.HeaderID))
		if len(ids) <= 2 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	admin := bearer(svc.jwt(t, tenantA, "Service.Admin"))
	c := call(t, "POST", svc.url("webhooks"), map[string]any{"url": srv.URL, "events": []string{"session.created"}}, admin)
	if c.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", c.Status, c.Raw)
	}
	remember("webhook secret", c.str("secret"))
	defer call(t, "DELETE", svc.url("webhooks/"+c.str("id")), nil, admin)
	created := createSession(t, tenantA, createBody(t, "parallel", 1))
	mu.Lock()
	group = created.str("groupId")
	mu.Unlock()
	var got []string
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
		runEvents(t)
		mu.Lock()
		got = slices.Clone(ids)
		mu.Unlock()
		if len(got) >= 3 {
			break
		}
	}
	if len(got) < 3 || got[0] == "" || got[1] != got[0] || got[2] != got[0] {
		t.Fatalf("webhook-ids of the posts: %v, want the same one three times", got)
	}
	log := call(t, "GET", svc.url("webhooks/"+c.str("id")+"/deliveries"), nil, admin)
	items, _ := log.JSON["items"].([]any)
	var outcomes []string
	for _, it := range items {
		m := it.(map[string]any)
		if m["eventId"] == got[0] {
			outcomes = append(outcomes, m["outcome"].(string)+"/"+strconv.Itoa(int(m["status"].(float64))))
		}
	}
	if !slices.Equal(outcomes, []string{"delivered/200", "retrying/500", "retrying/500"}) {
		t.Fatalf("deliveries log of the event: %v (%s)", outcomes, log.Raw)
	}
}

// TestEventsOfADeliveryABatchAndAWorkflow: a subscription to every type (`*`) receives, once
// each and signed, a delivery's delivery.opened, delivery.downloaded and delivery.revoked, a
// batch's batch.pending_approval and batch.rejected, and a workflow's
// workflow.pending_approval and workflow.cancelled, each naming its object and id.
func TestEventsOfADeliveryABatchAndAWorkflow(t *testing.T) {
	t.Parallel()
	l := newEventListener(t)
	admin := bearer(svc.jwt(t, tenantA, "Service.Admin"))
	c := call(t, "POST", svc.url("webhooks"), map[string]any{"url": l.srv.URL, "events": []string{"*"}}, admin)
	if c.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", c.Status, c.Raw)
	}
	remember("webhook secret", c.str("secret"))
	l.mu.Lock()
	l.secret = c.str("secret")
	l.mu.Unlock()
	defer call(t, "DELETE", svc.url("webhooks/"+c.str("id")), nil, admin)

	d := createDelivery(t, tenantA, deliveryBody(t, "secure-email", 1))[0]
	for _, ev := range []string{"opened", "downloaded"} {
		if r := recipientCall(t, "POST", d.ID, "/access", d.Token, map[string]any{"eventType": ev, "ip": "203.0.113.9"}); r.Status != http.StatusOK {
			t.Fatalf("access %s: %d %s", ev, r.Status, r.Raw)
		}
	}
	if r := call(t, "POST", svc.url("delivery/"+d.ID+"/revoke"), nil, bearer(svc.jwt(t, tenantA, "Esign.Initiator"))); r.Status != http.StatusOK {
		t.Fatalf("revoke: %d %s", r.Status, r.Raw)
	}

	alice := newPerson(t, tenantA, "alice", "Esign.Initiator")
	bob := newPerson(t, tenantA, "bob", "Dispatch.Approver")
	batch := submitBatch(t, alice, batchBody(uploadPackage(t, examplePackage(t)), offers(1), true), http.StatusAccepted).str("batchId")
	if r := decide(t, bob, batch, "reject", "not now"); r.Status != http.StatusOK {
		t.Fatalf("reject: %d %s", r.Status, r.Raw)
	}

	wf := createWorkflow(t, tenantA, wfBody(wfPackage(t, false)))
	wantWF(t, fill(t, wf, "Acme", 50), 200, "pending-approval")
	wantWF(t, wfJWT(t, "POST", wf.ID, "/cancel", "Esign.Initiator", nil), 200, "cancelled")

	want := map[string][]string{
		d.ID:  {"delivery.downloaded", "delivery.opened", "delivery.revoked"},
		batch: {"batch.pending_approval", "batch.rejected"},
		wf.ID: {"workflow.cancelled", "workflow.pending_approval"},
	}
	objects := map[string]string{d.ID: "delivery", batch: "batch", wf.ID: "workflow"}
	types := func(id string) (map[string][]string, []gotEvent) {
		got := l.of(id)
		by := map[string][]string{}
		for _, g := range got {
			typ, _ := g.Body["type"].(string)
			if !slices.Contains(by[typ], g.ID) {
				by[typ] = append(by[typ], g.ID)
			}
		}
		return by, got
	}
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		runEvents(t)
		all := true
		for id, w := range want {
			if by, _ := types(id); len(by) < len(w) {
				all = false
			}
		}
		if all {
			break
		}
	}
	for id, w := range want {
		by, got := types(id)
		var names []string
		for typ, ids := range by {
			names = append(names, typ)
			if len(ids) != 1 {
				t.Errorf("%s of %s under %d webhook-ids", typ, id, len(ids))
			}
		}
		slices.Sort(names)
		if !slices.Equal(names, w) {
			t.Errorf("events of %s %s: %v, want %v", objects[id], id, names, w)
		}
		for _, g := range got {
			if d, _ := g.Body["data"].(map[string]any); !g.Verified || d["object"] != objects[id] || bytes.Contains(g.Raw, []byte("@")) {
				t.Errorf("event %s (verified %v)", g.Raw, g.Verified)
			}
		}
	}
}
