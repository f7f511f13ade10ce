package dispatchjob

import (
	"context"
	"errors"

	"github.com/esign-svc/esign/shared/dispatch"
	"github.com/esign-svc/esign/shared/effects"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/queues"
)

// HandleDispatch is the Dispatch queue function (dispatch.BatchMessage). The first page (From
// 0) moves the batch from queued to processing; then it fans out one dispatch.RecordMessage per
// group of pending ready records (groups), from From on, at most PageSize records, and the next page as a BatchMessage on
// its own queue, so no invocation holds more than PageSize outputs. A redelivered message of a
// batch already processing fans its page out again (record jobs acknowledge a record processed
// before). A batch in another state is acknowledged with a log line.
func (j *Job) HandleDispatch(ctx context.Context, qm funcproto.QueueMessage) error {
	m, b, err := j.loadBatch(ctx, qm)
	if err != nil || b == nil {
		return err
	}
	if m.From == 0 && b.State == dispatch.StateQueued {
		var ch dispatch.Change
		b, ch, err = j.batches().Start(ctx, m.TenantID, b.BatchID, systemActor)
		switch {
		case errors.Is(err, dispatch.ErrNotQueued) && b != nil && b.State == dispatch.StateProcessing:
			// another delivery of this message started it: fan out again
		case err != nil:
			return j.notQueued(ctx, b, err)
		case ch.Asks(dispatch.EffectFinish):
			return effects.EmitBatchProgress(ctx, b, ch.Effects)
		}
	}
	if b.State != dispatch.StateProcessing {
		funcproto.Logf(ctx, "dispatch: batch %s is %s; message acknowledged", b.BatchID, b.State)
		return nil
	}
	page, err := j.batches().FanoutPage(ctx, b, m.From, j.page())
	if err != nil {
		return err
	}
	for _, group := range groups(page.Pending, b.Group()) {
		if err := effects.Send(ctx, queues.DispatchRecord, dispatch.RecordMessage{BatchID: b.BatchID, TenantID: b.TenantID,
			Index: group[0], Indexes: group}); err != nil {
			return err
		}
	}
	if page.Next > 0 {
		if err := effects.Send(ctx, queues.Dispatch, dispatch.BatchMessage{BatchID: b.BatchID, TenantID: b.TenantID, From: page.Next}); err != nil {
			return err
		}
	}
	funcproto.Logf(ctx, "dispatch: batch %s: %d record(s) from index %d queued", b.BatchID, len(page.Pending), m.From)
	return nil
}

// notQueued acknowledges a dispatch message of a batch that is not waiting (cancelled,
// finished); other errors are returned.
func (j *Job) notQueued(ctx context.Context, b *dispatch.Batch, err error) error {
	if !errors.Is(err, dispatch.ErrNotQueued) || b == nil {
		return err
	}
	funcproto.Logf(ctx, "dispatch: batch %s is %s, not queued; message acknowledged", b.BatchID, b.State)
	return nil
}

// groups splits ascending record indexes by their group of size (index / size, the batch's
// Group): one record message each.
func groups(indexes []int, size int) [][]int {
	var out [][]int
	for i, index := range indexes {
		if i == 0 || index/size != indexes[i-1]/size {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], index)
	}
	return out
}
