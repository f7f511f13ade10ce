package expiry

import (
	"context"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apptest"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/delivery/deliverystore"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/event"
	"github.com/esign-svc/esign/shared/kernel/aggstore"
)

func createDelivery(t *testing.T, e *apptest.Env, st *deliverystore.Store, ttl time.Duration) *delivery.Session {
	t.Helper()
	s := &delivery.Session{DeliveryID: apptest.Hex(16), TenantID: "t-dx", CreatedBy: "oid", CorrelationID: apptest.Hex(4),
		DocumentName: "a.pdf", PDFBlobPath: "documents/a.pdf", Mode: delivery.ModeSecureEmail, RecipientHash: "h",
		ExpiresAt: e.Now().Add(ttl)}
	ch := delivery.Start(s, e.Now())
	ch.By(delivery.Actor{Kind: "initiator", ID: "oid"})
	if err := st.Create(context.Background(), s, ch); err != nil {
		t.Fatal(err)
	}
	return s
}

// expiredEvents counts the delivery.expired audit events of delivery id (each stamped by the
// job) and its delivery.expired outbox rows (distinct event ids).
func expiredEvents(t *testing.T, st *deliverystore.Store, box *aggstore.Outbox, id string) (audit, outbox int) {
	t.Helper()
	ctx := context.Background()
	evs, err := st.Events(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if ev.Kind == delivery.EvExpired {
			audit++
			if ev.ActorKind != "system" || ev.ActorID != "expiry" {
				t.Errorf("delivery.expired by %s/%s", ev.ActorKind, ev.ActorID)
			}
		}
	}
	due, err := box.Due(ctx, time.Now().Add(48*time.Hour), 1000)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, b := range due {
		for _, ev := range b.Events() {
			if ev.AggregateID != id || ev.Type != event.DeliveryExpired || seen[ev.ID] {
				continue
			}
			seen[ev.ID] = true
			if ev.Object != "delivery" || ev.TenantID != "t-dx" || ev.State != string(delivery.StateExpired) {
				t.Errorf("outbox row %+v", ev)
			}
			outbox++
		}
	}
	return audit, outbox
}

// TestRunExpiresDueDeliveriesOnce (issue 27): with the clock moved past their expiry, the
// expiry timer records exactly one delivery.expired audit event and outbox row for a live
// delivery (a downloaded one too), none before the expiry, none for a revoked delivery, and
// none again on the next run.
func TestRunExpiresDueDeliveriesOnce(t *testing.T) {
	t.Parallel()
	ctx, e := context.Background(), apptest.New(t)
	st := e.Deliveries()
	box, err := aggstore.OpenOutbox(azuritetest.Account(t), aggstore.TableOutbox)
	if err != nil {
		t.Fatal(err)
	}
	live := createDelivery(t, e, st, time.Hour)
	downloaded := createDelivery(t, e, st, time.Hour)
	if _, _, err := st.Update(ctx, downloaded.DeliveryID, func(s *delivery.Session) (delivery.Change, error) {
		return delivery.Download(s, e.Now())
	}); err != nil {
		t.Fatal(err)
	}
	revoked := createDelivery(t, e, st, time.Hour)
	if _, _, err := st.Update(ctx, revoked.DeliveryID, func(s *delivery.Session) (delivery.Change, error) {
		return delivery.Revoke(s, e.Now()), nil
	}); err != nil {
		t.Fatal(err)
	}
	job, err := New(Deps{Sessions: &esign.SessionJobs{Store: e.Sessions()}, Deliveries: &delivery.Expiries{Schedule: st.Expiries(), Store: st}, Intakes: intakes(t), Now: e.Now})
	if err != nil {
		t.Fatal(err)
	}

	e.Clock.Add(59 * time.Minute)
	if n, err := job.Run(ctx); n != (Counts{}) || err != nil {
		t.Fatalf("run before expiry = %+v, %v", n, err)
	}
	for _, s := range []*delivery.Session{live, downloaded, revoked} {
		if a, o := expiredEvents(t, st, box, s.DeliveryID); a != 0 || o != 0 {
			t.Fatalf("before expiry: %d audit events, %d outbox rows", a, o)
		}
	}

	e.Clock.Add(2 * time.Minute)
	if n, err := job.Run(ctx); n != (Counts{Deliveries: 2}) || err != nil {
		t.Fatalf("run past expiry = %+v, %v; want 2 deliveries", n, err)
	}
	e.Clock.Add(time.Hour)
	if n, err := job.Run(ctx); n != (Counts{}) || err != nil {
		t.Fatalf("second run = %+v, %v", n, err)
	}
	for _, s := range []*delivery.Session{live, downloaded} {
		if a, o := expiredEvents(t, st, box, s.DeliveryID); a != 1 || o != 1 {
			t.Fatalf("past expiry: %d audit events, %d outbox rows; want 1 and 1", a, o)
		}
		if got, _ := st.Load(ctx, s.DeliveryID); got.State != delivery.StateExpired {
			t.Fatalf("stored state %s", got.State)
		}
	}
	if a, o := expiredEvents(t, st, box, revoked.DeliveryID); a != 0 || o != 0 {
		t.Fatalf("revoked: %d audit events, %d outbox rows", a, o)
	}
	if got, _ := st.Load(ctx, revoked.DeliveryID); got.State != delivery.StateRevoked {
		t.Fatalf("revoked delivery stored %s", got.State)
	}
}

// TestRunReschedulesAnEarlyEntryAndForgetsAGoneDelivery: a due entry of a delivery not yet at
// its expiry puts it back at its expiry (it expires then, once), and an entry of a delivery
// that is not stored is forgotten without an error.
func TestRunReschedulesAnEarlyEntryAndForgetsAGoneDelivery(t *testing.T) {
	t.Parallel()
	ctx, e := context.Background(), apptest.New(t)
	st := e.Deliveries()
	s := createDelivery(t, e, st, 2*time.Hour)
	if err := st.Expiries().Add(ctx, s.DeliveryID, e.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := st.Expiries().Add(ctx, "gone-"+apptest.Hex(8), e.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	job, err := New(Deps{Sessions: &esign.SessionJobs{Store: e.Sessions()}, Deliveries: &delivery.Expiries{Schedule: st.Expiries(), Store: st}, Intakes: intakes(t), Now: e.Now})
	if err != nil {
		t.Fatal(err)
	}
	e.Clock.Add(time.Hour)
	if n, err := job.Run(ctx); n != (Counts{}) || err != nil {
		t.Fatalf("run at +1h = %+v, %v", n, err)
	}
	if due, err := st.Expiries().Due(ctx, e.Now(), 10); err != nil || len(due) != 0 {
		t.Fatalf("due after the run at +1h: %v, %v", due, err)
	}
	e.Clock.Add(time.Hour)
	if n, err := job.Run(ctx); n != (Counts{Deliveries: 1}) || err != nil {
		t.Fatalf("run at +2h = %+v, %v", n, err)
	}
	if due, err := st.Expiries().Due(ctx, e.Now().Add(24*time.Hour), 10); err != nil || len(due) != 0 {
		t.Fatalf("due after the delivery expired: %v, %v", due, err)
	}
}
