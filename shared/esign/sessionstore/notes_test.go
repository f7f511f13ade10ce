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

	c, err := st.ClaimNotification(ctx, s.GroupID, "m1", now, lease)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.ClaimNotification(ctx, s.GroupID, "m1", now.Add(time.Second), lease); !errors.Is(err, sessionstore.ErrInFlight) {
		t.Fatalf("second claim within the lease: %v, want ErrInFlight", err)
	}
	// Released after a failed send: claimable again.
	if err := st.ReleaseNotification(ctx, c); err != nil {
		t.Fatal(err)
	}
	c, err = st.ClaimNotification(ctx, s.GroupID, "m1", now, lease)
	if err != nil {
		t.Fatal(err)
	}
	// A claim older than the lease is taken over; the first holder's completion then loses.
	taken, err := st.ClaimNotification(ctx, s.GroupID, "m1", now.Add(2*lease), lease)
	if err != nil {
		t.Fatalf("stale claim not taken over: %v", err)
	}
	ev := esign.Event{Kind: "notification.sent", Slot: 1, At: now, Actor: esign.Actor{Kind: "system", ID: "notify"}, Data: map[string]any{"kind": "invitation"}}
	if err := st.CompleteNotification(ctx, c, slots, []esign.Event{ev}, now); !errors.Is(err, sessionstore.ErrInFlight) {
		t.Fatalf("completion of a lost claim: %v, want ErrInFlight", err)
	}
	if err := st.CompleteNotification(ctx, taken, slots, []esign.Event{ev}, now); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ClaimNotification(ctx, s.GroupID, "m1", now.Add(time.Hour), lease); !errors.Is(err, sessionstore.ErrAlreadySent) {
		t.Fatalf("claim after sending: %v, want ErrAlreadySent", err)
	}
	// Another notification id is independent.
	if _, err := st.ClaimNotification(ctx, s.GroupID, "m2", now, lease); err != nil {
		t.Fatal(err)
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
