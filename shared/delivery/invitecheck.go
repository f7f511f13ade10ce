package delivery

import (
	"context"
	"errors"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/kernel"
)

// InviteCheckStore is what the invitation reconciler reads of a delivery (deliverystore.Store).
type InviteCheckStore interface {
	// Load reads a delivery session. Errors: KindNotFound; the store's.
	Load(ctx context.Context, deliveryID string) (*Session, error)
}

// InviteChecks is the invitation reconciler's use case over the deliveries (issue 10): the
// deliveries' invitation-check schedule (deliverystore.InviteChecks) and their store.
type InviteChecks struct {
	Schedule kernel.DueChecks
	Store    InviteCheckStore
}

// Run takes up to limit due entries of the schedule and, for each delivery whose mode e-mails
// the recipient, live at now and without sentAt, hands its invitation to invite (the delivery
// job's own step, which sends it once). A delivery that owes nothing, or is gone, has its
// entries forgotten; an invite that answers ErrInviteInFlight keeps them
// (CheckRun.Again); any other error keeps them and comes back joined. invite answers nil for a
// failure it recorded for good.
func (c *InviteChecks) Run(ctx context.Context, now time.Time, limit int, invite func(context.Context, InviteMessage) error) (kernel.CheckRun, error) {
	return kernel.RunDue(ctx, c.Schedule, now, limit, func(ctx context.Context, id string) (int, error) {
		s, err := c.Store.Load(ctx, id)
		if apperr.KindOf(err) == apperr.KindNotFound {
			return 0, nil
		}
		if err != nil {
			return 0, err
		}
		if !s.Mode.Emails() || CheckLive(s, now) != nil || !s.SentAt.IsZero() {
			return 0, nil
		}
		err = invite(ctx, InviteMessage{DeliveryID: s.DeliveryID, TenantID: s.TenantID})
		if errors.Is(err, ErrInviteInFlight) {
			return 1, kernel.ErrCheckAgain
		}
		return 1, err
	})
}
