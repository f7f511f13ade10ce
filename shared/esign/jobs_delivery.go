package esign

import (
	"context"
	"errors"
	"time"
)

// StartedDelivery records, on the complete session groupID, the delivery sessions of its signed
// PDF (DeliveryStarted, by who at now), which drops the delivery plan and its recipients'
// addresses. A plan already gone (recorded before) is not an error. Errors: ErrSessionNotFound;
// the store's.
func (u *SessionJobs) StartedDelivery(ctx context.Context, groupID string, deliveryIDs []string, now time.Time, who Actor) error {
	return u.settleDelivery(ctx, groupID, who, func(s *Session) (Change, error) {
		return DeliveryStarted(s, deliveryIDs, now)
	})
}

// FailedDelivery records that the planned delivery of the complete session groupID can never be
// made (DeliveryFailed with code, a problem code, by who at now) and drops the plan. A plan
// already gone is not an error. Errors: ErrSessionNotFound; the store's.
func (u *SessionJobs) FailedDelivery(ctx context.Context, groupID, code string, now time.Time, who Actor) error {
	return u.settleDelivery(ctx, groupID, who, func(s *Session) (Change, error) {
		return DeliveryFailed(s, code, now)
	})
}

// settleDelivery stores step's change of the delivery plan; ErrNoDeliveryPlanned is nil.
func (u *SessionJobs) settleDelivery(ctx context.Context, groupID string, who Actor, step func(*Session) (Change, error)) error {
	_, _, _, err := update(ctx, u.Store, groupID, func(s *Session, _ []Slot) (Change, Extras, error) {
		ch, err := step(s)
		if err == nil {
			ch.By(who)
		}
		return ch, Extras{}, err
	})
	if errors.Is(err, ErrNoDeliveryPlanned) {
		return nil
	}
	return err
}
