package sessionstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/esign"
)

func TestNotificationClaims(t *testing.T) {
	t.Parallel()
	ctx, st := context.Background(), newStore(t)
	now := time.Now().UTC()
	s, slots := newSession("t1", "N1", now, 2)
	create(t, st, s, slots, now)
	lease := time.Minute

	c, err := st.ClaimNotification(ctx, s.GroupID, "m1", now, lease)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.ClaimNotification(ctx, s.GroupID, "m1", now.Add(time.Second), lease); !errors.Is(err, ErrInFlight) {
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
	if err := st.CompleteNotification(ctx, c, slots, []esign.Event{ev}, now); !errors.Is(err, ErrInFlight) {
		t.Fatalf("completion of a lost claim: %v, want ErrInFlight", err)
	}
	if err := st.CompleteNotification(ctx, taken, slots, []esign.Event{ev}, now); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ClaimNotification(ctx, s.GroupID, "m1", now.Add(time.Hour), lease); !errors.Is(err, ErrAlreadySent) {
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

func TestAppendEvents(t *testing.T) {
	t.Parallel()
	ctx, st := context.Background(), newStore(t)
	now := time.Now().UTC()
	s, slots := newSession("t1", "N2", now, 1)
	create(t, st, s, slots, now)
	before, _, _ := st.Load(ctx, s.GroupID)
	err := st.AppendEvents(ctx, s.GroupID, slots, []esign.Event{
		{Kind: "notification.failed", Slot: 0, At: now.Add(time.Second), Actor: esign.Actor{Kind: "system", ID: "notify"}},
		{Kind: "notification.failed", Slot: -1, At: now.Add(time.Second)},
	})
	if err != nil {
		t.Fatal(err)
	}
	evs, _ := st.Events(ctx, s.GroupID)
	last := evs[len(evs)-2:]
	if last[0].Kind != "notification.failed" || last[0].EmailHash != "h0" || last[1].EmailHash != "" || last[1].Slot != -1 {
		t.Fatalf("events %+v", last)
	}
	after, _, _ := st.Load(ctx, s.GroupID)
	if after.ETag != before.ETag {
		t.Fatal("appending events changed the session row")
	}
}
