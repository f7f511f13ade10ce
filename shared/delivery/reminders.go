package delivery

import (
	"context"
	"errors"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/kernel"
)

// Reminders of a delivery (DESIGN 17: "Deliveries take the same block for unopened
// recipients"): a delivery whose mode e-mails the recipient and that was created with a
// reminders block reminds its recipient, while the delivery is still sent (never opened,
// downloaded or revoked) and live, FirstAfterHours after the invitation went out, then every
// EveryHours, at most Max times. Each reminder is the invitation again (a working link), sent
// once per round under its own claim and recorded as delivery.reminded {reminder}.

// ErrNothingToRemind is a reminder step that found no reminder due (nothing is written).
var ErrNothingToRemind = errors.New("delivery: no reminder due")

// reminderDue is when s's next reminder is due (zero: none, ever): the reminders block is set,
// the mode e-mails, the recipient has not opened it, and fewer than Max were sent. Before the
// invitation went out the first one counts from the creation.
func reminderDue(s *Session) time.Time {
	if !s.Mode.Emails() || s.State != StateSent {
		return time.Time{}
	}
	from := s.SentAt
	if from.IsZero() {
		from = s.CreatedAt
	}
	return s.Reminders.Due(s.RemindCount, from, s.RemindedAt)
}

// NextReminder is when s's next reminder is due, or zero when it has none (no block, opened,
// revoked, max reached) or the next one would fall at or after its expiry.
func NextReminder(s *Session) time.Time {
	at := reminderDue(s)
	if at.IsZero() || !at.Before(s.ExpiresAt) {
		return time.Time{}
	}
	return at
}

// Remind records reminder number round at now (delivery.reminded {reminder}): only when it is
// the next one, due by now, the invitation went out and the session is live and unopened.
// Errors: 410 when the session ended; ErrNothingToRemind otherwise.
func Remind(s *Session, now time.Time, round int) (Change, error) {
	var c Change
	if err := CheckLive(s, now); err != nil {
		return c, err
	}
	at := NextReminder(s)
	if at.IsZero() || at.After(now) || s.SentAt.IsZero() || round != s.RemindCount+1 {
		return c, ErrNothingToRemind
	}
	s.RemindCount = round
	s.RemindedAt = now
	record(&c, EvReminded, now, map[string]any{"reminder": round})
	return c, nil
}

// ReminderMessage asks for reminder Round of a delivery (ids only).
type ReminderMessage struct {
	DeliveryID string `json:"deliveryId"`
	TenantID   string `json:"tenantId"`
	Round      int    `json:"round"`
}

// ReminderSchedule is the deliveries' reminder schedule (deliverystore.Reminders): the due
// entries, forgetting one, and adding a delivery at its next reminder.
type ReminderSchedule interface {
	kernel.DueChecks
	Add(ctx context.Context, id string, at time.Time) error
}

// Reminders is the reminder timer's use case over the deliveries (issue 27): the deliveries'
// reminder schedule and their store.
type Reminders struct {
	Schedule ReminderSchedule
	Store    InviteCheckStore
}

// Run takes up to limit due entries of the schedule (no delivery is scanned) and, for each
// delivery whose reminder is due at now, hands it to remind (the delivery job's own step, which
// sends it once and records it), then puts the delivery back on the schedule at its next
// reminder. A delivery not yet due goes back at its due time; one whose invitation has not gone
// out yet is looked at again EveryHours later; one with no reminder left, ended or gone has its
// entries forgotten. A remind that answers ErrInviteInFlight keeps them (CheckRun.Again); any
// other error keeps them and comes back joined.
func (r *Reminders) Run(ctx context.Context, now time.Time, limit int, remind func(context.Context, ReminderMessage) error) (kernel.CheckRun, error) {
	if r.Schedule == nil || r.Store == nil {
		return kernel.CheckRun{}, errors.New("delivery: the reminder schedule is not wired")
	}
	return kernel.RunDue(ctx, r.Schedule, now, limit, func(ctx context.Context, id string) (int, error) {
		s, err := r.Store.Load(ctx, id)
		if apperr.KindOf(err) == apperr.KindNotFound {
			return 0, nil
		}
		if err != nil {
			return 0, err
		}
		if CheckLive(s, now) != nil {
			return 0, nil
		}
		at := NextReminder(s)
		switch {
		case at.IsZero():
			return 0, nil
		case at.After(now):
			return 0, r.Schedule.Add(ctx, id, at)
		case s.SentAt.IsZero():
			return 0, r.Schedule.Add(ctx, id, now.Add(time.Duration(s.Reminders.EveryHours)*time.Hour))
		}
		err = remind(ctx, ReminderMessage{DeliveryID: s.DeliveryID, TenantID: s.TenantID, Round: s.RemindCount + 1})
		if errors.Is(err, ErrInviteInFlight) {
			return 1, kernel.ErrCheckAgain
		}
		if err != nil && !errors.Is(err, ErrInviteSent) {
			return 1, err
		}
		if s, err = r.Store.Load(ctx, id); err != nil {
			return 1, err
		}
		next := NextReminder(s)
		if next.IsZero() {
			return 1, nil
		}
		if !next.After(now) { // not recorded (refused for good, or skipped): once more a round later
			next = now.Add(time.Duration(s.Reminders.EveryHours) * time.Hour)
		}
		return 1, r.Schedule.Add(ctx, id, next)
	})
}

// SendReminder sends reminder round of session id once with send (the e-mail) under the
// round's own claim (lease: how long a claim keeps a second sender off) and records
// delivery.reminded by who with the claim marked sent. Errors: ErrInviteSent (this round was
// sent already); ErrInviteInFlight; send's (the claim is given up); Remind's (410 when the
// session ended meanwhile; ErrNothingToRemind when it was opened or the round is not due); the
// store's.
func (u *Deliveries) SendReminder(ctx context.Context, id string, round int, lease time.Duration, who Actor, send func() error) (*Session, error) {
	return u.sendOnce(who, send, func(s *Session, at time.Time) (Change, error) { return Remind(s, at, round) },
		func(sendAt func() (time.Time, error), step Step) (*Session, Change, error) {
			return u.Store.SendReminder(ctx, id, round, u.now(), lease, sendAt, step)
		})
}
