package esign

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
)

// ExpireDue is the expiry timer's transition: it moves up to limit live sessions past their
// expiry at now to expired (their open slots too: Expire), stamped by who, forgets the expiry
// entries of sessions that ended otherwise or are gone, and deletes up to limit cross-device
// tokens that lapsed unredeemed. It answers how many sessions it expired. A failure on one
// session does not stop the others (it stays due and the next run tries again); the errors
// come back joined.
func (u *SessionJobs) ExpireDue(ctx context.Context, now time.Time, limit int, who Actor) (int, error) {
	due, err := u.Store.DueForExpiry(ctx, now, limit)
	if err != nil {
		return 0, err
	}
	var errs []error
	n := 0
	for _, groupID := range due {
		expired, err := u.expire(ctx, groupID, now, who)
		if err != nil {
			errs = append(errs, fmt.Errorf("session %s: %w", groupID, err))
			continue
		}
		if expired {
			n++
		}
	}
	if _, err := u.Store.SweepTransfers(ctx, now, limit); err != nil {
		errs = append(errs, fmt.Errorf("transfer tokens: %w", err))
	}
	return n, errors.Join(errs...)
}

// expire moves one session to expired (retrying once on a lost race) and forgets its expiry row.
func (u *SessionJobs) expire(ctx context.Context, groupID string, now time.Time, who Actor) (bool, error) {
	for attempt := 0; ; attempt++ {
		sess, slots, err := u.Store.Load(ctx, groupID)
		if apperr.KindOf(err) == apperr.KindNotFound {
			return false, u.Store.ForgetOrphanExpiry(ctx, groupID, now)
		}
		if err != nil {
			return false, err
		}
		if !sess.State.Live() {
			return false, u.Store.ForgetExpiry(ctx, sess)
		}
		if !sess.Expired(now) {
			return false, nil // its expiry row is stale (not yet due by the session's own time)
		}
		ch := Expire(sess, slots, now)
		ch.By(who)
		err = u.Store.Commit(ctx, sess, slots, ch, Extras{})
		if isConcurrent(err) && attempt == 0 {
			continue
		}
		if err != nil {
			return false, err
		}
		return true, u.Store.ForgetExpiry(ctx, sess)
	}
}
