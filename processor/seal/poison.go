package seal

import (
	"context"
	"errors"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/effects"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/queues"
)

// PoisonReason is the seal.failed reason recorded for a message that exhausted its retries.
const PoisonReason = "sealing failed after retries"

// HandlePoison is the seal-poison queue's function: a seal message the host gave up on. It
// records seal.failed (the session stays sealing, so an admin re-queue can retry) and queues
// the seal-failure notice; for a session whose row does not decode, with the reason the seal
// job gives it. A session already complete, not sealing, or unknown is acknowledged
// with no effect. Errors: Permanent for a message that does not decode; ErrSealBusy (retried)
// while an attempt holds the session's seal lock; a plain error (retried) when storage fails.
func (j *Job) HandlePoison(ctx context.Context, msg funcproto.QueueMessage) error {
	var m esign.SealMessage
	if err := msg.Decode(&m); err != nil {
		return err
	}
	if m.GroupID != "" {
		// Never record a failure while an attempt is sealing: busy is retried.
		lctx, release, err := j.lock(ctx, m.GroupID)
		if err != nil {
			return err
		}
		defer release()
		ctx = lctx
	}
	sess, slots, err := j.d.Sessions.ToSeal(ctx, m.TenantID, m.GroupID)
	if apperr.KindOf(err) == apperr.KindNotFound {
		funcproto.Logf(ctx, "seal-poison: no session for the message; acknowledged")
		return nil
	}
	var c *esign.CorruptError
	if errors.As(err, &c) && c.Session.State == esign.SessionSealing {
		return j.recordCorrupt(ctx, &corruptSession{c})
	}
	if errors.Is(err, esign.ErrWrongTenant) {
		return errWrongTenant()
	}
	if err != nil {
		return err
	}
	ch, err := j.failSeal(ctx, sess, slots, j.now(), PoisonReason)
	if err != nil {
		return err
	}
	if ch == nil {
		funcproto.Logf(ctx, "seal-poison: group %s is %s; nothing to record", sess.GroupID, sess.State)
		return nil
	}
	funcproto.Logf(ctx, "seal-poison: group %s: seal.failed recorded", sess.GroupID)
	return effects.EmitSealed(ctx, sess, ch.Effects)
}

// Reconcile is the timer function (every five minutes): it re-queues, through the seal output
// binding, sessions that have been sealing for longer than StuckAfter with no recorded seal
// failure (a lost or dropped seal message, or an attempt that died holding the lock, which
// expires after LockTTL); esign.SessionJobs.StuckSeals picks them and numbers the attempts.
// Sessions with a seal.failed wait for an admin re-queue. At most ReconcileLimit sessions are
// looked at per run. Errors: the store's (the run fails and the next one tries again).
func (j *Job) Reconcile(ctx context.Context, _ funcproto.TimerInfo) error {
	stuck, err := j.d.Sessions.StuckSeals(ctx, j.now(), ReconcileLimit, j.d.StuckAfter)
	if err != nil {
		return err
	}
	for _, m := range stuck {
		if err := effects.Send(ctx, queues.Seal, m); err != nil {
			return err
		}
	}
	if len(stuck) > 0 {
		funcproto.Logf(ctx, "reconcile-sealing: re-queued %d stuck session(s)", len(stuck))
	}
	return nil
}
