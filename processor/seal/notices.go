package seal

import (
	"context"

	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/notify"
)

// noticeKinds maps the sealing effects to notification kinds.
var noticeKinds = map[esign.EffectKind]notify.Kind{
	esign.EffectDocumentsReady:  notify.KindDocumentsReady,
	esign.EffectSignerCompleted: notify.KindSignerCompleted,
	esign.EffectSealFailure:     notify.KindSealFailure,
}

// BindingDeliver is the Seal function's output to queue "signeddelivery" (esign.EffectDeliverSigned).
const BindingDeliver = "deliver"

// queueNotices is the processor's effect interpreter: it adds one esign.NotifyMessage per
// notice effect to the notify output binding (queue "notifications"), and the session's ids to
// BindingDeliver for esign.EffectDeliverSigned. The notification job
// applies the requester gate (requestedByEmail). Errors: esign.UnknownEffect (internal) for a
// kind that is not a sealing notice, before any output is added; funcproto.AddOutput's (only
// outside an invocation).
func queueNotices(ctx context.Context, sess *esign.Session, effects []esign.Effect) error {
	msgs := make([]esign.NotifyMessage, 0, len(effects))
	deliver := false
	for _, e := range effects {
		if e.Kind == esign.EffectDeliverSigned {
			deliver = true
			continue
		}
		kind, ok := noticeKinds[e.Kind]
		if !ok {
			return esign.UnknownEffect(e.Kind)
		}
		msgs = append(msgs, esign.NotifyMessage{Kind: string(kind), GroupID: sess.GroupID, TenantID: sess.TenantID, Slot: e.Slot})
	}
	for _, msg := range msgs {
		if err := funcproto.AddOutput(ctx, BindingNotify, msg); err != nil {
			return err
		}
	}
	if deliver { // the delivery that waited for signing (processor/signeddelivery)
		return funcproto.AddOutput(ctx, BindingDeliver, esign.SealMessage{GroupID: sess.GroupID, TenantID: sess.TenantID})
	}
	return nil
}
