package effects

import (
	"context"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/dispatch"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/queues"
)

// EmitBatch adds the outputs of a batch change's effects: the approvers' notice at
// pending-approval, the batch on the dispatch queue once queued. Only the processor finishes a
// batch and tells its submitter, so EffectFinish and EffectNotifySubmitter (like any unknown
// kind) are an internal error here, before any output is added.
func EmitBatch(ctx context.Context, b *dispatch.Batch, ch dispatch.Change) error {
	outs, err := batchOutputs(b, ch)
	if err != nil {
		return err
	}
	return add(ctx, outs)
}

func batchOutputs(b *dispatch.Batch, ch dispatch.Change) ([]output, error) {
	var outs []output
	for _, e := range ch.Effects {
		switch e.Kind {
		case dispatch.EffectNotifyApprovers:
			outs = append(outs, to(queues.DispatchNotify, dispatch.NotifyMessage{BatchID: b.BatchID, TenantID: b.TenantID, Kind: dispatch.NoticeApprovers}))
		case dispatch.EffectEnqueue:
			outs = append(outs, to(queues.Dispatch, dispatch.BatchMessage{BatchID: b.BatchID, TenantID: b.TenantID}))
		default:
			return nil, apperr.New(apperr.KindInternal, esign.CodeUnknownEffect, "the dispatcher has no interpreter for the batch effect %q", string(e.Kind))
		}
	}
	return outs, nil
}

// EmitBatchProgress adds the outputs of the processor's batch changes: EffectFinish puts the
// batch on dispatch-finish, EffectNotifySubmitter puts the finished notice on dispatch-notify.
// Errors: esign.UnknownEffect (internal) for any other kind, before any output is added;
// funcproto.AddOutput's.
func EmitBatchProgress(ctx context.Context, b *dispatch.Batch, effs []dispatch.Effect) error {
	outs := make([]output, 0, len(effs))
	for _, e := range effs {
		switch e.Kind {
		case dispatch.EffectFinish:
			outs = append(outs, to(queues.DispatchFinish, dispatch.BatchMessage{BatchID: b.BatchID, TenantID: b.TenantID}))
		case dispatch.EffectNotifySubmitter:
			outs = append(outs, to(queues.DispatchNotify, dispatch.NotifyMessage{BatchID: b.BatchID, TenantID: b.TenantID, Kind: dispatch.NoticeFinished}))
		default:
			return esign.UnknownEffect(e.Kind)
		}
	}
	return add(ctx, outs)
}
