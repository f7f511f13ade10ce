package aggstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/azure/tablestore"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/kernel/aggstore"
)

func TestMain(m *testing.M) { azuritetest.Main(m) }

// thing is a minimal aggregate.
type thing struct {
	ID, Tenant, State string
	ETag              string
}

var errNoThing = errors.New("no such thing")

func thingKind(outbox string, publish bool) aggstore.Kind[*thing] {
	k := aggstore.Kind[*thing]{Root: "thing", NotFound: errNoThing,
		ID: func(a *thing) string { return a.ID },
		Encode: func(a *thing) (tablestore.Entity, error) {
			return tablestore.Entity{PartitionKey: a.ID, RowKey: "thing", ETag: a.ETag,
				Props: map[string]any{"tenant": a.Tenant, "state": a.State}}, nil
		},
		Decode: func(e tablestore.Entity) (*thing, error) {
			return &thing{ID: e.PartitionKey, Tenant: e.String("tenant"), State: e.String("state"), ETag: e.ETag}, nil
		},
	}
	if publish {
		k.Publish = func(kind string) (string, bool) {
			if kind == "thing.made" {
				return "thing.created", true
			}
			return "", false
		}
		k.Object, k.OutboxTable = "thing", outbox
		k.Tenant = func(a *thing) string { return a.Tenant }
		k.State = func(a *thing) string { return a.State }
	}
	return k
}

func change(at time.Time, kinds ...string) kernel.Change {
	var ch kernel.Change
	for _, k := range kinds {
		ch.Record(k, 2, at, map[string]any{"emailHash": "h"})
	}
	return ch
}

func rows(t *testing.T, tab *aggstore.Table[*thing], id, prefix string) int {
	t.Helper()
	r, err := tab.Rows().Query(context.Background(), id, &tablestore.QueryOptions{RowKeyPrefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	return len(r)
}

// TestOutboxRowInTheChangesTransaction: a change whose audit event maps to an event type writes
// one outbox row with it (not for the unmapped one), which the outbox finds due with ids,
// state, slot and time only; Done and Finish (after the settle time) remove row and entry. A
// table without Publish writes no outbox row (unchanged behaviour), and a change that loses
// its race leaves an entry but no row, which the outbox drops.
func TestOutboxRowInTheChangesTransaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	acct := azuritetest.Account(t)
	outName := azuritetest.Name("out")
	tab, err := aggstore.NewTable(acct, azuritetest.Name("things"), thingKind(outName, true))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := aggstore.NewTable(acct, azuritetest.Name("plain"), thingKind(outName, false))
	if err != nil {
		t.Fatal(err)
	}
	box, err := aggstore.OpenOutbox(acct, outName)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now().UTC().Add(-time.Second)
	for _, e := range []interface{ Ensure(context.Context) error }{tab, plain, box} {
		if err := e.Ensure(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := plain.Create(ctx, &thing{ID: "p1", Tenant: "t1", State: "new"}, change(at, "thing.made")); err != nil {
		t.Fatal(err)
	}
	if n := rows(t, plain, "p1", "out-"); n != 0 {
		t.Fatalf("a table without Publish wrote %d outbox rows", n)
	}
	if err := tab.Create(ctx, &thing{ID: "a1", Tenant: "t1", State: "new"}, change(at, "thing.noise", "thing.made")); err != nil {
		t.Fatal(err)
	}
	if n := rows(t, tab, "a1", "out-"); n != 1 {
		t.Fatalf("outbox rows %d, want 1", n)
	}
	due, err := box.Due(ctx, time.Now(), 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(due) != 1 || len(due[0].Events()) != 1 {
		t.Fatalf("due %d batches", len(due))
	}
	ev := due[0].Events()[0]
	want := kernel.Published{ID: ev.ID, Type: "thing.created", TenantID: "t1", Object: "thing", AggregateID: "a1", Slot: 2, State: "new", At: at}
	if ev != want || len(ev.ID) != 36 {
		t.Fatalf("event %+v, want %+v", ev, want)
	}
	// A run again before Done sees the same event id (a retried fan-out sends the same id).
	again, _ := box.Due(ctx, time.Now(), 10)
	if len(again) != 1 || again[0].Events()[0].ID != ev.ID {
		t.Fatalf("second read: %+v", again)
	}
	if err := due[0].Done(ctx, ev); err != nil {
		t.Fatal(err)
	}
	if err := due[0].Finish(ctx); err != nil { // young: moved to a recheck when it settles
		t.Fatal(err)
	}
	if d, _ := box.Due(ctx, time.Now(), 10); len(d) != 0 {
		t.Fatalf("a done entry is due again before it settles: %d", len(d))
	}
	late, err := box.Due(ctx, time.Now().Add(aggstore.OutboxSettle+time.Second), 10)
	if err != nil || len(late) != 1 || len(late[0].Events()) != 0 {
		t.Fatalf("the recheck: %v %+v", err, late)
	}
	if err := late[0].Finish(ctx); err != nil {
		t.Fatal(err)
	}
	if d, _ := box.Due(ctx, time.Now().Add(aggstore.OutboxSettle+time.Second), 10); len(d) != 0 {
		t.Fatalf("entry kept after Finish: %d", len(d))
	}

	// A lost race: the stale ETag fails the transaction, no outbox row; the entry goes away.
	cur, err := tab.Load(ctx, "a1")
	if err != nil {
		t.Fatal(err)
	}
	stale := *cur
	if err := tab.Apply(ctx, cur, change(at.Add(time.Millisecond), "thing.made")); err != nil {
		t.Fatal(err)
	}
	if err := tab.Apply(ctx, &stale, change(at.Add(2*time.Millisecond), "thing.made")); !errors.Is(err, aggstore.ErrConcurrent) {
		t.Fatalf("stale apply: %v", err)
	}
	if n := rows(t, tab, "a1", "out-"); n != 1 {
		t.Fatalf("outbox rows after one won and one lost %d, want 1", n)
	}
	// Both entries are read and finished while young; a row that commits after that (a
	// transaction still under way at the first read) is found by the rechecks.
	due, err = box.Due(ctx, time.Now(), 10)
	if err != nil || len(due) != 2 {
		t.Fatalf("due after the race: %v %d", err, len(due))
	}
	for _, b := range due {
		for _, ev := range b.Events() {
			if err := b.Done(ctx, ev); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Finish(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tab.Rows().Insert(ctx, tablestore.Entity{PartitionKey: "a1", RowKey: "out-late", Props: map[string]any{
		"eventId": "evt_late", "type": "thing.created", "tenantId": "t1", "aggregateId": "a1", "slot": int64(-1), "atNs": at.UnixNano()}}); err != nil {
		t.Fatal(err)
	}
	found := 0
	rechecks, err := box.Due(ctx, time.Now().Add(aggstore.OutboxSettle+time.Second), 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range rechecks {
		for _, ev := range b.Events() {
			if ev.ID == "evt_late" {
				found++
			}
		}
	}
	if found == 0 {
		t.Fatal("a row committed after its entry's first read was not found again")
	}
}

// BenchmarkApplyPublishing measures a change's write on Azurite with and without an event it
// publishes (the outbox upsert and row are the difference).
func BenchmarkApplyPublishing(b *testing.B) {
	ctx := context.Background()
	acct := azuritetest.Account(b)
	for _, publish := range []bool{false, true} {
		name := "plain"
		if publish {
			name = "publishing"
		}
		b.Run(name, func(b *testing.B) {
			tab, err := aggstore.NewTable(acct, azuritetest.Name("bench"), thingKind(azuritetest.Name("benchout"), publish))
			if err != nil {
				b.Fatal(err)
			}
			if err := tab.Ensure(ctx); err != nil {
				b.Fatal(err)
			}
			a := &thing{ID: "b1", Tenant: "t1", State: "new"}
			if err := tab.Create(ctx, a, change(time.Now(), "thing.noise")); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, _, err := tab.Update(ctx, "b1", aggstore.Plain(func(a *thing) (kernel.Change, error) {
					return change(time.Now(), "thing.made"), nil
				})); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
