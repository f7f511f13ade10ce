package effects

import (
	"context"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/queues"
	"github.com/esign-svc/esign/shared/workflow"
)

// EmitWorkflow adds the queue messages of a workflow change's effects (the dispatcher's
// routes). A callback is queued only for a workflow with a callbackUrl. Errors: internal
// unknown_effect for an effect the dispatcher does not carry out (the auto-trigger follows the
// seal, in the processor: EmitWorkflowSealed); funcproto.AddOutput's.
func EmitWorkflow(ctx context.Context, x *workflow.Workflow, ch kernel.Change) error {
	for _, e := range ch.Effects {
		note := func(kind string) workflow.NotifyMessage {
			return workflow.NotifyMessage{Kind: kind, WorkflowID: x.ID, TenantID: x.Tenant}
		}
		var o output
		switch e.Kind {
		case workflow.EffectInviteParticipant:
			o = to(queues.WorkflowNotify, note(workflow.NotifyInvitation))
		case workflow.EffectNotifyParticipant:
			o = to(queues.WorkflowNotify, note(workflow.NotifyChanges))
		case workflow.EffectNotifyApprovers:
			m := note(workflow.NotifyApproval)
			m.Reviewer = x.CurrentReviewer()
			o = to(queues.WorkflowNotify, m)
		case workflow.EffectSeal:
			o = to(queues.WorkflowSeal, workflow.SealMessage{WorkflowID: x.ID, TenantID: x.Tenant})
		case workflow.EffectCallback:
			if x.Setup.CallbackURL == "" {
				continue
			}
			o = to(queues.WorkflowCallback, workflow.CallbackMessage{WorkflowID: x.ID, TenantID: x.Tenant, State: string(x.State)})
		default:
			return apperr.New(apperr.KindInternal, "unknown_effect", "the dispatcher does not carry out effect %s", e.Kind)
		}
		if err := add(ctx, []output{o}); err != nil {
			return err
		}
	}
	return nil
}

// EmitWorkflowSealed adds the outputs of a workflow's completion in the processor's seal job:
// the terminal callback (first attempt) when callback is asked and the workflow has a
// callbackUrl, and the auto-trigger when trigger is asked and the workflow has one to start
// (esign or delivery settings) that has not started. Errors: funcproto.AddOutput's.
func EmitWorkflowSealed(ctx context.Context, w *workflow.Workflow, callback, trigger bool) error {
	var outs []output
	if callback && w.Setup.CallbackURL != "" {
		outs = append(outs, to(queues.WorkflowCallback, workflow.CallbackMessage{WorkflowID: w.ID, TenantID: w.Tenant, Attempt: 1}))
	}
	if trigger && !w.Triggered() && (len(w.Setup.ESign) > 0 || len(w.Setup.Delivery) > 0) {
		outs = append(outs, to(queues.WorkflowTrigger, workflow.TriggerMessage{WorkflowID: w.ID, TenantID: w.Tenant}))
	}
	return add(ctx, outs)
}
