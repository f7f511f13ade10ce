// Package effects turns a state-machine Change's effects into the dispatcher function's queue
// outputs: notifications on the "notify" binding, the seal message on the "seal" binding. The
// host writes them only when the function answers 2xx, and only after the change was persisted,
// so a message never announces a transition that did not happen.
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

// Emit adds the outputs of ch's effects. Requester notices are gated here as the spec's table
// says (requestedByEmail; per-signer notices also by sendPerSignerNotices); the processor checks
// the gates again when it sends.
func Emit(ctx context.Context, s *esign.Session, slots []esign.Slot, ch esign.Change, reminder bool) error {
	requester := s.RequestedByEmailEnc != ""
	for _, e := range ch.Effects {
		var msg *esign.NotifyMessage
		switch e.Kind {
		case esign.EffectInvite:
			msg = &esign.NotifyMessage{Kind: string(notify.KindInvitation), Slot: e.Slot, LinkJTI: slots[e.Slot].LinkJTI, Reminder: reminder}
		case esign.EffectSignerNotice:
			if requester && s.SendPerSignerNotices {
				msg = &esign.NotifyMessage{Kind: string(notify.KindSignerNotice), Slot: e.Slot}
			}
		case esign.EffectDeclined:
			if requester {
				msg = &esign.NotifyMessage{Kind: string(notify.KindDeclineNotice), Slot: e.Slot}
			}
		case esign.EffectRevoked:
			if requester {
				msg = &esign.NotifyMessage{Kind: string(notify.KindRevokeNotice), Slot: -1}
			}
		case esign.EffectSeal:
			if err := funcproto.AddOutput(ctx, BindingSeal, esign.SealMessage{GroupID: s.GroupID, TenantID: s.TenantID}); err != nil {
				return err
			}
		}
		if msg != nil {
			msg.GroupID, msg.TenantID = s.GroupID, s.TenantID
			if err := funcproto.AddOutput(ctx, BindingNotify, msg); err != nil {
				return err
			}
		}
	}
	return nil
}
