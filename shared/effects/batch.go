package effects

import (
	"context"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/dispatch"
	"github.com/esign-svc/esign/shared/esign"
)

// Output binding names of the batch routes (the render route and decide) in function.json.
const (
	BindingDispatch       = "dispatch"       // queue dispatch: dispatch.BatchMessage
	BindingDispatchNotify = "dispatchnotify" // queue dispatch-notify: dispatch.NotifyMessage
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
			outs = append(outs, output{BindingDispatchNotify, dispatch.NotifyMessage{BatchID: b.BatchID, TenantID: b.TenantID, Kind: dispatch.NoticeApprovers}})
		case dispatch.EffectEnqueue:
			outs = append(outs, output{BindingDispatch, dispatch.BatchMessage{BatchID: b.BatchID, TenantID: b.TenantID}})
		default:
			return nil, apperr.New(apperr.KindInternal, esign.CodeUnknownEffect, "the dispatcher has no interpreter for the batch effect %q", string(e.Kind))
		}
	}
	return outs, nil
}
