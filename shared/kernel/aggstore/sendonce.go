package aggstore

import (
	"context"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/azure/tablestore"
	"github.com/esign-svc/esign/shared/kernel"
)

// SendNotice is the one "notice once" of every store (issue 23): it claims the row rowKey of
// aggregate a's partition (Once), runs send, and marks the claim sent together with the audit
// events send returns in one transaction (their subjects from a, as loaded: its id and
// children), retrying that write once. A failed send gives the claim back (best effort: a claim
// left behind expires with its lease) and is returned as is. Errors: kernel.ErrNoticeSent (sent
// before: nothing sent); kernel.ErrNoticeInFlight while another claim younger than lease holds
// it, or when the claim was taken over while send ran (the new holder records it); send's; the
// tablestore ones.
func (t *Table[A]) SendNotice(ctx context.Context, a A, rowKey string, now time.Time, lease time.Duration, send func() ([]kernel.Event, error)) error {
	o := t.Once()
	c, err := o.Claim(ctx, t.kind.ID(a), rowKey, now, lease)
	if err != nil {
		return err
	}
	events, err := send()
	if err != nil {
		_ = o.Release(ctx, c)
		return err
	}
	err = t.done(ctx, a, c, events, now)
	if err != nil && err != kernel.ErrNoticeInFlight {
		err = t.done(ctx, a, c, events, now) // one retry
	}
	return err
}

// done marks claim c sent with events' audit rows, in one transaction. Errors:
// kernel.ErrNoticeInFlight when the claim was taken over (or given up) meanwhile; the
// tablestore ones.
func (t *Table[A]) done(ctx context.Context, a A, c Claim, events []kernel.Event, now time.Time) error {
	err := t.Record(ctx, a, events, c.DoneOp(now))
	if k := apperr.KindOf(err); err != nil && (k == apperr.KindPrecondition || k == apperr.KindNotFound) {
		return kernel.ErrNoticeInFlight
	}
	return err
}

// SendNoticeUpdate is SendNotice for a notice whose sending changes the aggregate's state (a
// delivery's invitation): it claims row rowKey of aggregate id's partition, runs send, and then
// Updates the aggregate with step, the claim marked sent at the time send answered in the same
// transaction. A claim taken over while send ran makes that write fail as a lost race
// (ErrConcurrent), as does a step error (returned with nothing written). Errors:
// kernel.ErrNoticeSent; kernel.ErrNoticeInFlight; send's; step's and Update's.
func (t *Table[A]) SendNoticeUpdate(ctx context.Context, id, rowKey string, now time.Time, lease time.Duration, send func() (time.Time, error), step Step[A]) (A, kernel.Change, error) {
	var zero A
	o := t.Once()
	c, err := o.Claim(ctx, id, rowKey, now, lease)
	if err != nil {
		return zero, kernel.Change{}, err
	}
	at, err := send()
	if err != nil {
		_ = o.Release(ctx, c)
		return zero, kernel.Change{}, err
	}
	return t.Update(ctx, id, func(a A) (kernel.Change, []tablestore.Op, error) {
		ch, extra, err := step(a)
		return ch, append(extra, c.DoneOp(at)), err
	})
}

// NoticeSent reports whether the notice of row rowKey of aggregate id's partition was sent:
// one point read. Errors: the tablestore ones.
func (t *Table[A]) NoticeSent(ctx context.Context, id, rowKey string) (bool, error) {
	return t.Once().Done(ctx, id, rowKey)
}
