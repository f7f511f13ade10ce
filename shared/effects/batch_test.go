package effects

import (
	"testing"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/dispatch"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/queues"
)

// A pending-approval batch notifies its approvers, a queued one goes on the dispatch queue, and
// the processor's effects are refused before any output.
func TestBatchOutputs(t *testing.T) {
	t.Parallel()
	b := &dispatch.Batch{BatchID: "b1", TenantID: "t1"}
	ask := func(kinds ...dispatch.EffectKind) dispatch.Change {
		var c dispatch.Change
		for _, k := range kinds {
			c.Ask(k, kernel.NoSlot)
		}
		return c
	}
	outs, err := batchOutputs(b, ask(dispatch.EffectNotifyApprovers))
	if err != nil || len(outs) != 1 || outs[0].binding != queues.DispatchNotify.Binding() ||
		outs[0].msg != (dispatch.NotifyMessage{BatchID: "b1", TenantID: "t1", Kind: dispatch.NoticeApprovers}) {
		t.Fatalf("notify approvers: %+v %v", outs, err)
	}
	outs, err = batchOutputs(b, ask(dispatch.EffectEnqueue))
	if err != nil || len(outs) != 1 || outs[0].binding != queues.Dispatch.Binding() || outs[0].msg != (dispatch.BatchMessage{BatchID: "b1", TenantID: "t1"}) {
		t.Fatalf("enqueue: %+v %v", outs, err)
	}
	for _, k := range []dispatch.EffectKind{dispatch.EffectFinish, dispatch.EffectNotifySubmitter, "other"} {
		if outs, err := batchOutputs(b, ask(dispatch.EffectEnqueue, k)); apperr.KindOf(err) != apperr.KindInternal || outs != nil {
			t.Errorf("%s: %+v %v", k, outs, err)
		}
	}
}
