package workflowapi

import (
	"context"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/workflow"
)

// Output binding names in the workflow functions' function.json.
const (
	BindingNotify   = "workflownotify"   // queue workflow.QueueNotify
	BindingSeal     = "workflowseal"     // queue workflow.QueueSeal
	BindingCallback = "workflowcallback" // queue workflow.QueueCallback
)

// emit adds the queue messages of ch's effects. The host writes them only when the function
// answers 2xx, after the change was stored. A callback is queued only for a workflow with a
// callbackUrl. Errors: internal for an effect the dispatcher does not carry out (auto-trigger
// follows the seal, in the processor); funcproto.AddOutput's.
func emit(ctx context.Context, x *workflow.Workflow, ch kernel.Change) error {
	for _, e := range ch.Effects {
		var binding string
		var msg any
		note := func(kind string) *workflow.NotifyMessage {
			return &workflow.NotifyMessage{Kind: kind, WorkflowID: x.ID, TenantID: x.Tenant}
		}
		switch e.Kind {
		case workflow.EffectInviteParticipant:
			binding, msg = BindingNotify, note(workflow.NotifyInvitation)
		case workflow.EffectNotifyParticipant:
			binding, msg = BindingNotify, note(workflow.NotifyChanges)
		case workflow.EffectNotifyApprovers:
			m := note(workflow.NotifyApproval)
			m.Reviewer = x.CurrentReviewer()
			binding, msg = BindingNotify, m
		case workflow.EffectSeal:
			binding, msg = BindingSeal, workflow.SealMessage{WorkflowID: x.ID, TenantID: x.Tenant}
		case workflow.EffectCallback:
			if x.Setup.CallbackURL == "" {
				continue
			}
			binding, msg = BindingCallback, workflow.CallbackMessage{WorkflowID: x.ID, TenantID: x.Tenant, State: string(x.State)}
		default:
			return apperr.New(apperr.KindInternal, "unknown_effect", "the dispatcher does not carry out effect %s", e.Kind)
		}
		if err := funcproto.AddOutput(ctx, binding, msg); err != nil {
			return err
		}
	}
	return nil
}
