package aggstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/azure/tablestore"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/kernel/aggstore"
)

// counter is the smallest aggregate: a number on its root row.
type counter struct {
	ID   string
	N    int64
	ETag string
}

var errNoCounter = apperr.New(apperr.KindNotFound, "counter_not_found", "no such counter")

func newCounters(t *testing.T) *aggstore.Table[*counter] {
	t.Helper()
	tab, err := aggstore.NewTable(azuritetest.Account(t), azuritetest.Name("once"), aggstore.Kind[*counter]{
		Root: "root", NotFound: errNoCounter,
		ID: func(c *counter) string { return c.ID },
		Encode: func(c *counter) (tablestore.Entity, error) {
			return tablestore.Entity{PartitionKey: c.ID, RowKey: "root", ETag: c.ETag, Props: map[string]any{"n": c.N}}, nil
		},
		Decode: func(e tablestore.Entity) (*counter, error) {
			return &counter{ID: e.PartitionKey, N: e.Int64("n"), ETag: e.ETag}, nil
		},
	})
	tab = azuritetest.Ensured(t, tab, err)
	if err := tab.Create(context.Background(), &counter{ID: "c1"}, kernel.Change{}); err != nil {
		t.Fatal(err)
	}
	return tab
}

func sentEvents(t *testing.T, tab *aggstore.Table[*counter]) int {
	t.Helper()
	evs, err := tab.Events(context.Background(), "c1")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range evs {
		if e.Kind == "counter.notice_sent" {
			n++
		}
	}
	return n
}

// TestSendNotice: the kernel's one notice once. A claim is held while its send runs (a second
// sender finds it in flight); a failed send gives it back; a sent notice is marked with its
// event and answers ErrNoticeSent after; a stale claim is taken over and its holder's record
// then loses (ErrNoticeInFlight, one event in all).
func TestSendNotice(t *testing.T) {
	t.Parallel()
	ctx, tab := context.Background(), newCounters(t)
	a, now, lease := &counter{ID: "c1"}, time.Now().UTC(), time.Minute
	refused := errors.New("provider refused")
	sends := 0
	send := func() ([]kernel.Event, error) {
		sends++
		return []kernel.Event{{Kind: "counter.notice_sent", Slot: kernel.NoSlot, At: now, Actor: kernel.Actor{Kind: "system", ID: "test"}}}, nil
	}
	err := tab.SendNotice(ctx, a, "notice-k", now, lease, func() ([]kernel.Event, error) {
		if err := tab.SendNotice(ctx, a, "notice-k", now.Add(time.Second), lease, send); !errors.Is(err, kernel.ErrNoticeInFlight) {
			t.Errorf("second sender: %v, want ErrNoticeInFlight", err)
		}
		return nil, refused
	})
	if !errors.Is(err, refused) || sends != 0 {
		t.Fatalf("failed send: %v after %d sends", err, sends)
	}
	if err := tab.SendNotice(ctx, a, "notice-k", now, lease, send); err != nil || sends != 1 {
		t.Fatalf("send after the release: %v after %d sends", err, sends)
	}
	if err := tab.SendNotice(ctx, a, "notice-k", now.Add(time.Hour), lease, send); !errors.Is(err, kernel.ErrNoticeSent) || sends != 1 {
		t.Fatalf("send after sending: %v after %d sends, want ErrNoticeSent without sending", err, sends)
	}
	if sent, err := tab.NoticeSent(ctx, "c1", "notice-k"); err != nil || !sent {
		t.Fatalf("NoticeSent = %v, %v", sent, err)
	}
	if sent, err := tab.NoticeSent(ctx, "c1", "notice-other"); err != nil || sent {
		t.Fatalf("NoticeSent of another key = %v, %v", sent, err)
	}
	err = tab.SendNotice(ctx, a, "notice-stale", now, lease, func() ([]kernel.Event, error) {
		if err := tab.SendNotice(ctx, a, "notice-stale", now.Add(2*lease), lease, send); err != nil {
			t.Fatalf("stale claim not taken over: %v", err)
		}
		return send()
	})
	if !errors.Is(err, kernel.ErrNoticeInFlight) {
		t.Fatalf("record under a lost claim: %v, want ErrNoticeInFlight", err)
	}
	if n := sentEvents(t, tab); n != 2 {
		t.Fatalf("%d notice events, want 2 (one per key)", n)
	}
}

// TestSendNoticeUpdate: the variant whose record is a state change stores step's change with
// the claim marked sent in one transaction; a failed send writes nothing and gives the claim
// back; a step error writes nothing; a sent notice answers ErrNoticeSent.
func TestSendNoticeUpdate(t *testing.T) {
	t.Parallel()
	ctx, tab := context.Background(), newCounters(t)
	now, lease := time.Now().UTC(), time.Minute
	bump := aggstore.Plain(func(c *counter) (kernel.Change, error) {
		c.N++
		var ch kernel.Change
		ch.Record("counter.notice_sent", kernel.NoSlot, now, nil)
		return ch, nil
	})
	refused := errors.New("provider refused")
	if _, _, err := tab.SendNoticeUpdate(ctx, "c1", "sent-invite", now, lease, func() (time.Time, error) { return time.Time{}, refused }, bump); !errors.Is(err, refused) {
		t.Fatalf("failed send: %v", err)
	}
	stepErr := errors.New("step refused")
	if _, _, err := tab.SendNoticeUpdate(ctx, "c1", "sent-invite", now, lease, func() (time.Time, error) { return now, nil },
		aggstore.Plain(func(*counter) (kernel.Change, error) { return kernel.Change{}, stepErr })); !errors.Is(err, stepErr) {
		t.Fatalf("step error: %v", err)
	}
	if sent, err := tab.NoticeSent(ctx, "c1", "sent-invite"); err != nil || sent {
		t.Fatalf("after a failed send and a step error: sent %v, %v", sent, err)
	}
	c, ch, err := tab.SendNoticeUpdate(ctx, "c1", "sent-invite", now.Add(2*lease), lease, func() (time.Time, error) { return now, nil }, bump)
	if err != nil || c.N != 1 || len(ch.Events) != 1 {
		t.Fatalf("send: %+v %+v %v", c, ch, err)
	}
	if _, _, err := tab.SendNoticeUpdate(ctx, "c1", "sent-invite", now.Add(time.Hour), lease, func() (time.Time, error) {
		t.Fatal("sent twice")
		return now, nil
	}, bump); !errors.Is(err, kernel.ErrNoticeSent) {
		t.Fatalf("send after sending: %v, want ErrNoticeSent", err)
	}
	if got, err := tab.Load(ctx, "c1"); err != nil || got.N != 1 || sentEvents(t, tab) != 1 {
		t.Fatalf("stored %+v %v", got, err)
	}
}
