package delivery

import (
	"context"
	"errors"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/kernel"
)

// ExpirySchedule is the deliveries' expiry schedule (deliverystore.Expiries): the due entries,
// forgetting one, and adding a delivery at its expiry.
type ExpirySchedule interface {
	kernel.DueChecks
	Add(ctx context.Context, id string, at time.Time) error
}

// Expiries is the expiry timer's use case over the deliveries (issue 27): a delivery expires
// passively at ExpiresAt (its routes answer 410 from then on); this records it, once, as
// delivery.expired, which publishes DESIGN 17's event of that type in the same transaction.
type Expiries struct {
	Schedule ExpirySchedule
	Store    Store
}

// Run takes up to limit due entries of the schedule (no delivery is scanned) and records
// delivery.expired, stamped by who, for each delivery that is live (not revoked, not recorded
// expired) and past its expiry at now. An entry of a delivery not yet at its expiry goes back
// at its expiry; one of a delivery revoked, expired already or gone is forgotten. It answers
// how many deliveries it expired (CheckRun.Sent); a failure keeps the entry for the next run
// and comes back joined.
func (e *Expiries) Run(ctx context.Context, now time.Time, limit int, who Actor) (kernel.CheckRun, error) {
	if e.Schedule == nil || e.Store == nil {
		return kernel.CheckRun{}, errors.New("delivery: the expiry schedule is not wired")
	}
	return kernel.RunDue(ctx, e.Schedule, now, limit, func(ctx context.Context, id string) (int, error) {
		s, err := e.Store.Load(ctx, id)
		if apperr.KindOf(err) == apperr.KindNotFound {
			return 0, nil
		}
		if err != nil {
			return 0, err
		}
		if s.State == StateRevoked || s.State == StateExpired {
			return 0, nil
		}
		if now.Before(s.ExpiresAt) {
			return 0, e.Schedule.Add(ctx, id, s.ExpiresAt)
		}
		_, ch, err := e.Store.Update(ctx, id, func(s *Session) (Change, error) {
			ch := Expire(s, now)
			ch.By(who)
			return ch, nil
		})
		if err != nil {
			return 0, err
		}
		if len(ch.Events) == 0 {
			return 0, nil // revoked or expired meanwhile
		}
		return 1, nil
	})
}
