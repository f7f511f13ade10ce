package deliverystore

import (
	"context"
	"time"

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

// Errors of the invitation's send: the kernel's notice errors, under delivery's names.
var (
	ErrInviteSent     = delivery.ErrInviteSent
	ErrInviteInFlight = delivery.ErrInviteInFlight
)

// SendInvite runs send under the delivery's invitation claim (row "sent-invite", the kernel's
// aggstore.Table.SendNoticeUpdate), so that of two senders (the queue job and the invitation
// reconciler, or a redelivered message) one sends: a failed send gives the claim up and answers
// send's error; a send that went out stores step's change with the claim marked sent at the time
// send answered, in one transaction (a claim taken over meanwhile makes it a lost race,
// ErrConcurrent). Errors: ErrInviteSent; ErrInviteInFlight; send's; step's; the tablestore ones.
func (s *Store) SendInvite(ctx context.Context, deliveryID string, now time.Time, lease time.Duration, send func() (time.Time, error), step Step) (*delivery.Session, delivery.Change, error) {
	return s.tab.SendNoticeUpdate(ctx, deliveryID, rowInviteClaim, now, lease, send, aggstore.Plain(step))
}
