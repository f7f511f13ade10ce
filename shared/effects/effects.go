// Package effects is the one place that turns what a change does into queue messages: the
// interpreters of the state machines' effects (a session's, a sealed session's, a batch's, a
// workflow's), the deliveries and usage records of a stored change, and Send for the jobs'
// own messages (a fan-out page, a re-queue). Every message goes to a queue declared in
// shared/queues, on that queue's output binding, as its one message type; this package alone
// calls funcproto.AddOutput (a test checks it). The host writes the outputs only when the
// function answers 2xx, and only after the change was persisted, so a message never announces
// a transition that did not happen.
package effects

import (
	"context"

	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/queues"
)

// output is one queue message for its queue's output binding.
type output struct {
	binding string
	msg     any
}

// to is the output of m on queue q: the registry gives the binding, q's type checks m's.
func to[M any](q queues.Queue[M], m M) output { return output{q.Binding(), m} }

// Send adds m to the invocation's output binding of q (its function.json must declare it).
// Errors: funcproto.AddOutput's (outside an invocation; a value that does not marshal).
func Send[M any](ctx context.Context, q queues.Queue[M], m M) error {
	return add(ctx, []output{to(q, m)})
}

// Emit adds the outputs of ch's effects: one notification message for all of a change's
// invitations (a target per slot; the processor sends and records each on its own), one per
// notice, the seal message. Requester notices are gated here as the spec's table
// says (requestedByEmail; per-signer notices also by sendPerSignerNotices); the processor checks
// the gates again when it sends. Errors: esign.UnknownEffect (internal) for a kind the
// dispatcher does not carry out, before any output is added; funcproto.AddOutput's.
func Emit(ctx context.Context, s *esign.Session, slots []esign.Slot, ch esign.Change, reminder bool) error {
	outs, err := outputs(s, slots, ch, reminder)
	if err != nil {
		return err
	}
	return add(ctx, outs)
}

// add adds every output, in order.
func add(ctx context.Context, outs []output) error {
	for _, o := range outs {
		if err := funcproto.AddOutput(ctx, o.binding, o.msg); err != nil {
			return err
		}
	}
	return nil
}

// outputs interprets every effect of ch; a gated notice that its gate holds back is no output.
func outputs(s *esign.Session, slots []esign.Slot, ch esign.Change, reminder bool) ([]output, error) {
	requester := s.RequestedByEmailEnc != ""
	var outs []output
	var invites *esign.NotifyMessage
	at := -1 // invites' place in outs
	notice := func(kind notify.Kind, slot int) {
		outs = append(outs, to(queues.Notifications, esign.NotifyMessage{Kind: string(kind), GroupID: s.GroupID, TenantID: s.TenantID, Slot: slot}))
	}
	for _, e := range ch.Effects {
		switch e.Kind {
		case esign.EffectInvite:
			// One message for all of the change's invitations: one target per slot.
			if invites == nil {
				invites = &esign.NotifyMessage{Kind: string(notify.KindInvitation), GroupID: s.GroupID, TenantID: s.TenantID, Reminder: reminder}
				at, outs = len(outs), append(outs, output{}) // its output once all targets are in
			}
			invites.Targets = append(invites.Targets, esign.NotifyTarget{Slot: e.Slot, LinkJTI: slots[e.Slot].LinkJTI})
		case esign.EffectSignerNotice:
			if requester && s.SendPerSignerNotices {
				notice(notify.KindSignerNotice, e.Slot)
			}
		case esign.EffectDeclined:
			if requester {
				notice(notify.KindDeclineNotice, e.Slot)
			}
		case esign.EffectRevoked:
			if requester {
				notice(notify.KindRevokeNotice, -1)
			}
		case esign.EffectSeal:
			outs = append(outs, to(queues.Seal, esign.SealMessage{GroupID: s.GroupID, TenantID: s.TenantID}))
		default:
			return nil, esign.UnknownEffect(e.Kind)
		}
	}
	if invites != nil && len(invites.Targets) == 1 { // a single invitation keeps the one-slot form
		invites.Slot, invites.LinkJTI, invites.Targets = invites.Targets[0].Slot, invites.Targets[0].LinkJTI, nil
	}
	if invites != nil {
		outs[at] = to(queues.Notifications, *invites)
	}
	return outs, nil
}
