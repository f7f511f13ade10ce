// Package aggstore is the storage half of the aggregate kernel (DESIGN 3 and 13): what every
// aggregate's store (signing sessions, deliveries, render documents, dispatch batches and
// workflows) does the same way, so that a new store is its row codec and a few lines.
//
//   - Table: one partition per aggregate. The aggregate is one root row (its children inside
//     it, so a load is ONE point read, whose cost does not grow with the table), its audit rows,
//     and rows the aggregate adds itself (signatures, callback ids). Create and Apply write the
//     root row and the change's audit rows in one entity-group transaction, Apply conditioned on
//     the root row's ETag: the audit trail never misses or invents a transition and of two
//     concurrent changes one wins. Update loads, runs a step and applies, with a bounded retry.
//   - Index: small rows in a second table, each key in a partition of its own (a hash of the
//     key), so that no partition is written by every request: claims of unique keys
//     (correlationId, idempotency keys), member lists (the deliveries of a correlationId), and a
//     sharded time schedule (expiry).
//
// An aggregate with many children (a 10,000-record batch) cannot hold them in its root row (an
// entity is at most 1 MiB) nor change them in one transaction (at most 100 operations): it keeps
// a root row here and its children as rows of their own partition, each child changed on its own
// ETag, with counters on the root row updated under the root's ETag (see docs/storage.md).
package aggstore

import (
	"context"
	"strings"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/audit"
	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/azure/tablestore"
	"github.com/esign-svc/esign/shared/kernel"
)

// MaxAttempts is how often Update runs its step when other requests keep winning the race.
const MaxAttempts = 3

// ErrConcurrent is a lost race: another request changed the aggregate between its load and this
// write; nothing was written.
var ErrConcurrent = &apperr.Error{Kind: apperr.KindConflict, Code: "concurrent_update",
	Detail: "the resource was changed by another request; nothing was written"}

// Kind describes one aggregate type to the kernel: its root row and how to read and write it.
type Kind[A any] struct {
	// Root is the RowKey of the root row ("session").
	Root string
	// OwnRoot, when set, gives each aggregate a root RowKey of its own, Root + "-" + its id,
	// and Root is then the RowKey of the roots written before it was set: Load moves such a
	// root to its own key the first time it reads it. Azure finds a row by its PartitionKey,
	// but Azurite, the local and test storage, finds it by its RowKey first and then scans
	// every row sharing it, so a RowKey every aggregate shares makes each point read and write
	// cost as many rows as the table holds aggregates (issue 26: a document per batch record).
	OwnRoot bool
	// NotFound is the error of a missing aggregate.
	NotFound error
	// ID is the aggregate's id, its PartitionKey.
	ID func(a A) string
	// Encode makes the root row (PartitionKey, RowKey Root, Props) with the ETag it was read
	// with ("" for a new aggregate); with OwnRoot the table sets its RowKey.
	Encode func(a A) (tablestore.Entity, error)
	// Decode reads the aggregate from its root row (ETag included). An error means corrupt data.
	Decode func(e tablestore.Entity) (A, error)
	// Subject is the keyed e-mail hash an audit row of slot carries (nil or "": none).
	Subject func(a A, slot int) string
	// Before, when set, runs before a change is written (by Create, Apply and each attempt of
	// Update): the side entries that must exist before the change does (a follow-up check in a
	// schedule). Its error stops the write.
	Before func(ctx context.Context, a A, ch kernel.Change) error
	// After, when set, runs after a change was written (best effort: cleaning up entries the
	// change made stale, such as an ended aggregate's expiry).
	After func(ctx context.Context, a A, ch kernel.Change)
	// WriteEmpty makes Update write the root row even for an empty change (a step that changed
	// fields no event records); otherwise an empty change without extras writes nothing.
	WriteEmpty bool
	// ExtraConflict maps an insert conflict of one of the caller's extra operations (a callback
	// id seen before, say) to its error; nil or a nil result: ErrConcurrent.
	ExtraConflict func(op tablestore.Op) error
	// Publish, when set, maps an audit kind to the integrator event type it publishes (DESIGN
	// 17, event.Map): each such event of a change gets an outbox row in the same transaction
	// (outbox.go). Unset, or an audit kind it does not map: the table writes as before.
	Publish func(auditKind string) (eventType string, ok bool)
	// Object names the aggregate kind in its events ("session"); Tenant is an aggregate's
	// tenant (an aggregate without one publishes nothing); State, when set, its state after a
	// change. They are read only with Publish.
	Object string
	Tenant func(a A) string
	State  func(a A) string
	// OutboxTable is the outbox schedule's table ("": TableOutbox).
	OutboxTable string
}

// Table keeps aggregates of one kind in one table. Safe for concurrent use.
type Table[A any] struct {
	t    *tablestore.Store
	kind Kind[A]
	out  *outbox // nil unless kind.Publish
}

// NewTable opens the table (no I/O; Ensure creates it).
func NewTable[A any](acct *azconn.Account, name string, kind Kind[A]) (*Table[A], error) {
	t, err := tablestore.New(acct, name)
	if err != nil {
		return nil, err
	}
	tab := &Table[A]{t: t, kind: kind}
	if kind.Publish != nil {
		if tab.out, err = openOutbox(acct, kind.OutboxTable, name); err != nil {
			return nil, err
		}
	}
	return tab, nil
}

// Rows is the raw table, for a store's own rows of the aggregate's partition.
func (t *Table[A]) Rows() *tablestore.Store { return t.t }

// Ensure creates the table when missing (and the outbox schedule's, with Kind.Publish).
func (t *Table[A]) Ensure(ctx context.Context) error {
	if err := t.t.EnsureTable(ctx); err != nil {
		return err
	}
	if t.out != nil {
		return t.out.ensure(ctx)
	}
	return nil
}

// Load reads an aggregate by one point read of its root row (with OwnRoot, a missing one is
// looked for under Root too: two reads). Errors: Kind.NotFound; the decode error of a corrupt
// row; the tablestore ones.
func (t *Table[A]) Load(ctx context.Context, id string) (A, error) {
	var zero A
	if id == "" {
		return zero, t.kind.NotFound
	}
	e, err := t.t.Get(ctx, id, t.rootKey(id))
	if apperr.KindOf(err) == apperr.KindNotFound && t.kind.OwnRoot {
		e, err = t.moveRoot(ctx, id)
	}
	if apperr.KindOf(err) == apperr.KindNotFound {
		return zero, t.kind.NotFound
	}
	if err != nil {
		return zero, err
	}
	return t.kind.Decode(e)
}

// rootKey is aggregate id's root RowKey.
func (t *Table[A]) rootKey(id string) string {
	if t.kind.OwnRoot {
		return t.kind.Root + "-" + id
	}
	return t.kind.Root
}

// moveRoot moves aggregate id's root row written under Root before OwnRoot to its own key
// (the new row and the old one's delete, on its ETag, in one transaction) and reads it there.
// A concurrent move (the old row gone since the caller's read, or the transaction refused) is
// read the same way. Errors: not found when neither row exists; the tablestore ones.
func (t *Table[A]) moveRoot(ctx context.Context, id string) (tablestore.Entity, error) {
	old, err := t.t.Get(ctx, id, t.kind.Root)
	if apperr.KindOf(err) == apperr.KindNotFound {
		return t.t.Get(ctx, id, t.rootKey(id)) // missing, or moved meanwhile
	}
	if err != nil {
		return tablestore.Entity{}, err
	}
	moved := tablestore.Entity{PartitionKey: id, RowKey: t.rootKey(id), Props: old.Props}
	err = t.t.Transact(ctx, id, []tablestore.Op{tablestore.InsertOp(moved), tablestore.DeleteOp(t.kind.Root, old.ETag)})
	switch k := apperr.KindOf(err); {
	case err == nil, k == apperr.KindConflict, k == apperr.KindPrecondition, k == apperr.KindNotFound:
		return t.t.Get(ctx, id, t.rootKey(id))
	}
	return tablestore.Entity{}, err
}

// Create writes a new aggregate's root row, the events of its first change and extra rows of
// its partition in one transaction. Errors: entity_exists when the id is taken; the tablestore
// ones.
func (t *Table[A]) Create(ctx context.Context, a A, ch kernel.Change, extra ...tablestore.Op) error {
	root, err := t.encode(a)
	if err != nil {
		return err
	}
	root.ETag = ""
	ops, published, err := t.ops(a, tablestore.InsertOp(root), ch, extra)
	if err != nil {
		return err
	}
	if err := t.before(ctx, a, ch, published); err != nil {
		return err
	}
	if err := t.t.Transact(ctx, t.kind.ID(a), ops); err != nil {
		return err
	}
	t.after(ctx, a, ch)
	return nil
}

// encode is a's root row (Kind.Encode) under its root RowKey.
func (t *Table[A]) encode(a A) (tablestore.Entity, error) {
	root, err := t.kind.Encode(a)
	if t.kind.OwnRoot {
		root.RowKey = t.rootKey(root.PartitionKey)
	}
	return root, err
}

// before runs Kind.Before and, when the change publishes events (published: the first one's
// time), adds the outbox entry that finds them: both before the change is written.
func (t *Table[A]) before(ctx context.Context, a A, ch kernel.Change, published time.Time) error {
	if t.kind.Before != nil {
		if err := t.kind.Before(ctx, a, ch); err != nil {
			return err
		}
	}
	if published.IsZero() {
		return nil
	}
	return t.out.sched.Add(ctx, entryID(t.out.table, t.kind.ID(a)), published)
}

func (t *Table[A]) after(ctx context.Context, a A, ch kernel.Change) {
	if t.kind.After != nil {
		t.kind.After(ctx, a, ch)
	}
}

// Apply writes a change: the root row if its ETag still matches, the change's audit rows and
// the extra operations of the same partition, all or nothing. Errors: ErrConcurrent on a lost
// race (nothing written); Kind.ExtraConflict's error for an extra insert that collided;
// Kind.NotFound when the root row is gone; the tablestore ones.
func (t *Table[A]) Apply(ctx context.Context, a A, ch kernel.Change, extra ...tablestore.Op) error {
	root, err := t.encode(a)
	if err != nil {
		return err
	}
	ops, published, err := t.ops(a, tablestore.ReplaceOp(root), ch, extra)
	if err != nil {
		return err
	}
	if err := t.before(ctx, a, ch, published); err != nil {
		return err
	}
	err = t.t.Transact(ctx, t.kind.ID(a), ops)
	if err == nil {
		t.after(ctx, a, ch)
		return nil
	}
	switch apperr.KindOf(err) {
	case apperr.KindPrecondition:
		return ErrConcurrent
	case apperr.KindConflict:
		first := len(ops) - len(extra) // the extras come last
		if i, ok := tablestore.FailedOp(err); ok && i >= first && t.kind.ExtraConflict != nil {
			if e := t.kind.ExtraConflict(ops[i]); e != nil {
				return e
			}
		}
		return ErrConcurrent
	case apperr.KindNotFound:
		if i, ok := tablestore.FailedOp(err); !ok || i == 0 {
			return t.kind.NotFound
		}
		return ErrConcurrent // a conditional extra (a token row) is gone: another request used it
	}
	return err
}

// Record writes audit events that change no state (pii.purged, notices sent) without touching
// the root row or its ETag, with extra operations of the partition. A change that touches
// children or asks for effects is refused: state changes go through Apply.
func (t *Table[A]) Record(ctx context.Context, a A, events []kernel.Event, extra ...tablestore.Op) error {
	ops, err := t.EventOps(a, events)
	if err != nil {
		return err
	}
	outs, published := t.outboxOps(a, events, ops)
	ops = append(append(ops, outs...), extra...)
	if len(ops) == 0 {
		return nil
	}
	if !published.IsZero() {
		if err := t.out.sched.Add(ctx, entryID(t.out.table, t.kind.ID(a)), published); err != nil {
			return err
		}
	}
	return t.t.Transact(ctx, t.kind.ID(a), ops)
}

// Step is a transition on a freshly loaded aggregate. It may return extra operations of the
// same partition to commit with the change.
type Step[A any] func(a A) (kernel.Change, []tablestore.Op, error)

// Plain is a Step of a transition that needs no extra operations.
func Plain[A any](step func(a A) (kernel.Change, error)) Step[A] {
	return func(a A) (kernel.Change, []tablestore.Op, error) {
		ch, err := step(a)
		return ch, nil, err
	}
}

// Update loads the aggregate, runs step and applies its change in one transaction. When another
// request changed the aggregate meanwhile it loads again and runs step again (the next run sees
// the other change and may then fail cleanly), at most MaxAttempts times in all; then
// ErrConcurrent. A step error comes back with the aggregate as loaded and the change made so
// far (a caller may record a failure from it), and nothing is written. A change with nothing in
// it and no extra operations writes nothing (unless Kind.WriteEmpty).
func (t *Table[A]) Update(ctx context.Context, id string, step Step[A]) (A, kernel.Change, error) {
	var zero A
	for attempt := 1; ; attempt++ {
		a, err := t.Load(ctx, id)
		if err != nil {
			return zero, kernel.Change{}, err
		}
		ch, extra, err := step(a)
		if err != nil {
			return a, ch, err
		}
		if ch.Empty() && len(extra) == 0 && !t.kind.WriteEmpty {
			return a, ch, nil
		}
		err = t.Apply(ctx, a, ch, extra...)
		if err == ErrConcurrent && attempt < MaxAttempts {
			continue
		}
		if err != nil {
			return zero, ch, err
		}
		return a, ch, nil
	}
}

// EventOps are the insert operations of events' audit rows (in order, keyed by time and
// sequence), each carrying its slot's subject hash.
func (t *Table[A]) EventOps(a A, events []kernel.Event) ([]tablestore.Op, error) {
	id := t.kind.ID(a)
	ops := make([]tablestore.Op, 0, len(events))
	for i, ev := range events {
		subject := ""
		if t.kind.Subject != nil {
			subject = t.kind.Subject(a, ev.Slot)
		}
		e, err := audit.Entity(id, audit.Record{Kind: ev.Kind, At: ev.At, Slot: ev.Slot, ActorKind: ev.Actor.Kind,
			ActorID: ev.Actor.ID, IP: ev.Actor.IP, UserAgent: ev.Actor.UserAgent, EmailHash: subject, Data: ev.Data}, i)
		if err != nil {
			return nil, err
		}
		ops = append(ops, tablestore.InsertOp(e))
	}
	return ops, nil
}

// ops are a change's operations: the root row, the audit rows, the outbox rows of the events
// it publishes, then the extras (last: Apply maps their conflicts). published is the first
// published event's time (zero: none).
func (t *Table[A]) ops(a A, root tablestore.Op, ch kernel.Change, extra []tablestore.Op) ([]tablestore.Op, time.Time, error) {
	evs, err := t.EventOps(a, ch.Events)
	if err != nil {
		return nil, time.Time{}, err
	}
	outs, published := t.outboxOps(a, ch.Events, evs)
	ops := make([]tablestore.Op, 0, 1+len(evs)+len(outs)+len(extra))
	ops = append(append(append(append(ops, root), evs...), outs...), extra...)
	if len(ops) > tablestore.MaxBatchOps {
		return nil, time.Time{}, apperr.New(apperr.KindInternal, "change_too_large",
			"a change of %d operations exceeds the %d of one transaction", len(ops), tablestore.MaxBatchOps)
	}
	return ops, published, nil
}

// Events is the aggregate's audit trail in time order (one partition query, off the request
// paths that change state). Errors: audit.ErrCorrupt when a row does not read back (the trail
// is never returned with a gap); the tablestore ones.
func (t *Table[A]) Events(ctx context.Context, id string) ([]audit.Record, error) {
	rows, err := t.t.Query(ctx, id, &tablestore.QueryOptions{RowKeyPrefix: audit.RowPrefix})
	if err != nil {
		return nil, err
	}
	out := make([]audit.Record, 0, len(rows))
	for _, r := range rows {
		rec, err := audit.FromEntity(r)
		if err != nil {
			return nil, err
		}
		out = append(out, rec)
	}
	return out, nil
}

// EventTimes are the times of the aggregate's audit events of one kind, in time order: a
// filtered query that reads only the kind and time columns, so it answers even when another
// column of a row is unreadable. Errors: the tablestore ones.
func (t *Table[A]) EventTimes(ctx context.Context, id, kind string) ([]time.Time, error) {
	rows, err := t.t.Query(ctx, id, &tablestore.QueryOptions{RowKeyPrefix: audit.RowPrefix, Filter: "kind eq " + tablestore.Quote(kind)})
	if err != nil {
		return nil, err
	}
	out := make([]time.Time, 0, len(rows))
	for _, r := range rows {
		out = append(out, audit.FromNanos(r.Int64("atNs")))
	}
	return out, nil
}

// HasPrefix reports whether op's row key starts with prefix (for Kind.ExtraConflict).
func HasPrefix(op tablestore.Op, prefix string) bool {
	return strings.HasPrefix(op.Entity.RowKey, prefix)
}

// Open opens an aggregate kind's two tables: its own and its index (no I/O).
func Open[A any](acct *azconn.Account, table, index string, kind Kind[A]) (*Table[A], *Index, error) {
	t, err := NewTable(acct, table, kind)
	if err != nil {
		return nil, nil, err
	}
	x, err := NewIndex(acct, index)
	if err != nil {
		return nil, nil, err
	}
	return t, x, nil
}

// Ensure creates both tables of Open when missing.
func Ensure[A any](ctx context.Context, t *Table[A], x *Index) error {
	if err := t.Ensure(ctx); err != nil {
		return err
	}
	return x.Ensure(ctx)
}
