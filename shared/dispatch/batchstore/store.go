// Package batchstore keeps dispatch batches in Azure Table storage on the aggregate kernel
// (DESIGN 9, docs/storage.md "many-children aggregates"): one partition per batch
// (PartitionKey = batchId) holding the batch row, one row per record (RowKey rec-<index>) and
// the audit rows. The batch row changes under its ETag with its events in one transaction; a
// record's outcome is written in the same transaction as one of the batch's counter shards
// (counters.go), conditioned on both rows' ETags, never the batch row, so a redelivered record
// message or two concurrent jobs can never count a record twice or lose a count, and record
// jobs on many instances do not contend on one row. The tenant's batches are listed through
// member rows in the index table.
package batchstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/audit"
	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/azure/tablestore"
	"github.com/esign-svc/esign/shared/dispatch"
	"github.com/esign-svc/esign/shared/event"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/kernel/aggstore"
)

// Default table names.
const (
	TableBatches = "dispatch"
	TableIndex   = "dispatchindex"
)

const (
	rowBatch     = "batch"
	prefixRecord = "rec-"
	// recordAttempts bounds Processed's retries against concurrent record jobs of the same
	// batch (each lost race is another record's count landing first).
	recordAttempts = 40
	// chunk is how many record rows one transaction inserts (the service's limit is 100
	// operations).
	chunk = 100
	// maxPerTransaction bounds the record outcomes one transaction writes (a record row and an
	// event each, and the shard row: at most 100 operations).
	maxPerTransaction = 40
)

// ErrNotFound is a batch that does not exist.
var ErrNotFound = dispatch.ErrBatchNotFound

// ErrRecordNotFound is a record index the batch does not have.
var ErrRecordNotFound = &apperr.Error{Kind: apperr.KindNotFound, Code: "record_not_found", Detail: "no such record"}

var kind = aggstore.Kind[*dispatch.Batch]{
	Root:     rowBatch,
	NotFound: ErrNotFound,
	ID:       func(b *dispatch.Batch) string { return b.BatchID },
	Encode:   batchEntity,
	Decode:   batchFrom,
	// Integrator events (DESIGN 17): an outbox row with each published audit event.
	Publish: event.Map, Object: "batch",
	Tenant: func(b *dispatch.Batch) string { return b.TenantID },
	State:  func(b *dispatch.Batch) string { return string(b.State) },
}

var _ dispatch.BatchStore = (*Store)(nil)

// Store is the table-backed batch store. Safe for concurrent use.
type Store struct {
	tab     *aggstore.Table[*dispatch.Batch]
	index   *aggstore.Index
	intakes *aggstore.Checks // the intakes under way (intake.go)
}

// New opens the store on two tables of the account (no I/O; Ensure creates them).
func New(acct *azconn.Account, batchesTable, indexTable string) (*Store, error) {
	tab, index, err := aggstore.Open(acct, batchesTable, indexTable, kind)
	if err != nil {
		return nil, err
	}
	return &Store{tab: tab, index: index, intakes: aggstore.NewChecks(index, IntakeSchedule, dispatch.IntakeSafeAge)}, nil
}

// Ensure creates the tables when missing, and the intake schedule's watermark.
func (s *Store) Ensure(ctx context.Context) error {
	if err := aggstore.Ensure(ctx, s.tab, s.index); err != nil {
		return err
	}
	return s.intakes.Start(ctx, time.Now())
}

func tenantKey(tenant string) aggstore.Key {
	return aggstore.Key{Kind: "batches", Scope: tenant, Value: "all"}
}

// Create stores a new batch: its record rows (CreateRecords), then the batch (CreateBatch).
// Errors: the tablestore ones.
func (s *Store) Create(ctx context.Context, b *dispatch.Batch, records []dispatch.Record, ch dispatch.Change) error {
	if err := s.CreateRecords(ctx, b.BatchID, records); err != nil {
		return err
	}
	return s.CreateBatch(ctx, b, dispatch.TallyOf(records), ch)
}

// CreateRecords stores record rows of a new batch in transactions of up to 100 (the intake
// calls it for each chunk as it reads the records). Errors: the tablestore ones.
func (s *Store) CreateRecords(ctx context.Context, batchID string, records []dispatch.Record) error {
	for from := 0; from < len(records); from += chunk {
		to := min(from+chunk, len(records))
		ops := make([]tablestore.Op, 0, to-from)
		for i := from; i < to; i++ {
			e, err := recordEntity(&records[i])
			if err != nil {
				return err
			}
			e.ETag = ""
			ops = append(ops, tablestore.UpsertOp(e)) // a retried create rewrites its own rows
		}
		if err := s.tab.Rows().Transact(ctx, batchID, ops); err != nil {
			return err
		}
	}
	return nil
}

// CreateBatch stores a new batch once all its record rows are (CreateRecords): its member row
// under the tenant (its creation time and, unless it is final, its initial state: the list's
// state hint), then the batch row with the events of ch and its counter shards (from the
// records' tally t). A batch row exists only once all its records do, and List skips a member
// without one. A final state (invalid) is hinted only once the batch row is seen (List's
// repair): a final hint is never read, so it must not stand for a batch row that a failed
// create never wrote. Errors: the tablestore ones.
func (s *Store) CreateBatch(ctx context.Context, b *dispatch.Batch, t dispatch.Tally, ch dispatch.Change) error {
	props := map[string]any{propCreated: kernel.Nanos(b.CreatedAt)}
	if !b.State.Terminal() {
		props[propState] = string(b.State)
	}
	if err := s.index.AddMember(ctx, tenantKey(b.TenantID), b.BatchID, props); err != nil {
		return err
	}
	return s.tab.Create(ctx, b, ch, shardOps(b, t)...)
}

// Load reads a batch row with its counter shards (one query): a processing batch's
// ProcessedCount and ErrorCount are the shards' sums. Errors: ErrNotFound; the tablestore ones.
func (s *Store) Load(ctx context.Context, batchID string) (*dispatch.Batch, error) {
	return s.loadSummed(ctx, batchID)
}

// The one Update shape of the stores (issue 23).
var _ kernel.Updater[*dispatch.Batch, func(*dispatch.Batch) (dispatch.Change, error)] = (*Store)(nil)

// Update loads the batch, runs step and applies its change with the kernel's bounded retry. A
// step error comes back with nothing written. Every change of a batch's state goes through
// here (a record's outcome writes a counter shard, never the batch row's state): once the
// transaction is written and the state changed, the batch's member row gets the new state as
// its list hint (one merge). A failed merge is not an error (the batch is written): the hint
// stays behind, which List reads through and repairs.
func (s *Store) Update(ctx context.Context, batchID string, step func(*dispatch.Batch) (dispatch.Change, error)) (*dispatch.Batch, dispatch.Change, error) {
	var before dispatch.State
	b, ch, err := s.tab.Update(ctx, batchID, func(b *dispatch.Batch) (kernel.Change, []tablestore.Op, error) {
		before = b.State // the attempt that is written is the last one run
		ch, err := step(b)
		return ch, nil, err
	})
	if err == nil && b.State != before {
		s.hint(ctx, b.TenantID, b.BatchID, b.State, 0)
	}
	return b, ch, err
}

// hint merges state (and, when at is not 0, the creation time) into the batch's member row:
// best effort, a failure leaves the hint behind (List reads a batch whose hint is not final).
func (s *Store) hint(ctx context.Context, tenant, batchID string, state dispatch.State, at int64) {
	props := map[string]any{propState: string(state)}
	if at != 0 {
		props[propCreated] = at
	}
	_ = s.index.SetMember(ctx, tenantKey(tenant), batchID, props)
}

// propCreated is a member row's batch creation time (the list's order without reading the
// batch rows).
const propCreated = "createdAtNs"

// propState is a member row's state hint (issue 26): a state the batch held, or the initial
// one CreateBatch wrote. Only Update and List's repair move it, after the batch row: it can
// lag behind the batch's true state (a later one of the machine) but never run ahead, so a
// final hint (dispatch.State.Terminal: no way out) is exact.
const propState = "state"

// List is a page of the tenant's batches, newest first, those in state when it is not empty:
// at most limit after the continuation token after ("": from the newest), with the total of
// the batches selected and the next page's token ("" on the last). Without a state it reads
// the member rows (one query) and only the page's batch rows. With a state it reads the member
// rows and the batch rows of the members whose state hint is not final (no hint, or an
// in-flight state: few); a final hint is counted or skipped as it stands. A hint that differs
// from the batch row read is repaired (best effort). Errors: 400 invalid_request naming
// continuationToken for a token this list did not make; the tablestore ones.
func (s *Store) List(ctx context.Context, tenant string, state dispatch.State, after string, limit int) (dispatch.BatchPage, error) {
	var from listKey
	if after != "" {
		var ok bool
		if from, ok = parseListKey(after); !ok {
			return dispatch.BatchPage{}, apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field("continuationToken", "is not a token of this list"))
		}
	}
	members, err := s.index.Members(ctx, tenantKey(tenant))
	if err != nil {
		return dispatch.BatchPage{}, err
	}
	if state != "" {
		return s.listState(ctx, tenant, state, members, after, from, limit)
	}
	keys := make([]listKey, 0, len(members))
	for _, m := range members {
		k := listKey{at: m.Int64(propCreated), id: m.String("member")}
		if k.at == 0 { // a member row from before issue 26: its batch row's time
			b, err := s.tab.Load(ctx, k.id)
			if errors.Is(err, ErrNotFound) {
				continue // a create that did not finish
			}
			if err != nil {
				return dispatch.BatchPage{}, err
			}
			k.at = kernel.Nanos(b.CreatedAt)
		}
		keys = append(keys, k)
	}
	sortKeys(keys)
	p := dispatch.BatchPage{Total: len(keys)}
	for _, k := range keys {
		if len(p.Batches) == limit {
			break
		}
		if after != "" && !k.after(from) {
			continue
		}
		b, err := s.tab.Load(ctx, k.id)
		if errors.Is(err, ErrNotFound) {
			p.Total -= min(p.Total, 1) // a create that did not finish
			continue
		}
		if err != nil {
			return dispatch.BatchPage{}, err
		}
		if b.TenantID != tenant {
			continue
		}
		p.Batches = append(p.Batches, b)
		if len(p.Batches) == limit {
			p.Next = k.String()
		}
	}
	if p.Next != "" && !morePast(keys, p.Next) {
		p.Next = ""
	}
	return p, nil
}

// listState is List with a state: the members selected by their final hints without a read,
// the others by their batch rows (read once: a selected one's serves the page), then the page
// of the selection after the token from.
func (s *Store) listState(ctx context.Context, tenant string, state dispatch.State, members []tablestore.Entity, after string, from listKey, limit int) (dispatch.BatchPage, error) {
	var sel []listKey
	read := map[string]*dispatch.Batch{}
	for _, m := range members {
		k := listKey{at: m.Int64(propCreated), id: m.String("member")}
		hint := dispatch.State(m.String(propState))
		if hint.Terminal() && k.at != 0 { // exact: no way out of a final state
			if hint == state {
				sel = append(sel, k)
			}
			continue
		}
		b, err := s.tab.Load(ctx, k.id)
		if errors.Is(err, ErrNotFound) {
			continue // a create that did not finish (or not yet)
		}
		if err != nil {
			return dispatch.BatchPage{}, err
		}
		if b.TenantID != tenant {
			continue
		}
		if b.State != hint || k.at == 0 { // behind, missing, or a member row from before issue 26
			at := int64(0)
			if k.at == 0 {
				k.at = kernel.Nanos(b.CreatedAt)
				at = k.at
			}
			s.hint(ctx, tenant, k.id, b.State, at)
		}
		if b.State == state {
			sel = append(sel, k)
			read[k.id] = b
		}
	}
	sortKeys(sel)
	p := dispatch.BatchPage{Total: len(sel)}
	more := false
	for _, k := range sel {
		if after != "" && !k.after(from) {
			continue
		}
		if len(p.Batches) == limit {
			more = true // a selected batch past the page
			break
		}
		b := read[k.id]
		if b == nil {
			var err error
			if b, err = s.tab.Load(ctx, k.id); errors.Is(err, ErrNotFound) {
				p.Total-- // cannot happen: a final hint is written only after its batch row
				continue
			} else if err != nil {
				return dispatch.BatchPage{}, err
			}
		}
		p.Batches = append(p.Batches, b)
		if len(p.Batches) == limit {
			p.Next = k.String()
		}
	}
	if !more {
		p.Next = ""
	}
	return p, nil
}

// sortKeys puts keys in the list's order.
func sortKeys(keys []listKey) {
	slices.SortFunc(keys, func(a, b listKey) int {
		if c := cmp.Compare(b.at, a.at); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
}

// listKey orders the list: newest first, then by id.
type listKey struct {
	at int64
	id string
}

func (k listKey) String() string { return fmt.Sprintf("%020d-%s", k.at, k.id) }

// after reports whether k comes after token position p in the list's order.
func (k listKey) after(p listKey) bool { return k.at < p.at || (k.at == p.at && k.id > p.id) }

func parseListKey(v string) (listKey, bool) {
	at, id, ok := strings.Cut(v, "-")
	n, err := strconv.ParseInt(at, 10, 64)
	if !ok || err != nil || len(at) != 20 || n < 0 || id == "" {
		return listKey{}, false
	}
	return listKey{at: n, id: id}, true
}

// morePast reports whether any key comes after the token next (else the page was the last).
func morePast(keys []listKey, next string) bool {
	p, _ := parseListKey(next)
	return slices.ContainsFunc(keys, func(k listKey) bool { return k.after(p) })
}

// Record reads one record row with its counter shard (one query: Record.Counter). Errors:
// ErrRecordNotFound; the tablestore ones.
func (s *Store) Record(ctx context.Context, batchID string, index int) (*dispatch.Record, error) {
	rs, err := s.recordsOf(ctx, batchID, 0, []int{index})
	if err != nil {
		return nil, err
	}
	return rs[0], nil
}

// RecordsOf reads the records of indexes (ascending: one record message's) of batch b with
// their counter shards in one query (dispatch.BatchStore). Errors: ErrRecordNotFound; the
// tablestore ones.
func (s *Store) RecordsOf(ctx context.Context, b *dispatch.Batch, indexes []int) ([]*dispatch.Record, error) {
	if len(indexes) == 0 {
		return nil, nil
	}
	return s.recordsOf(ctx, b.BatchID, b.Group(), indexes)
}

// Page is one page of a batch's records.
type Page = dispatch.RecordPage

// Records lists up to limit records in index order after the continuation token after ("":
// from the first), those of status (DISPATCH_READY, INVALID) or record state (done, failed,
// pending, not-queued) when filter is not empty. Errors: 400 invalid_request naming
// continuationToken for a token this store did not make.
func (s *Store) Records(ctx context.Context, batchID, filter, after string, limit int) (Page, error) {
	f := "RowKey ge " + tablestore.Quote(prefixRecord) + " and RowKey lt " + tablestore.Quote(prefixRecord+"~")
	if after != "" {
		if _, ok := parseRecordKey(after); !ok {
			return Page{}, apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field("continuationToken", "is not a token of this list"))
		}
		f += " and RowKey gt " + tablestore.Quote(after)
	}
	switch filter {
	case "":
	case dispatch.RecordReady, dispatch.RecordInvalid:
		f += " and status eq " + tablestore.Quote(filter)
	default:
		f += " and state eq " + tablestore.Quote(filter)
	}
	rows, err := s.tab.Rows().Query(ctx, batchID, &tablestore.QueryOptions{Filter: f, Limit: limit + 1})
	if err != nil {
		return Page{}, err
	}
	var p Page
	for i, e := range rows {
		if i == limit {
			p.Next = rows[i-1].RowKey
			break
		}
		r, err := recordFrom(e)
		if err != nil {
			return Page{}, err
		}
		p.Records = append(p.Records, *r)
	}
	return p, nil
}

// RecordsFrom is Records from record index from on (dispatch.BatchStore).
func (s *Store) RecordsFrom(ctx context.Context, batchID, filter string, from, limit int) (Page, error) {
	return s.Records(ctx, batchID, filter, StartAt(from), limit)
}

// Processed records outcome o of record index: the record row and the batch's counters in one
// transaction (dispatch.Processed), reading both again and trying again while other records of
// the batch land first. It returns the batch and the change as written. Errors:
// dispatch.ErrRecordDone for a record processed before (a redelivered message: nothing is
// written); dispatch.ErrNotProcessing; ErrConcurrent after recordAttempts lost races; the
// tablestore ones.
func (s *Store) Processed(ctx context.Context, batchID string, index int, o dispatch.Outcome, now time.Time) (*dispatch.Batch, dispatch.Change, error) {
	b, err := s.Load(ctx, batchID)
	if err != nil {
		return nil, dispatch.Change{}, err
	}
	r, err := s.Record(ctx, batchID, index)
	if err != nil {
		return nil, dispatch.Change{}, err
	}
	return s.Process(ctx, b, r, o, now)
}

// Process is Processed for a record rec just read (Record: with its counter shard) of batch b
// as the caller loaded it (dispatch.BatchStore): the first attempt reads nothing more. A
// batch stored before the counter shards counts on its row, reloaded for each attempt.
func (s *Store) Process(ctx context.Context, b *dispatch.Batch, rec *dispatch.Record, o dispatch.Outcome, now time.Time) (*dispatch.Batch, dispatch.Change, error) {
	if sh, ok := parseCounter(rec.Counter); ok {
		after, ch, _, err := s.processShard(ctx, b, []*dispatch.Record{rec}, []dispatch.Outcome{o}, sh, now)
		return after, ch, err
	}
	batchID, index := rec.BatchID, rec.Index
	for attempt := 1; ; attempt++ {
		b, err := s.tab.Load(ctx, batchID)
		if err != nil {
			return nil, dispatch.Change{}, err
		}
		r := rec
		if attempt > 1 {
			if r, err = s.Record(ctx, batchID, index); err != nil {
				return nil, dispatch.Change{}, err
			}
		} else {
			cp := *rec
			r = &cp // the caller's record stays as read
		}
		ch, err := dispatch.Processed(b, r, o, now)
		if err != nil {
			return b, ch, err
		}
		re, err := recordEntity(r)
		if err != nil {
			return nil, dispatch.Change{}, err
		}
		err = s.tab.Apply(ctx, b, ch, tablestore.ReplaceOp(re))
		if err == nil {
			return b, ch, nil
		}
		if !errors.Is(err, aggstore.ErrConcurrent) || attempt >= recordAttempts {
			return nil, dispatch.Change{}, err
		}
		time.Sleep(time.Duration(rand.IntN(20*min(attempt, 10))) * time.Millisecond)
	}
}

// ProcessMany is Process for several records just read (RecordsOf): those of one counter
// shard in one transaction, a transaction per shard. written says which outcomes were written
// (false: processed before). Errors: dispatch.ErrRecordDone when none was; the others of
// Process (a batch stored before the shards: one record at a time on its row).
func (s *Store) ProcessMany(ctx context.Context, b *dispatch.Batch, recs []*dispatch.Record, outs []dispatch.Outcome, now time.Time) (*dispatch.Batch, dispatch.Change, []bool, error) {
	written := make([]bool, len(recs))
	var all dispatch.Change
	after, group := b, b.Group()
	for from := 0; from < len(recs); {
		to := from + 1
		sh, sharded := parseCounter(recs[from].Counter)
		for sharded && to < len(recs) && shardOf(group, recs[to].Index) == shardOf(group, recs[from].Index) && to-from < maxPerTransaction {
			to++
		}
		var ch dispatch.Change
		var w []bool
		var err error
		if sharded {
			after, ch, w, err = s.processShard(ctx, b, recs[from:to], outs[from:to], sh, now)
		} else {
			after, ch, err = s.Process(ctx, b, recs[from], outs[from], now)
			w = []bool{err == nil}
		}
		switch {
		case errors.Is(err, dispatch.ErrRecordDone):
		case err != nil:
			return after, all, written, err
		default:
			copy(written[from:to], w)
			all.Merge(ch)
		}
		from = to
	}
	if !slices.Contains(written, true) {
		return b, all, written, dispatch.ErrRecordDone
	}
	if after == nil {
		after = b
	}
	return after, all, written, nil
}

// Events is the batch's audit trail in time order (record events carry the record's index as
// their slot).
func (s *Store) Events(ctx context.Context, batchID string) ([]audit.Record, error) {
	return s.tab.Events(ctx, batchID)
}

func recordKey(index int) string { return fmt.Sprintf("%s%05d", prefixRecord, index) }

func parseRecordKey(k string) (int, bool) {
	if len(k) != len(prefixRecord)+5 || k[:len(prefixRecord)] != prefixRecord {
		return 0, false
	}
	n, err := strconv.Atoi(k[len(prefixRecord):])
	return n, err == nil && n >= 0
}
