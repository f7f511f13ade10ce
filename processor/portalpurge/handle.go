package portalpurge

import (
	"context"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/portalclient"
)

// Handle is the portalpurge queue function. Replies (through funcproto.QueueHandler):
//   - nil after the portal purged (or already forgot) the session's slots, recording pii.purged
//     unless the trail already holds the portal's pii.purged;
//   - nil after recording pii.purge_skipped once, when no portal API is configured;
//   - nil after recording pii.purge_failed {what, code: portal_purge_rejected} when the portal
//     refuses the request (a 4xx other than 404, 408, 429: retrying cannot help);
//   - nil with a log line for an unknown session or one that is not complete;
//   - Permanent for a message that does not decode, lacks ids, or names another tenant;
//   - a plain error, retried by the host and then poisoned, when the portal is unavailable
//     (5xx, 408, 429, time-out) or storage fails.
func (j *Job) Handle(ctx context.Context, qm funcproto.QueueMessage) error {
	sess, slots, err := j.load(ctx, qm, "portal-purge")
	if err != nil || sess == nil {
		return err
	}
	if sess.State != esign.SessionComplete {
		funcproto.Logf(ctx, "portal-purge: group %s is %s, not complete; message acknowledged", sess.GroupID, sess.State)
		return nil
	}
	if j.d.Portal == nil {
		return j.skip(ctx, sess, slots)
	}
	done, err := j.recorded(ctx, sess.GroupID, esign.EvPIIPurged)
	if err != nil {
		return err
	}
	ids := sessionIDs(slots)
	err = j.d.Portal.Purge(ctx, portalclient.PurgeRequest{GroupID: sess.GroupID, SessionIDs: ids, Reason: portalclient.ReasonSealed})
	if apperr.KindOf(err) == apperr.KindInvalid {
		funcproto.Logf(ctx, "portal-purge: group %s: the portal refused the purge (%s)", sess.GroupID, errCode(err))
		if done {
			return nil
		}
		return j.record(ctx, sess, slots, EvPurgeFailed, map[string]any{"code": errCode(err)})
	}
	if err != nil {
		funcproto.Logf(ctx, "portal-purge: group %s: the portal is unavailable (%s); will retry", sess.GroupID, errCode(err))
		return err
	}
	if done {
		funcproto.Logf(ctx, "portal-purge: group %s purged again; pii.purged already recorded", sess.GroupID)
		return nil
	}
	if err := j.record(ctx, sess, slots, esign.EvPIIPurged, map[string]any{"slots": len(ids)}); err != nil {
		return err
	}
	funcproto.Logf(ctx, "portal-purge: group %s: portal data of %d slot(s) purged", sess.GroupID, len(ids))
	return nil
}

// skip records pii.purge_skipped once: there is no portal API to ask.
func (j *Job) skip(ctx context.Context, sess *esign.Session, slots []esign.Slot) error {
	done, err := j.recorded(ctx, sess.GroupID, EvPurgeSkipped)
	if err != nil || done {
		return err
	}
	funcproto.Logf(ctx, "portal-purge: group %s: no portal API configured; purge skipped", sess.GroupID)
	return j.record(ctx, sess, slots, EvPurgeSkipped, map[string]any{"reason": ReasonNotConfigured})
}

// HandlePoison is the portalpurge-poison queue function: the host gave up on a purge after its
// retries. It records pii.purge_failed {what, code: retries_exhausted} unless the portal's
// pii.purged is already in the trail, and acknowledges. An unknown session is acknowledged with
// a log line. Errors: Permanent for a message that does not decode, lacks ids or names another
// tenant; a plain error (retried) when storage fails.
func (j *Job) HandlePoison(ctx context.Context, qm funcproto.QueueMessage) error {
	sess, slots, err := j.load(ctx, qm, "portal-purge-poison")
	if err != nil || sess == nil {
		return err
	}
	done, err := j.recorded(ctx, sess.GroupID, esign.EvPIIPurged)
	if err != nil {
		return err
	}
	if done {
		funcproto.Logf(ctx, "portal-purge-poison: group %s was purged meanwhile; acknowledged", sess.GroupID)
		return nil
	}
	funcproto.Logf(ctx, "portal-purge-poison: group %s: portal purge failed after retries", sess.GroupID)
	return j.record(ctx, sess, slots, EvPurgeFailed, map[string]any{"code": CodeRetriesExhausted})
}
