// Package effects turns a state-machine Change's effects into a function's queue outputs:
// notifications on the "notify" binding, the seal message on the "seal" binding, the batch's
// messages. The dispatcher's routes and the processor's jobs that start signing sessions (the
// workflow auto-trigger) use it alike. The host writes the outputs only when the function
// answers 2xx, and only after the change was persisted, so a message never announces a
// transition that did not happen.
package effects

import (
	"context"

	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/notify"
)

// Output binding names in the functions' function.json.
const (
	BindingNotify = "notify"
	BindingSeal   = "seal"
)

// output is one queue message for an output binding.
type output struct {
	binding string
	msg     any
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
	notice := func(kind notify.Kind, slot int) {
		outs = append(outs, output{BindingNotify, &esign.NotifyMessage{Kind: string(kind), GroupID: s.GroupID, TenantID: s.TenantID, Slot: slot}})
	}
	for _, e := range ch.Effects {
		switch e.Kind {
		case esign.EffectInvite:
			// One message for all of the change's invitations: one target per slot.
			if invites == nil {
				invites = &esign.NotifyMessage{Kind: string(notify.KindInvitation), GroupID: s.GroupID, TenantID: s.TenantID, Reminder: reminder}
				outs = append(outs, output{BindingNotify, invites})
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
			outs = append(outs, output{BindingSeal, esign.SealMessage{GroupID: s.GroupID, TenantID: s.TenantID}})
		default:
			return nil, esign.UnknownEffect(e.Kind)
		}
	}
	if invites != nil && len(invites.Targets) == 1 { // a single invitation keeps the one-slot form
		invites.Slot, invites.LinkJTI, invites.Targets = invites.Targets[0].Slot, invites.Targets[0].LinkJTI, nil
	}
	return outs, nil
}
