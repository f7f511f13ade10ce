package aggstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"sync"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/audit"
	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/azure/tablestore"
	"github.com/esign-svc/esign/shared/kernel"
)

// The event outbox (DESIGN 17). A Kind with Publish writes, for each audit event of a change
// that maps to an integrator event type, an outbox row in the aggregate's partition in the same
// transaction as the change; before that transaction it adds an entry to the outbox schedule
// (a sharded time index in TableOutbox) naming the table and partition. A timer (Outbox.Due)
// reads the due entries, their partitions' outbox rows, and after the rows were fanned out
// removes them; then an entry older than OutboxSettle is removed, and a younger one is moved to
// a recheck entry due OutboxSettle after it, read once more and then removed. So an entry
// whose transaction was still under way when it was first read is read again (no outbox row
// is ever left without an entry that finds it), and the entries a run has done are not due
// again before they settle (they never crowd out new ones).
const (
	// TableOutbox is the index table of the outbox schedule.
	TableOutbox = "eventoutbox"
	// OutboxSettle bounds how long a change's transaction may take after its outbox entry was
	// written.
	OutboxSettle = time.Minute
	prefixOutbox = "out-"
	scheduleOut  = "events"
)

// outbox is a table's writer of outbox entries.
type outbox struct {
	table string
	x     *Index
	sched *Schedule
}

func openOutbox(acct *azconn.Account, outboxTable, table string) (*outbox, error) {
	if outboxTable == "" {
		outboxTable = TableOutbox
	}
	x, err := NewIndex(acct, outboxTable)
	if err != nil {
		return nil, err
	}
	return &outbox{table: table, x: x, sched: NewSchedule(x, scheduleOut)}, nil
}

func (o *outbox) ensure(ctx context.Context) error {
	if err := o.x.Ensure(ctx); err != nil {
		return err
	}
	return o.sched.Start(ctx, time.Now())
}

func entryID(table, partition string) string { return table + "|" + partition }

// recheck marks the ID of an entry moved by Finish.
const recheck = "|recheck"

// partitionOf reads an entry's ID: its table and partition, and whether it is a recheck.
func partitionOf(id string) (table, partition string, again, ok bool) {
	rest, again := strings.CutSuffix(id, recheck)
	table, partition, ok = strings.Cut(rest, "|")
	return table, partition, again, ok && table != "" && partition != ""
}

// eventID is an outbox row's event id: derived from the table, partition and audit row, the
// same on every delivery attempt.
func eventID(table, partition, auditKey string) string {
	h := sha256.Sum256([]byte(table + "\x00" + partition + "\x00" + auditKey))
	return "evt_" + hex.EncodeToString(h[:16])
}

// outboxOps are the outbox rows of the published events among evs (whose audit rows are
// auditOps, in the same order), and the time of the first: zero when none publishes.
func (t *Table[A]) outboxOps(a A, evs []kernel.Event, auditOps []tablestore.Op) ([]tablestore.Op, time.Time) {
	k := t.kind
	if k.Publish == nil || k.Tenant == nil || t.out == nil {
		return nil, time.Time{}
	}
	tenant := k.Tenant(a)
	if tenant == "" {
		return nil, time.Time{} // a partial aggregate (an event-only record): nothing to say
	}
	state := ""
	if k.State != nil {
		state = k.State(a)
	}
	var ops []tablestore.Op
	var first time.Time
	id := k.ID(a)
	for i, ev := range evs {
		typ, ok := k.Publish(ev.Kind)
		if !ok {
			continue
		}
		akey := auditOps[i].Entity.RowKey
		ops = append(ops, tablestore.InsertOp(tablestore.Entity{PartitionKey: id,
			RowKey: prefixOutbox + strings.TrimPrefix(akey, audit.RowPrefix), Props: map[string]any{
				"eventId": eventID(t.out.table, id, akey), "type": typ, "tenantId": tenant, "object": k.Object,
				"aggregateId": id, "slot": int64(ev.Slot), "state": state, "atNs": ev.At.UnixNano()}}))
		if first.IsZero() {
			first = ev.At
		}
	}
	return ops, first
}

// Outbox reads the outbox entries of every table (the processor's fan-out timer). Safe for
// concurrent use.
type Outbox struct {
	acct   *azconn.Account
	x      *Index
	sched  *Schedule
	mu     sync.Mutex
	tables map[string]*tablestore.Store
}

// OpenOutbox opens the outbox schedule in table name (TableOutbox; no I/O, Ensure creates it).
func OpenOutbox(acct *azconn.Account, name string) (*Outbox, error) {
	x, err := NewIndex(acct, name)
	if err != nil {
		return nil, err
	}
	return &Outbox{acct: acct, x: x, sched: NewSchedule(x, scheduleOut), tables: map[string]*tablestore.Store{}}, nil
}

// Ensure creates the schedule's table and watermark when missing.
func (o *Outbox) Ensure(ctx context.Context) error {
	if err := o.x.Ensure(ctx); err != nil {
		return err
	}
	return o.sched.Start(ctx, time.Now())
}

func (o *Outbox) table(name string) (*tablestore.Store, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if t, ok := o.tables[name]; ok {
		return t, nil
	}
	t, err := tablestore.New(o.acct, name)
	if err != nil {
		return nil, err
	}
	o.tables[name] = t
	return t, nil
}

// OutboxBatch is one due entry: the unsent events of one aggregate.
type OutboxBatch struct {
	o      *Outbox
	item   Item
	t      *tablestore.Store
	events []kernel.Published
	keys   []string
	now    time.Time
	again  bool // a recheck entry
	// partition is the aggregate's.
	partition string
}

// Events are the batch's events in the order they happened.
func (b *OutboxBatch) Events() []kernel.Published { return b.events }

// Done removes an event's outbox row (once it was fanned out).
func (b *OutboxBatch) Done(ctx context.Context, ev kernel.Published) error {
	for i, e := range b.events {
		if e.ID == ev.ID {
			err := b.t.Delete(ctx, b.partition, b.keys[i], "")
			if apperr.KindOf(err) == apperr.KindNotFound {
				return nil
			}
			return err
		}
	}
	return nil
}

// Finish removes the entry once it is settled (older than OutboxSettle, or a recheck); a
// younger one is first moved to a recheck due when it settles.
func (b *OutboxBatch) Finish(ctx context.Context) error {
	if !b.again && b.now.Sub(b.item.At) < OutboxSettle {
		if err := b.o.sched.Add(ctx, b.item.ID+recheck, b.item.At.Add(OutboxSettle)); err != nil {
			return err
		}
	}
	return b.o.sched.Remove(ctx, b.item.ID, b.item.At)
}

// Due reads up to limit due entries and each one's outbox rows. An entry naming no table of
// this account's is removed. Errors: the tablestore ones.
func (o *Outbox) Due(ctx context.Context, now time.Time, limit int) ([]*OutboxBatch, error) {
	items, err := o.sched.Due(ctx, now, limit)
	if err != nil {
		return nil, err
	}
	out := make([]*OutboxBatch, 0, len(items))
	for _, it := range items {
		table, partition, again, ok := partitionOf(it.ID)
		if !ok {
			if err := o.sched.Remove(ctx, it.ID, it.At); err != nil {
				return nil, err
			}
			continue
		}
		t, err := o.table(table)
		if err != nil {
			if err := o.sched.Remove(ctx, it.ID, it.At); err != nil {
				return nil, err
			}
			continue
		}
		rows, err := t.Query(ctx, partition, &tablestore.QueryOptions{RowKeyPrefix: prefixOutbox})
		if err != nil {
			return nil, err
		}
		b := &OutboxBatch{o: o, item: it, t: t, now: now, again: again, partition: partition}
		for _, r := range rows {
			b.events = append(b.events, kernel.Published{ID: r.String("eventId"), Type: r.String("type"),
				TenantID: r.String("tenantId"), Object: r.String("object"), AggregateID: r.String("aggregateId"),
				Slot: int(r.Int64("slot")), State: r.String("state"), At: kernel.FromNanos(r.Int64("atNs"))})
			b.keys = append(b.keys, r.RowKey)
		}
		out = append(out, b)
	}
	return out, nil
}
