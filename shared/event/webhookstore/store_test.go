package webhookstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/event"
	"github.com/esign-svc/esign/shared/event/webhookstore"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/pii"
	"github.com/esign-svc/esign/shared/webhook"
)

func TestMain(m *testing.M) { azuritetest.Main(m) }

const (
	t1 = "11111111-1111-1111-1111-111111111111"
	t2 = "22222222-2222-2222-2222-222222222222"
)

// clock is a movable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// listener records what it receives and answers the statuses queued in answers (then 200).
type listener struct {
	mu      sync.Mutex
	answers []int
	got     []received
}

type received struct {
	h    http.Header
	body []byte
}

func (l *listener) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	l.mu.Lock()
	l.got = append(l.got, received{r.Header.Clone(), b})
	status := 200
	if len(l.answers) > 0 {
		status, l.answers = l.answers[0], l.answers[1:]
	}
	l.mu.Unlock()
	w.WriteHeader(status)
}

func (l *listener) received() []received {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]received(nil), l.got...)
}

type fixture struct {
	store *webhookstore.Store
	hooks *event.Webhooks
	send  *event.Sender
	clk   *clock
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	st, err := webhookstore.New(azuritetest.Account(t), azuritetest.Name("hooks"), azuritetest.Name("hookx"))
	if err != nil {
		t.Fatal(err)
	}
	clk := &clock{t: time.Now().UTC().Truncate(time.Second)}
	if err := st.Ensure(context.Background(), clk.Now()); err != nil {
		t.Fatal(err)
	}
	c, err := pii.ParseCipher("e1:MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=")
	if err != nil {
		t.Fatal(err)
	}
	client, err := webhook.NewUnsigned(webhook.WithPolicy(webhook.Policy{AllowLoopback: true}), webhook.WithClock(clk.Now))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	var mu sync.Mutex
	send := &event.Sender{Store: st, Queue: st, Cipher: c, Client: client, Now: clk.Now}
	hooks := &event.Webhooks{Store: st, Cipher: c, Policy: webhook.Policy{AllowLoopback: true}, Sender: send, Now: clk.Now,
		NewID: func() string {
			mu.Lock()
			defer mu.Unlock()
			n++
			return "sub" + strings.Repeat("0", 3) + string(rune('a'+n))
		}}
	return fixture{store: st, hooks: hooks, send: send, clk: clk}
}

var admin = kernel.Actor{Kind: "admin", ID: "oid-admin"}

// TestSubscriptionLifecycle: create shows a whsec_ secret once and stores it only encrypted;
// another tenant's id is not found; list, rotate (both secrets sign during the grace, the old
// one no longer after it) and delete; bad bodies name their fields.
func TestSubscriptionLifecycle(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	l := &listener{}
	srv := httptest.NewServer(l)
	defer srv.Close()

	err := f.hooks.Check(event.CreateRequest{URL: "http://10.0.0.1/x", Events: []string{"session.created", "nope", "session.created"}, Description: "a\x00b"})
	e, ok := apperr.As(err)
	if !ok || e.Code != "invalid_request" || len(e.Fields) != 4 || e.Fields[0].Field != "url" || e.Fields[1].Field != "events[1]" ||
		e.Fields[2].Field != "events[2]" || e.Fields[3].Field != "description" {
		t.Fatalf("check: %#v", err)
	}
	strict := &event.Webhooks{}
	if err := strict.Check(event.CreateRequest{URL: "http://localhost:9/x", Events: []string{"*"}}); err == nil {
		t.Fatal("the strict policy admitted a loopback http URL")
	}

	c, err := f.hooks.Create(ctx, t1, admin, event.CreateRequest{URL: srv.URL + "/hook", Events: []string{"*"}, Description: "crm"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(c.Secret, "whsec_") || strings.Contains(c.Sub.SecretEnc, c.Secret[6:]) || c.Sub.SecretEnc == "" {
		t.Fatalf("secret %q stored as %q", c.Secret, c.Sub.SecretEnc)
	}
	if _, err := f.hooks.Get(ctx, t2, c.Sub.ID); !errors.Is(err, event.ErrNotFound) {
		t.Fatalf("other tenant's get: %v", err)
	}
	if err := f.hooks.Delete(ctx, t2, c.Sub.ID, admin); !errors.Is(err, event.ErrNotFound) {
		t.Fatalf("other tenant's delete: %v", err)
	}
	if list, err := f.hooks.List(ctx, t2); err != nil || len(list) != 0 {
		t.Fatalf("other tenant's list: %v %d", err, len(list))
	}
	if list, err := f.hooks.List(ctx, t1); err != nil || len(list) != 1 || list[0].URL != srv.URL+"/hook" {
		t.Fatalf("list: %v %+v", err, list)
	}

	r, err := f.hooks.Rotate(ctx, t1, c.Sub.ID, admin)
	if err != nil || r.Secret == c.Secret {
		t.Fatalf("rotate: %v", err)
	}
	a, err := f.hooks.Ping(ctx, t1, c.Sub.ID)
	if err != nil || a.Outcome != event.OutcomeDelivered || a.Status != 200 {
		t.Fatalf("ping: %+v %v", a, err)
	}
	got := l.received()
	for _, s := range []string{c.Secret, r.Secret} {
		if _, err := webhook.VerifyStandard([]string{s}, got[0].h, got[0].body, f.clk.Now()); err != nil {
			t.Fatalf("during the grace a secret does not verify: %v", err)
		}
	}
	f.clk.Add(event.RotationGrace + time.Minute)
	if _, err := f.hooks.Ping(ctx, t1, c.Sub.ID); err != nil {
		t.Fatal(err)
	}
	got = l.received()
	if _, err := webhook.VerifyStandard([]string{c.Secret}, got[1].h, got[1].body, f.clk.Now()); err == nil {
		t.Fatal("the old secret still signs after its grace")
	}
	if _, err := webhook.VerifyStandard([]string{r.Secret}, got[1].h, got[1].body, f.clk.Now()); err != nil {
		t.Fatal(err)
	}
	page, err := f.hooks.Deliveries(ctx, t1, c.Sub.ID, "", 1)
	if err != nil || len(page.Items) != 1 || page.Next == "" || !page.Items[0].At.Equal(f.clk.Now()) {
		t.Fatalf("deliveries page 1: %+v %v", page, err)
	}
	page2, err := f.hooks.Deliveries(ctx, t1, c.Sub.ID, page.Next, 10)
	if err != nil || len(page2.Items) != 1 || page2.Next != "" {
		t.Fatalf("deliveries page 2: %+v %v", page2, err)
	}
	if _, err := f.hooks.Deliveries(ctx, t1, c.Sub.ID, "nope", 10); apperr.KindOf(err) != apperr.KindInvalid {
		t.Fatalf("bad cursor: %v", err)
	}
	if err := f.hooks.Delete(ctx, t1, c.Sub.ID, admin); err != nil {
		t.Fatal(err)
	}
	if _, err := f.hooks.Get(ctx, t1, c.Sub.ID); !errors.Is(err, event.ErrNotFound) {
		t.Fatalf("deleted get: %v", err)
	}
}

// outboxOf is an OutboxSource of fixed events.
type outboxOf struct {
	mu     sync.Mutex
	events []kernel.Published
	done   []string
}

type batch struct{ o *outboxOf }

func (o *outboxOf) Due(context.Context, time.Time, int) ([]event.OutboxBatch, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.events) == 0 {
		return nil, nil
	}
	return []event.OutboxBatch{batch{o}}, nil
}
func (b batch) Events() []kernel.Published {
	b.o.mu.Lock()
	defer b.o.mu.Unlock()
	return append([]kernel.Published(nil), b.o.events...)
}
func (b batch) Done(_ context.Context, ev kernel.Published) error {
	b.o.mu.Lock()
	defer b.o.mu.Unlock()
	for i, e := range b.o.events {
		if e.ID == ev.ID {
			b.o.events = append(b.o.events[:i], b.o.events[i+1:]...)
			b.o.done = append(b.o.done, ev.ID)
		}
	}
	return nil
}
func (b batch) Finish(context.Context) error { return nil }

// TestRetriesWithOneWebhookID: a listener answering 500 twice then 200 gets the event three
// times with one webhook-id, each attempt signed; the deliveries log shows the three attempts.
// The event's data holds ids, state and time only. Only matching subscriptions get it.
func TestRetriesWithOneWebhookID(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	l := &listener{answers: []int{500, 500}}
	srv := httptest.NewServer(l)
	defer srv.Close()
	other := &listener{}
	srv2 := httptest.NewServer(other)
	defer srv2.Close()
	c, err := f.hooks.Create(ctx, t1, admin, event.CreateRequest{URL: srv.URL, Events: []string{event.SessionCompleted}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.hooks.Create(ctx, t1, admin, event.CreateRequest{URL: srv2.URL, Events: []string{event.BatchCompleted}}); err != nil {
		t.Fatal(err)
	}
	f.clk.Add(time.Second)
	src := &outboxOf{events: []kernel.Published{{ID: "evt_1", Type: event.SessionCompleted, TenantID: t1, Object: "session",
		AggregateID: "g-1", Slot: kernel.NoSlot, State: "complete", At: f.clk.Now()}}}
	fan := &event.Fanout{Source: src, Store: f.store, Queue: f.store, Now: f.clk.Now}
	if n, err := fan.Run(ctx, 10); err != nil || n != 1 {
		t.Fatalf("fan-out: %d %v", n, err)
	}
	for i := 0; i < 3; i++ {
		if n, err := f.send.Sends(ctx, 10); err != nil || n != 1 {
			t.Fatalf("send %d: %d %v", i, n, err)
		}
		if n, _ := f.send.Sends(ctx, 10); n != 0 && i < 2 {
			t.Fatalf("attempt %d due again before its back-off", i+2)
		}
		f.clk.Add(event.Backoff(i+1) + time.Second)
	}
	if n, _ := f.send.Sends(ctx, 10); n != 0 {
		t.Fatalf("%d attempts after the delivered one", n)
	}
	got := l.received()
	if len(got) != 3 || len(other.received()) != 0 {
		t.Fatalf("received %d (other %d), want 3 (0)", len(got), len(other.received()))
	}
	for _, r := range got {
		if r.h.Get(webhook.HeaderID) != "evt_1" {
			t.Fatalf("webhook-id %q", r.h.Get(webhook.HeaderID))
		}
		sec, _ := strconv.ParseInt(r.h.Get(webhook.HeaderTimestamp), 10, 64)
		if _, err := webhook.VerifyStandard([]string{c.Secret}, r.h, r.body, time.Unix(sec, 0)); err != nil {
			t.Fatal(err)
		}
	}
	var body map[string]any
	if err := json.Unmarshal(got[0].body, &body); err != nil {
		t.Fatal(err)
	}
	data, _ := body["data"].(map[string]any)
	if body["id"] != "evt_1" || body["type"] != "session.completed" || body["tenantId"] != t1 || data["id"] != "g-1" ||
		data["state"] != "complete" || data["object"] != "session" || len(data) != 4 {
		t.Fatalf("body %s", got[0].body)
	}
	page, err := f.hooks.Deliveries(ctx, t1, c.Sub.ID, "", 10)
	if err != nil || len(page.Items) != 3 {
		t.Fatalf("log: %+v %v", page, err)
	}
	want := []string{event.OutcomeDelivered, event.OutcomeRetrying, event.OutcomeRetrying}
	for i, a := range page.Items {
		if a.EventID != "evt_1" || a.Outcome != want[i] || a.Attempt != 3-i {
			t.Fatalf("log item %d: %+v", i, a)
		}
	}
	// A fan-out run again (killed before it removed its row) sends nothing twice: the
	// delivery is done and the pending row gone, a re-enqueue of a done event is a new one
	// only if the outbox still held it, which it does not.
	if n, _ := fan.Run(ctx, 10); n != 0 {
		t.Fatalf("fan-out again: %d", n)
	}
}

// TestFailingSubscriptionDisabled: an event retried for 24 h is given up; a subscription failing
// for 3 days is disabled with its reason, and gets nothing more.
func TestFailingSubscriptionDisabled(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	l := &listener{answers: make([]int, 1000)}
	for i := range l.answers {
		l.answers[i] = 503
	}
	srv := httptest.NewServer(l)
	defer srv.Close()
	c, err := f.hooks.Create(ctx, t1, admin, event.CreateRequest{URL: srv.URL, Events: []string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	src := &outboxOf{}
	fan := &event.Fanout{Source: src, Store: f.store, Queue: f.store, Now: f.clk.Now}
	for day := 0; day < 4; day++ {
		f.clk.Add(time.Second)
		src.mu.Lock()
		src.events = []kernel.Published{{ID: "evt_d" + string(rune('0'+day)), Type: event.SlotSigned, TenantID: t1, Object: "session",
			AggregateID: "g", Slot: 0, At: f.clk.Now()}}
		src.mu.Unlock()
		if _, err := fan.Run(ctx, 10); err != nil {
			t.Fatal(err)
		}
		for step := 0; step < 30; step++ {
			if _, err := f.send.Sends(ctx, 10); err != nil {
				t.Fatal(err)
			}
			f.clk.Add(time.Hour)
		}
	}
	s, err := f.store.Load(ctx, t1, c.Sub.ID)
	if err != nil {
		t.Fatal(err)
	}
	if s.State != event.StateDisabled || !strings.Contains(s.DisabledReason, "status 503") {
		all, _ := f.hooks.Deliveries(ctx, t1, c.Sub.ID, "", event.MaxPage)
		for _, a := range all.Items {
			t.Logf("%+v", a)
		}
		t.Fatalf("after 4 days of failures: %s %q", s.State, s.DisabledReason)
	}
	n := len(l.received())
	page, _ := f.hooks.Deliveries(ctx, t1, c.Sub.ID, "", 1)
	if page.Items[0].Outcome != event.OutcomeDisabled {
		t.Fatalf("last attempt %+v", page.Items[0])
	}
	// The first event's attempts stopped within 24 h of its first.
	all, _ := f.hooks.Deliveries(ctx, t1, c.Sub.ID, "", event.MaxPage)
	var last time.Time
	var first time.Time
	for _, a := range all.Items {
		if a.EventID == "evt_d0" {
			if last.IsZero() {
				last = a.At
			}
			first = a.At
		}
	}
	if d := last.Sub(first); d > event.RetryFor+4*time.Hour || d < event.RetryFor-4*time.Hour {
		t.Fatalf("the first event was retried for %s", d)
	}
	src.mu.Lock()
	src.events = []kernel.Published{{ID: "evt_after", Type: event.SlotSigned, TenantID: t1, Object: "session", AggregateID: "g", Slot: 0, At: f.clk.Now()}}
	src.mu.Unlock()
	f.clk.Add(time.Second)
	_, _ = fan.Run(ctx, 10)
	_, _ = f.send.Sends(ctx, 10)
	if len(l.received()) != n {
		t.Fatal("a disabled subscription was sent to")
	}
	if _, err := f.hooks.Ping(ctx, t1, c.Sub.ID); !errors.Is(err, event.ErrDisabled) {
		t.Fatalf("ping on disabled: %v", err)
	}
}

// TestSlowReceiverHoldsOnlyItsOwn: while other subscriptions' receivers hold their requests, a
// subscription of the same run gets its event.
func TestSlowReceiverHoldsOnlyItsOwn(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer slow.Close()
	defer close(release)
	fast := &listener{}
	srv := httptest.NewServer(fast)
	defer srv.Close()
	// six held receivers before or after the fast one in the schedule's order
	for _, u := range []string{slow.URL, slow.URL, slow.URL, srv.URL, slow.URL, slow.URL, slow.URL} {
		if _, err := f.hooks.Create(ctx, t1, admin, event.CreateRequest{URL: u, Events: []string{"*"}}); err != nil {
			t.Fatal(err)
		}
	}
	f.clk.Add(time.Second)
	src := &outboxOf{events: []kernel.Published{{ID: "evt_s", Type: event.SlotSigned, TenantID: t1, Object: "session", AggregateID: "g", Slot: 0, At: f.clk.Now()}}}
	if _, err := (&event.Fanout{Source: src, Store: f.store, Queue: f.store, Now: f.clk.Now}).Run(ctx, 10); err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = f.send.Sends(ctx, 10) }()
	for end := time.Now().Add(10 * time.Second); len(fast.received()) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the other subscription waited for the slow receiver")
		}
	}
}
