package expiry

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apptest"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/esign/sessionstore"
	"github.com/esign-svc/esign/shared/tokens"
)

func TestMain(m *testing.M) { azuritetest.Main(m) }

func newStore(t *testing.T) *sessionstore.Store { return apptest.New(t).Sessions() }

// deliveries is the delivery expiry use case on a fresh delivery store of the test's own.
func deliveries(t *testing.T) *delivery.Expiries {
	st := apptest.New(t).Deliveries()
	return &delivery.Expiries{Schedule: st.Expiries(), Store: st}
}

func create(t *testing.T, st *sessionstore.Store, now time.Time, ttl time.Duration, mutate func(*esign.Session, []esign.Slot)) *esign.Session {
	t.Helper()
	s := &esign.Session{GroupID: apptest.Hex(16), TenantID: "t1", CorrelationID: apptest.Hex(4), DocumentID: "D", DocType: "t",
		PDFBlobPath: "documents/a.pdf", PDFHash: "sha256:00", SigningMode: esign.ModeParallel, State: esign.SessionPending,
		CreatedAt: now, ExpiresAt: now.Add(ttl)}
	slots := make([]esign.Slot, 2)
	for i := range slots {
		slots[i] = esign.Slot{Index: i, SessionID: apptest.Hex(16), Role: "r", EmailHash: "h" + strconv.Itoa(i), Condition: esign.Required, OTPChannel: esign.OTPNone}
	}
	ch := esign.Start(s, slots, now)
	if mutate != nil {
		mutate(s, slots)
	}
	if err := st.Create(context.Background(), s, slots, ch, now); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestRunExpiresDueSessionsOnly(t *testing.T) {
	t.Parallel()
	ctx, st := context.Background(), newStore(t)
	start := time.Now().UTC()
	due := create(t, st, start, time.Minute, func(_ *esign.Session, sl []esign.Slot) {
		sl[1].State, sl[1].Timeline[esign.SlotSigned] = esign.SlotSigned, sl[1].Timeline[esign.SlotPending]
	})
	notDue := create(t, st, start, time.Hour, nil)
	// Ended otherwise: its expiry row is still there (as after a failed best-effort delete).
	ended := create(t, st, start, time.Minute, func(s *esign.Session, _ []esign.Slot) { s.State = esign.SessionComplete })

	later := start.Add(2 * time.Minute)
	job, err := New(Deps{Sessions: &esign.SessionJobs{Store: st}, Deliveries: deliveries(t), Intakes: intakes(t), Now: func() time.Time { return later }})
	if err != nil {
		t.Fatal(err)
	}
	n, err := job.Run(ctx)
	if err != nil || n != (Counts{Sessions: 1}) {
		t.Fatalf("Run = %+v, %v; want 1 expired", n, err)
	}
	sess, slots, err := st.Load(ctx, due.GroupID)
	if err != nil {
		t.Fatal(err)
	}
	if sess.State != esign.SessionExpired || slots[0].State != esign.SlotExpired || slots[1].State != esign.SlotSigned {
		t.Fatalf("after expiry: session %s, slots %s %s", sess.State, slots[0].State, slots[1].State)
	}
	evs, err := st.Events(ctx, due.GroupID)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, ev := range evs[len(evs)-2:] {
		kinds = append(kinds, ev.Kind)
		if ev.ActorKind != "system" || ev.ActorID != "expiry" {
			t.Errorf("event %s actor %s/%s", ev.Kind, ev.ActorKind, ev.ActorID)
		}
	}
	if kinds[0] != esign.EvSlotExpired || kinds[1] != esign.EvSessionExpired {
		t.Fatalf("last events %v", kinds)
	}
	if s, _, _ := st.Load(ctx, notDue.GroupID); s.State != esign.SessionPending {
		t.Fatalf("a session not yet due became %s", s.State)
	}
	if s, _, _ := st.Load(ctx, ended.GroupID); s.State != esign.SessionComplete {
		t.Fatalf("an ended session became %s", s.State)
	}
	// Both due expiry rows are gone: the next run finds nothing.
	left, err := st.DueForExpiry(ctx, later, 10)
	if err != nil || len(left) != 0 {
		t.Fatalf("due after run: %v %v", left, err)
	}
	if n, err := job.Run(ctx); n != (Counts{}) || err != nil {
		t.Fatalf("second run = %+v, %v", n, err)
	}
	// The session not yet due expires once its time comes.
	job.now = func() time.Time { return start.Add(2 * time.Hour) }
	if n, err := job.Run(ctx); n != (Counts{Sessions: 1}) || err != nil {
		t.Fatalf("run at +2h = %+v, %v", n, err)
	}
}

func TestRunSweepsLapsedTransferTokens(t *testing.T) {
	t.Parallel()
	ctx, st := context.Background(), newStore(t)
	now := time.Now().UTC()
	s := create(t, st, now.Add(-time.Hour), 2*time.Hour, nil)
	_, hash, err := tokens.NewOpaque()
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = st.Update(ctx, s.GroupID, func(s *esign.Session, slots []esign.Slot) (esign.Change, esign.Extras, error) {
		ch, err := esign.Activate(s, slots, 0, now.Add(-30*time.Minute), nil)
		if err != nil {
			return ch, esign.Extras{}, err
		}
		c2, tr, err := esign.CreateTransfer(s, slots, 0, now.Add(-20*time.Minute), hash)
		if err != nil {
			return ch, esign.Extras{}, err
		}
		ch.Events = append(ch.Events, c2.Events...)
		if err := st.IndexTransfer(ctx, s.GroupID, tr); err != nil {
			return ch, esign.Extras{}, err
		}
		return ch, esign.Extras{NewTransfer: &tr}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	job, err := New(Deps{Sessions: &esign.SessionJobs{Store: st}, Deliveries: deliveries(t), Intakes: intakes(t), Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := job.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := st.TransferGroup(ctx, hash); err == nil {
		t.Fatal("the lapsed transfer token is still indexed")
	}
	if _, err := st.Transfer(ctx, s.GroupID, hash); err == nil {
		t.Fatal("the lapsed transfer token is still in the session")
	}
}
