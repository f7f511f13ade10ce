package notifyjob

import (
	"context"
	"errors"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/funcproto"
)

// HandlePoison is the notifications-poison queue function: the host gave up on a message after
// its retries, so it records notification.failed {kind, slot, code: retries_exhausted} in the
// session's audit trail and acknowledges. A message that does not decode or names no known
// session is acknowledged with a log line. A storage failure is retried (a redelivered poison
// message may then record the failure twice; the trail says so rather than saying nothing).
func (j *Job) HandlePoison(ctx context.Context, qm funcproto.QueueMessage) error {
	var m esign.NotifyMessage
	if err := qm.Decode(&m); err != nil {
		return err
	}
	if m.GroupID == "" {
		return funcproto.Permanent(apperr.Invalid(funcproto.CodeInvalidMessage, apperr.Field("groupId", "is required")))
	}
	_, slots, err := j.d.Sessions.Notice(ctx, m.TenantID, m.GroupID, false)
	if apperr.KindOf(err) == apperr.KindNotFound {
		return funcproto.Permanent(err)
	}
	if errors.Is(err, esign.ErrWrongTenant) {
		return funcproto.TenantMismatch("session")
	}
	if err != nil {
		return err
	}
	now := j.d.Now().UTC()
	for _, one := range m.Split() {
		if len(m.Targets) > 0 {
			if sent, err := j.d.Sessions.Sent(ctx, one.GroupID, MessageID(one)); err != nil {
				return err
			} else if sent {
				continue // this target went out before the others made the message fail
			}
		}
		if err := j.recordFailure(ctx, one, slots, now, "retries_exhausted", nil); err != nil {
			return err
		}
	}
	return nil
}
