package deliverystore

import (
	"context"
	"strconv"
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

// ReminderSchedule is the name of the deliveries' reminder schedule in the index table (DESIGN
// 17): Create puts a delivery with a reminders block at its first reminder, before the session
// is written; the reminder job puts it back at its next one after each run and reads only the
// due entries (a stale entry finds nothing due and is forgotten).
const ReminderSchedule = "drem"

// Reminders is the deliveries' reminder schedule (delivery.Reminders.Schedule).
func (s *Store) Reminders() *aggstore.Checks { return s.remind }

// SendReminder is SendInvite for reminder round: its claim is the row "sent-remind-<round>",
// so each round is sent once and one round's claim never blocks the next.
func (s *Store) SendReminder(ctx context.Context, deliveryID string, round int, now time.Time, lease time.Duration, send func() (time.Time, error), step Step) (*delivery.Session, delivery.Change, error) {
	return s.tab.SendNoticeUpdate(ctx, deliveryID, "sent-remind-"+strconv.Itoa(round), now, lease, send, aggstore.Plain(step))
}

// ExpirySchedule is the name of the deliveries' expiry schedule in the index table (issue 27):
// Create puts every delivery on it at its ExpiresAt, before the session is written; the expiry
// timer (delivery.Expiries) reads only the due entries and records delivery.expired.
const ExpirySchedule = "dexp"

// Expiries is the deliveries' expiry schedule (delivery.Expiries.Schedule).
func (s *Store) Expiries() *aggstore.Checks { return s.expire }
