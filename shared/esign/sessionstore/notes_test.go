package sessionstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/esign/sessionstore"
	"github.com/esign-svc/esign/shared/esign/sessionstore/storetest"
)

func TestNotificationClaims(t *testing.T) {
	t.Parallel()
	ctx, st := context.Background(), storetest.New(t)
	now := time.Now().UTC()
	s, slots := newSession("t1", "N1", now, 2)
	create(t, st, s, slots, now)
	lease := time.Minute

	ev := esign.Event{Kind: "notification.sent", Slot: 1, At: now, Actor: esign.Actor{Kind: "system", ID: "notify"}, Data: map[string]any{"kind": "invitation"}}
	a := esign.Aggregate{Session: s, Slots: slots}
	sends := func() ([]esign.Event, error) { return []esign.Event{ev}, nil }
	unsent := func() ([]esign.Event, error) { t.Error("a second sender sent"); return nil, nil }
	refused := errors.New("provider refused")
	// A claim is held while its send runs; a failed send gives it back.
	err := st.SendNotice(ctx, a, "m1", now, lease, func() ([]esign.Event, error) {
		if err := st.SendNotice(ctx, a, "m1", now.Add(time.Second), lease, unsent); !errors.Is(err, sessionstore.ErrInFlight) {
			t.Errorf("second claim within the lease: %v, want ErrInFlight", err)
		}
		return nil, refused
	})
	if !errors.Is(err, refused) {
		t.Fatalf("failed send: %v", err)
	}
	// Released after a failed send: claimable again. A claim older than the lease is taken
	// over (while its holder still sends); the first holder's completion then loses.
	err = st.SendNotice(ctx, a, "m1", now, lease, func() ([]esign.Event, error) {
		if err := st.SendNotice(ctx, a, "m1", now.Add(2*lease), lease, sends); err != nil {
			t.Fatalf("stale claim not taken over: %v", err)
		}
		return []esign.Event{ev}, nil
	})
	if !errors.Is(err, sessionstore.ErrInFlight) {
		t.Fatalf("completion of a lost claim: %v, want ErrInFlight", err)
	}
	if err := st.SendNotice(ctx, a, "m1", now.Add(time.Hour), lease, unsent); !errors.Is(err, sessionstore.ErrAlreadySent) {
		t.Fatalf("claim after sending: %v, want ErrAlreadySent", err)
	}
	if sent, err := st.NoticeSent(ctx, s.GroupID, "m1"); err != nil || !sent {
		t.Fatalf("NoticeSent = %v, %v", sent, err)
	}
	// Another notification id is independent.
	ran := false
	if err := st.SendNotice(ctx, a, "m2", now, lease, func() ([]esign.Event, error) { ran = true; return nil, refused }); !errors.Is(err, refused) || !ran {
		t.Fatalf("another id: %v, sent %v", err, ran)
	}
	evs, err := st.Events(ctx, s.GroupID)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range evs {
		if e.Kind == "notification.sent" {
			n++
			if e.EmailHash != "h1" || e.Data["kind"] != "invitation" {
				t.Fatalf("event %+v", e)
			}
		}
	}
	if n != 1 {
		t.Fatalf("%d notification.sent events, want 1", n)
	}
	// Claim rows are not slots: Load still sees two.
	if _, sl, err := st.Load(ctx, s.GroupID); err != nil || len(sl) != 2 {
		t.Fatalf("load: %d slots, %v", len(sl), err)
	}
}
