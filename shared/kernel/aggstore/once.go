package aggstore

import (
	"context"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/azure/tablestore"
	"github.com/esign-svc/esign/shared/kernel"
)

// Once is the claim protocol of a side effect that must happen once per aggregate and key (an
// e-mail sent): a row of the aggregate's partition (RowKey: the store's prefix and the key) is
// inserted before the effect ("sending", with the claim time) and marked done with the change
// that records it, in one transaction. A second claimant finds the row: done
// (kernel.ErrNoticeSent: acknowledge without acting) or held (kernel.ErrNoticeInFlight: try
// later). A claim older than the lease is taken over (its holder died between claiming and
// completing), so the effect happens twice only when a holder dies after the effect and
// before recording it.
type Once struct {
	t *tablestore.Store
}

// Once is the claim protocol over this table's partitions.
func (t *Table[A]) Once() Once { return Once{t: t.t} }

const (
	onceSending = "sending"
	onceDone    = "sent"
)

// Claim is the right to act once, held until its Done operation commits or Release.
type Claim struct {
	ID     string // the aggregate
	RowKey string
	etag   string
}

// Claim takes the row (id, rowKey). Errors: kernel.ErrNoticeSent; kernel.ErrNoticeInFlight
// for a claim younger than lease (or one claimed and released over and over meanwhile); the
// tablestore ones.
func (o Once) Claim(ctx context.Context, id, rowKey string, now time.Time, lease time.Duration) (Claim, error) {
	row := tablestore.Entity{PartitionKey: id, RowKey: rowKey, Props: map[string]any{"state": onceSending, "claimedAtNs": now.UnixNano()}}
	var prev tablestore.Entity
	for attempt := 1; ; attempt++ {
		etag, err := o.t.Insert(ctx, row)
		if err == nil {
			return Claim{ID: id, RowKey: rowKey, etag: etag}, nil
		}
		if apperr.KindOf(err) != apperr.KindConflict {
			return Claim{}, err
		}
		prev, err = o.t.Get(ctx, id, rowKey)
		if apperr.KindOf(err) == apperr.KindNotFound && attempt < MaxAttempts {
			continue // released meanwhile: claim again
		}
		if apperr.KindOf(err) == apperr.KindNotFound {
			return Claim{}, kernel.ErrNoticeInFlight
		}
		if err != nil {
			return Claim{}, err
		}
		break
	}
	if prev.String("state") == onceDone {
		return Claim{}, kernel.ErrNoticeSent
	}
	if now.Sub(time.Unix(0, prev.Int64("claimedAtNs"))) < lease {
		return Claim{}, kernel.ErrNoticeInFlight
	}
	row.ETag = prev.ETag
	etag, err := o.t.Replace(ctx, row)
	if apperr.KindOf(err) == apperr.KindPrecondition {
		return Claim{}, kernel.ErrNoticeInFlight
	}
	if err != nil {
		return Claim{}, err
	}
	return Claim{ID: id, RowKey: rowKey, etag: etag}, nil
}

// DoneOp is the operation that marks the claim done, for the transaction that records the
// effect; it fails (precondition) when the claim was taken over meanwhile.
func (c Claim) DoneOp(now time.Time) tablestore.Op {
	return tablestore.ReplaceOp(tablestore.Entity{PartitionKey: c.ID, RowKey: c.RowKey, ETag: c.etag,
		Props: map[string]any{"state": onceDone, "sentAtNs": now.UnixNano()}})
}

// Release gives the claim up after a failed effect, so a later claimant may act. A claim
// already gone or taken over is not an error. Errors: the tablestore ones.
func (o Once) Release(ctx context.Context, c Claim) error {
	err := o.t.Delete(ctx, c.ID, c.RowKey, c.etag)
	if k := apperr.KindOf(err); k == apperr.KindNotFound || k == apperr.KindPrecondition {
		return nil
	}
	return err
}

// Done reports whether the row (id, rowKey) is marked done: one point read.
func (o Once) Done(ctx context.Context, id, rowKey string) (bool, error) {
	e, err := o.t.Get(ctx, id, rowKey)
	if apperr.KindOf(err) == apperr.KindNotFound {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return e.String("state") == onceDone, nil
}
