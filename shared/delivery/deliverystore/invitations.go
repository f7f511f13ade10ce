package deliverystore

import (
	"context"
	"errors"
	"time"

	"github.com/esign-svc/esign/shared/azure/tablestore"
	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/kernel/aggstore"
)

// InviteSchedule is the name of the invitation-check schedule in the index table: Create puts a
// delivery whose mode e-mails the recipient on it, due the check delay (INVITE_CHECK_AFTER)
// after the create, before the session is written, so the ReconcileInvitations job can send an
// invitation whose queue output the host lost (issue 10; as sessionstore does for signing
// sessions).
const InviteSchedule = "dinv"

// InviteChecks is the delivery invitation-check schedule.
func (s *Store) InviteChecks() *aggstore.Checks { return s.invites }

// rowInviteClaim is the invitation's claim row in the delivery's partition (aggstore.Once).
const rowInviteClaim = "sent-invite"

// Errors of the invitation claim.
var (
	ErrInviteSent     = delivery.ErrInviteSent
	ErrInviteInFlight = delivery.ErrInviteInFlight
)

// ClaimInvite records that the delivery's invitation is being sent, so that of two senders (the
// queue job and the invitation reconciler, or a redelivered message) one sends. Errors:
// ErrInviteSent; ErrInviteInFlight while another claim younger than lease holds it; the
// tablestore ones. A claim older than lease is taken over (its holder died).
func (s *Store) ClaimInvite(ctx context.Context, deliveryID string, now time.Time, lease time.Duration) (aggstore.Claim, error) {
	c, err := s.tab.Once().Claim(ctx, deliveryID, rowInviteClaim, now, lease)
	switch {
	case errors.Is(err, aggstore.ErrOnceDone):
		return c, ErrInviteSent
	case errors.Is(err, aggstore.ErrOnceBusy):
		return c, ErrInviteInFlight
	}
	return c, err
}

// ReleaseInvite gives the claim up after a failed send (a claim gone or taken over is no error).
func (s *Store) ReleaseInvite(ctx context.Context, c aggstore.Claim) error {
	return s.tab.Once().Release(ctx, c)
}

// UpdateInvited is Update whose change records the claimed invitation as sent: the claim row is
// marked done in the same transaction (a claim taken over meanwhile makes it fail as a lost
// race, ErrConcurrent).
func (s *Store) UpdateInvited(ctx context.Context, c aggstore.Claim, now time.Time, step Step) (*delivery.Session, delivery.Change, error) {
	return s.tab.Update(ctx, c.ID, func(sess *delivery.Session) (delivery.Change, []tablestore.Op, error) {
		ch, err := step(sess)
		return ch, []tablestore.Op{c.DoneOp(now)}, err
	})
}

// SendInvite runs send under the delivery's invitation claim (ClaimInvite): a failed send gives
// the claim up (ReleaseInvite, best effort: a claim left behind expires with its lease) and
// answers send's error; a send that went out stores step's change with the claim marked sent at
// the time send answered, in one transaction (UpdateInvited). Errors: ErrInviteSent;
// ErrInviteInFlight; send's; step's; the tablestore ones.
func (s *Store) SendInvite(ctx context.Context, deliveryID string, now time.Time, lease time.Duration, send func() (time.Time, error), step Step) (*delivery.Session, delivery.Change, error) {
	claim, err := s.ClaimInvite(ctx, deliveryID, now, lease)
	if err != nil {
		return nil, delivery.Change{}, err
	}
	at, err := send()
	if err != nil {
		_ = s.ReleaseInvite(ctx, claim)
		return nil, delivery.Change{}, err
	}
	return s.UpdateInvited(ctx, claim, at, step)
}
