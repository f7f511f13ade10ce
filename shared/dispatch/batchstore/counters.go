package batchstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/azure/tablestore"
	"github.com/esign-svc/esign/shared/dispatch"
)

// Sharded counters (issue 26): a record's outcome is written with its record row and ONE of
// Shards counter rows (RowKey cnt-NN, shardOf the record's index), never the batch row,
// so record jobs on many instances do not all contend on one entity. Each shard row holds how
// many ready records it counts (fixed at intake), how many of them were processed and how many
// failed. The batch's ProcessedCount and ErrorCount are the sums, added up when the batch is
// read (the batch row and the shard rows come back in one query), and written onto the batch
// row by the finish, which moves the batch to completed or partially-failed once under the
// batch row's ETag. A batch stored before the shards (no shard rows) keeps its counters on the
// batch row as before.
const (
	// Shards is how many counter rows a batch has.
	Shards      = 16
	prefixShard = "cnt-"
	// rowFinishAsked is inserted by the record job that asks for the finish (once).
	rowFinishAsked = "finish-asked"
)

func shardKey(k int) string { return fmt.Sprintf("%s%02d", prefixShard, k) }

// shardOf is the counter shard of record index of a batch whose record groups have group
// records (Batch.Group): the records of one record message share one, so one transaction
// writes their outcomes.
func shardOf(group, index int) int { return index / group % Shards }

// shard is one counter row.
type shard struct {
	ready, processed, failed int
	etag                     string
}

func (s shard) done() bool { return s.processed >= s.ready }

func shardEntity(batchID string, k int, s shard) tablestore.Entity {
	return tablestore.Entity{PartitionKey: batchID, RowKey: shardKey(k), ETag: s.etag, Props: map[string]any{
		"ready": int64(s.ready), "processed": int64(s.processed), "failed": int64(s.failed)}}
}

func shardFrom(e tablestore.Entity) shard {
	return shard{ready: int(e.Int64("ready")), processed: int(e.Int64("processed")), failed: int(e.Int64("failed")), etag: e.ETag}
}

// shardOps are the insert operations of a new batch's shard rows: each counts the ready
// records of its index class.
func shardOps(b *dispatch.Batch, t dispatch.Tally) []tablestore.Op {
	var s [Shards]shard
	for i, ready := range t.Ready {
		if ready {
			s[shardOf(b.Group(), i)].ready++
		}
	}
	ops := make([]tablestore.Op, Shards)
	for k := range s {
		ops[k] = tablestore.InsertOp(shardEntity(b.BatchID, k, s[k]))
	}
	return ops
}

var shardFilter = "(RowKey ge " + tablestore.Quote(prefixShard) + " and RowKey lt " + tablestore.Quote(prefixShard+"~") + ")"

// loadSummed reads the batch row with every shard row in one query and sets the batch's
// ProcessedCount and ErrorCount from the shards while it is processing (a finished batch's row
// holds the final sums; a batch without shards keeps its row's). Errors: ErrNotFound; the
// tablestore ones.
func (s *Store) loadSummed(ctx context.Context, batchID string) (*dispatch.Batch, error) {
	if batchID == "" {
		return nil, ErrNotFound
	}
	rows, err := s.tab.Rows().Query(ctx, batchID, &tablestore.QueryOptions{
		Filter: "(RowKey eq " + tablestore.Quote(rowBatch) + " or " + shardFilter + ")"})
	if err != nil {
		return nil, err
	}
	var b *dispatch.Batch
	var sum shard
	shards := 0
	for _, e := range rows {
		if e.RowKey == rowBatch {
			if b, err = batchFrom(e); err != nil {
				return nil, err
			}
			continue
		}
		sh := shardFrom(e)
		sum.processed += sh.processed
		sum.failed += sh.failed
		shards++
	}
	if b == nil {
		return nil, ErrNotFound
	}
	if shards > 0 && b.State == dispatch.StateProcessing {
		b.ProcessedCount, b.ErrorCount = sum.processed, sum.failed
	}
	return b, nil
}

// Counts are the batch's processed and failed records summed over its shards; ok is false for
// a batch stored without shards (its row holds its counters). Errors: the tablestore ones.
func (s *Store) Counts(ctx context.Context, batchID string) (processed, failed int, ok bool, err error) {
	rows, err := s.tab.Rows().Query(ctx, batchID, &tablestore.QueryOptions{Filter: shardFilter})
	if err != nil {
		return 0, 0, false, err
	}
	for _, e := range rows {
		sh := shardFrom(e)
		processed += sh.processed
		failed += sh.failed
	}
	return processed, failed, len(rows) > 0, nil
}

// processShard writes the outcomes outs of records recs, all of one counter shard as read
// with them (sh), with that shard row and their events in one transaction conditioned on every
// row's ETag, without touching the batch row. A record processed before is left out (written
// false); nothing to write is dispatch.ErrRecordDone. A lost race reads the records and the
// shard again (one query) and tries again. When the shard is complete the shards are summed,
// and the change asks for the finish when every ready record is processed, once (the job that
// inserts the finish-asked row). It returns the batch with its summed counters.
func (s *Store) processShard(ctx context.Context, b *dispatch.Batch, recs []*dispatch.Record, outs []dispatch.Outcome, sh shard, now time.Time) (*dispatch.Batch, dispatch.Change, []bool, error) {
	group := b.Group()
	k := shardOf(group, recs[0].Index)
	cur := make([]*dispatch.Record, len(recs))
	indexes := make([]int, len(recs))
	for i, r := range recs {
		cp := *r
		cur[i], indexes[i] = &cp, r.Index // the caller's records stay as read
		if shardOf(group, r.Index) != k {
			return nil, dispatch.Change{}, nil, fmt.Errorf("batchstore: records %d and %d are of different counter shards", recs[0].Index, r.Index)
		}
	}
	for attempt := 1; ; attempt++ {
		if attempt > 1 {
			got, err := s.recordsOf(ctx, b.BatchID, group, indexes)
			if err != nil {
				return nil, dispatch.Change{}, nil, err
			}
			cur = got
			if sh, _ = parseCounter(got[0].Counter); sh.etag == "" {
				return nil, dispatch.Change{}, nil, ErrRecordNotFound
			}
		}
		// the machine on the shard's view: the records' counts and Done for their shard
		view := *b
		view.ReadyCount, view.ProcessedCount, view.ErrorCount = sh.ready, sh.processed, sh.failed
		var all dispatch.Change
		var ops []tablestore.Op
		written := make([]bool, len(cur))
		for i, r := range cur {
			ch, err := dispatch.Processed(&view, r, outs[i], now)
			if errors.Is(err, dispatch.ErrRecordDone) {
				continue
			}
			if err != nil {
				return b, ch, nil, err
			}
			re, err := recordEntity(r)
			if err != nil {
				return nil, dispatch.Change{}, nil, err
			}
			ops = append(ops, tablestore.ReplaceOp(re))
			all.Merge(ch)
			written[i] = true
		}
		if len(ops) == 0 {
			return b, all, written, dispatch.ErrRecordDone
		}
		next := shard{ready: sh.ready, processed: view.ProcessedCount, failed: view.ErrorCount, etag: sh.etag}
		ops = append(ops, tablestore.ReplaceOp(shardEntity(b.BatchID, k, next)))
		err := s.tab.Record(ctx, b, all.Events, ops...)
		if err == nil {
			after, ch, err := s.afterProcessed(ctx, b, all, next)
			return after, ch, written, err
		}
		if !lostRace(err) || attempt >= recordAttempts {
			return nil, dispatch.Change{}, nil, err
		}
		time.Sleep(time.Duration(rand.IntN(5*min(attempt, 10))) * time.Millisecond)
	}
}

// afterProcessed keeps the change's finish only when every shard is done and this job is the
// first to see it (it inserts the finish-asked row), and returns the
// batch with the sums (read only when the record's own shard just completed).
func (s *Store) afterProcessed(ctx context.Context, b *dispatch.Batch, ch dispatch.Change, mine shard) (*dispatch.Batch, dispatch.Change, error) {
	out := *b
	finish := false
	if mine.done() {
		p, f, _, err := s.Counts(ctx, b.BatchID)
		if err != nil {
			return nil, dispatch.Change{}, err
		}
		out.ProcessedCount, out.ErrorCount = p, f
		if finish = out.Done(); finish {
			// two shards completing together both see the sum: the one that inserts the
			// finish row asks for the finish, so one finish message leaves
			_, err := s.tab.Rows().Insert(ctx, tablestore.Entity{PartitionKey: b.BatchID, RowKey: rowFinishAsked,
				Props: map[string]any{"atNs": time.Now().UnixNano()}})
			switch {
			case apperr.KindOf(err) == apperr.KindConflict:
				finish = false
			case err != nil:
				return nil, dispatch.Change{}, err
			}
		}
	}
	effs := ch.Effects[:0:0]
	for _, e := range ch.Effects {
		if e.Kind != dispatch.EffectFinish || finish {
			effs = append(effs, e)
		}
	}
	ch.Effects = effs
	return &out, ch, nil
}

// recordsOf reads records of indexes (ascending) of batch batchID, whose record groups have
// group records (Batch.Group; 0: unknown, the batch row is read in the same query for it),
// with the counter shards in one query (a range of record rows and the shard rows), each
// record's Counter its shard. Errors: ErrRecordNotFound when one is missing; the tablestore
// ones.
func (s *Store) recordsOf(ctx context.Context, batchID string, group int, indexes []int) ([]*dispatch.Record, error) {
	lo, hi := indexes[0], indexes[0]
	for _, i := range indexes {
		lo, hi = min(lo, i), max(hi, i)
	}
	filter := "(RowKey ge " + tablestore.Quote(recordKey(lo)) + " and RowKey le " + tablestore.Quote(recordKey(hi)) + ") or " + shardFilter
	if group == 0 {
		filter += " or RowKey eq " + tablestore.Quote(rowBatch)
	}
	rows, err := s.tab.Rows().Query(ctx, batchID, &tablestore.QueryOptions{Filter: "(" + filter + ")"})
	if err != nil {
		return nil, err
	}
	byIndex := map[int]*dispatch.Record{}
	shards := map[int]shard{}
	for _, e := range rows {
		if k, ok := parseShardKey(e.RowKey); ok {
			shards[k] = shardFrom(e)
			continue
		}
		if e.RowKey == rowBatch {
			group = groupOf(e)
			continue
		}
		r, err := recordFrom(e)
		if err != nil {
			return nil, err
		}
		byIndex[r.Index] = r
	}
	out := make([]*dispatch.Record, len(indexes))
	for i, index := range indexes {
		r := byIndex[index]
		if r == nil {
			return nil, ErrRecordNotFound
		}
		out[i] = r
		if group == 0 {
			continue // no batch row (an intake under way): no shards either
		}
		if sh, ok := shards[shardOf(group, index)]; ok {
			r.Counter = sh.String()
		}
	}
	return out, nil
}

func parseShardKey(k string) (int, bool) {
	v, ok := strings.CutPrefix(k, prefixShard)
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(v)
	return n, err == nil
}

// String is the shard as Record.Counter carries it: ready/processed/failed/etag.
func (s shard) String() string {
	return fmt.Sprintf("%d/%d/%d/%s", s.ready, s.processed, s.failed, s.etag)
}

// parseCounter reads Record.Counter; false for none (a batch without shards).
func parseCounter(v string) (shard, bool) {
	f := strings.SplitN(v, "/", 4)
	if len(f) != 4 || f[3] == "" {
		return shard{}, false
	}
	var n [3]int
	for i := range n {
		var err error
		if n[i], err = strconv.Atoi(f[i]); err != nil {
			return shard{}, false
		}
	}
	return shard{ready: n[0], processed: n[1], failed: n[2], etag: f[3]}, true
}

// lostRace reports a transaction refused because a row it conditions on changed meanwhile.
func lostRace(err error) bool { return apperr.KindOf(err) == apperr.KindPrecondition }
