package dispatch

import (
	"context"
	"time"

	"github.com/esign-svc/esign/shared/kernel"
)

// EvArtifactFailed records that a finish given up by the host ended the batch without its
// combined PDF or ZIP bundle (data: what, reason).
const EvArtifactFailed = "batch.artifact_failed"

// Errors of a notice sent once (BatchStore.SendNotice): the kernel's, under dispatch's names.
var (
	// ErrNoticeSent: the notice was sent (or skipped) before; acknowledge without sending again.
	ErrNoticeSent = kernel.ErrNoticeSent
	// ErrNoticeInFlight: another delivery of the message is sending the notice now.
	ErrNoticeInFlight = kernel.ErrNoticeInFlight
)

// The processor's use cases (dispatchjob). Unlike the routes' transitions they do not emit:
// each returns the stored change, whose effects the job interprets (effects.EmitBatchProgress),
// so a job decides which outputs a redelivered message repeats. The job checks a message's
// tenant on Load (answering another tenant's message as the queue protocol says); every
// transition checks it again inside the store's update.

// Load reads the batch a processor message names. Errors: ErrBatchNotFound; the store's.
func (s *Batches) Load(ctx context.Context, batchID string) (*Batch, error) {
	return s.Store.Load(ctx, batchID)
}

// change is a processor transition: the tenant checked on the batch as loaded inside the
// update, the change stamped by who. On a step error the batch as loaded comes back with it
// (when the store returns it) and nothing is written.
func (s *Batches) change(ctx context.Context, tenant, batchID string, who kernel.Actor, move func(*Batch) (Change, error)) (*Batch, Change, error) {
	return s.Store.Update(ctx, batchID, func(b *Batch) (Change, error) {
		if b.TenantID != tenant {
			return Change{}, ErrBatchNotFound
		}
		ch, err := move(b)
		ch.By(who)
		return ch, err
	})
}

// Start moves a queued batch of the tenant to processing (StartProcessing). Errors:
// ErrNotQueued with the batch as it is (another delivery of the message may have started it);
// ErrBatchNotFound; the store's.
func (s *Batches) Start(ctx context.Context, tenant, batchID string, who kernel.Actor) (*Batch, Change, error) {
	return s.change(ctx, tenant, batchID, who, func(b *Batch) (Change, error) {
		return StartProcessing(b, s.Now().UTC())
	})
}

// Fanout is one page of a processing batch's fan-out: the indexes of the pending ready records
// from index from on (at most limit ready records read), and the index the next page starts
// at (0: this was the last page).
type Fanout struct {
	Pending []int
	Next    int
}

// FanoutPage reads the fan-out page of batch b from index from. Errors: the store's.
func (s *Batches) FanoutPage(ctx context.Context, b *Batch, from, limit int) (Fanout, error) {
	page, err := s.Store.RecordsFrom(ctx, b.BatchID, RecordReady, from, limit)
	if err != nil {
		return Fanout{}, err
	}
	var f Fanout
	for _, r := range page.Records {
		if r.State == RecordPending {
			f.Pending = append(f.Pending, r.Index)
		}
	}
	if page.Next != "" {
		f.Next = page.Records[len(page.Records)-1].Index + 1
	}
	return f, nil
}

// EachDone calls fn with every done record of batch b in index order, reading limit records
// at a time. Errors: the store's; fn's.
func (s *Batches) EachDone(ctx context.Context, b *Batch, limit int, fn func(r *Record) error) error {
	after := ""
	for {
		page, err := s.Store.Records(ctx, b.BatchID, string(RecordDone), after, limit)
		if err != nil {
			return err
		}
		for i := range page.Records {
			if err := fn(&page.Records[i]); err != nil {
				return err
			}
		}
		if after = page.Next; after == "" {
			return nil
		}
	}
}

// Artifacts are what a finish made: the combined PDF's or the ZIP bundle's path, or what it
// could not make (Failed: "combined" or "bundle") and why (Reason, a code).
type Artifacts struct {
	Combined, Bundle string
	Failed, Reason   string
}

// Finish ends a processing batch of the tenant completed or partially-failed (Finish) with
// what a made, once (under the batch row's ETag), its counters summed from the store's; a failed artifact is recorded first as EvArtifactFailed. Errors:
// ErrNotProcessing for a batch finished before; ErrBatchNotFound; the store's.
func (s *Batches) Finish(ctx context.Context, tenant, batchID string, who kernel.Actor, a Artifacts) (*Batch, Change, error) {
	// the record outcomes are counted on the store's counter shards, not on the batch row: the
	// finish writes their sums onto it (no record is outstanding once they add up)
	processed, failed, sharded, err := s.Store.Counts(ctx, batchID)
	if err != nil {
		return nil, Change{}, err
	}
	return s.change(ctx, tenant, batchID, who, func(b *Batch) (Change, error) {
		if sharded && b.State == StateProcessing {
			b.ProcessedCount, b.ErrorCount = processed, failed
		}
		var ch Change
		now := s.Now().UTC()
		if a.Failed != "" {
			ch.Record(EvArtifactFailed, kernel.NoSlot, now, map[string]any{"what": a.Failed, "reason": a.Reason})
		}
		fin, err := Finish(b, a.Combined, a.Bundle, now)
		ch.Merge(fin)
		return ch, err
	})
}

// Record reads record index of a batch. Errors: the store's (not found for an index the batch
// does not have).
func (s *Batches) Record(ctx context.Context, batchID string, index int) (*Record, error) {
	return s.Store.Record(ctx, batchID, index)
}

// Processed records outcome o of record r, as just read, of batch b as loaded (processing),
// when b is the tenant's, with the batch's counters in one transaction; the change of the
// record that completes the counts asks for the finish. Errors: ErrRecordDone or
// ErrNotProcessing for a record processed before (nothing written); ErrBatchNotFound (another
// tenant's batch, or r not of b); the store's.
func (s *Batches) Processed(ctx context.Context, tenant string, b *Batch, r *Record, o Outcome) (*Batch, Change, error) {
	if b.TenantID != tenant || r.BatchID != b.BatchID {
		return nil, Change{}, ErrBatchNotFound
	}
	return s.Store.Process(ctx, b, r, o, s.Now().UTC())
}

// RecordsOf reads the records of indexes (a record message's) of batch b with their counters
// (one read). Errors: the store's (not found for an index the batch does not have).
func (s *Batches) RecordsOf(ctx context.Context, b *Batch, indexes []int) ([]*Record, error) {
	return s.Store.RecordsOf(ctx, b, indexes)
}

// ProcessedMany is Processed for the outcomes outs of records recs, as just read (RecordsOf),
// of one record message: one transaction per counter shard. written says which outcomes were
// written (false: processed before). Errors: ErrRecordDone when none was; the others of
// Processed.
func (s *Batches) ProcessedMany(ctx context.Context, tenant string, b *Batch, recs []*Record, outs []Outcome) (*Batch, Change, []bool, error) {
	if b.TenantID != tenant || len(recs) != len(outs) {
		return nil, Change{}, nil, ErrBatchNotFound
	}
	for _, r := range recs {
		if r.BatchID != b.BatchID {
			return nil, Change{}, nil, ErrBatchNotFound
		}
	}
	if len(recs) == 0 {
		return b, Change{}, nil, ErrRecordDone
	}
	return s.Store.ProcessMany(ctx, b, recs, outs, s.Now().UTC())
}

// Notice sends a batch's notice of kind once and audits it by who: send delivers it and says
// to how many recipients; the store then marks the notice sent with batch.notice_sent {kind,
// count} (batch.notice_skipped {kind, reason no_recipient} for none) in one transaction. A
// failed send gives the claim back. Errors: ErrNoticeSent for a notice sent before (nothing
// sent); ErrNoticeInFlight; send's; the store's.
func (s *Batches) Notice(ctx context.Context, b *Batch, kind string, who kernel.Actor, lease time.Duration, send func() (int, error)) error {
	now := s.Now().UTC()
	return s.Store.SendNotice(ctx, b, kind, now, lease, func() ([]Event, error) {
		n, err := send()
		if err != nil {
			return nil, err
		}
		var ch Change
		if n == 0 {
			ch.Record(EvNoticeSkipped, kernel.NoSlot, now, map[string]any{"kind": kind, "reason": "no_recipient"})
		} else {
			ch.Record(EvNoticeSent, kernel.NoSlot, now, map[string]any{"kind": kind, "count": n})
		}
		ch.By(who)
		return ch.Events, nil
	})
}
