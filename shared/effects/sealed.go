package effects

import (
	"context"

	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/queues"
)

// noticeKinds maps the sealing effects to notification kinds.
var noticeKinds = map[esign.EffectKind]notify.Kind{
	esign.EffectDocumentsReady:  notify.KindDocumentsReady,
	esign.EffectSignerCompleted: notify.KindSignerCompleted,
	esign.EffectSealFailure:     notify.KindSealFailure,
}

// EmitSealed adds the outputs of the seal job's changes (sealed, or seal.failed): one
// esign.NotifyMessage per notice effect on the notifications queue, and the session's ids on
// the signeddelivery queue for esign.EffectDeliverSigned. The notification job applies the
// requester gate (requestedByEmail). Errors: esign.UnknownEffect (internal) for a kind that is
// not a sealing notice, before any output is added; funcproto.AddOutput's (only outside an
// invocation).
func EmitSealed(ctx context.Context, sess *esign.Session, effs []esign.Effect) error {
	outs := make([]output, 0, len(effs))
	var deliver []output
	for _, e := range effs {
		if e.Kind == esign.EffectDeliverSigned { // the delivery that waited for signing, last
			deliver = []output{to(queues.SignedDelivery, esign.SealMessage{GroupID: sess.GroupID, TenantID: sess.TenantID})}
			continue
		}
		kind, ok := noticeKinds[e.Kind]
		if !ok {
			return esign.UnknownEffect(e.Kind)
		}
		outs = append(outs, to(queues.Notifications, esign.NotifyMessage{Kind: string(kind), GroupID: sess.GroupID, TenantID: sess.TenantID, Slot: e.Slot}))
	}
	return add(ctx, append(outs, deliver...))
}
