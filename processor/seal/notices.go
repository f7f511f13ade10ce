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

// queueNotices is the processor's effect interpreter: it adds one esign.NotifyMessage per
// notice effect to the notify output binding (queue "notifications"). The notification job
// applies the requester gate (requestedByEmail). Errors: esign.UnknownEffect (internal) for a
// kind that is not a sealing notice, before any output is added; funcproto.AddOutput's (only
// outside an invocation).
func queueNotices(ctx context.Context, sess *esign.Session, effects []esign.Effect) error {
	msgs := make([]esign.NotifyMessage, 0, len(effects))
	for _, e := range effects {
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
	return nil
}
