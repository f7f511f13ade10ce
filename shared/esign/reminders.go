package esign

import (
	"context"
	"errors"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/google/uuid"
)

// ReminderPolicy is a session's reminders block (DESIGN 17; the kernel's, shared with the
// deliveries).
type ReminderPolicy = kernel.ReminderPolicy

// MaxReminders is the largest max a reminders block may ask for.
const MaxReminders = kernel.MaxReminders

// ReminderNotice is the NotifyMessage kind of a reminder to a signer who opened the link: it
// asks them to continue on the device where they did and carries no link.
const ReminderNotice = "signer_reminder"

// ErrNothingToRemind is a reminder run's step that found no reminder due (nothing is written).
var ErrNothingToRemind = errors.New("esign: no reminder due")

// reminderDue is when slot sl's next reminder is due under policy p (zero: none, ever): the
// slot is invited and open and has had fewer than Max reminders.
func reminderDue(s *Session, sl *Slot, p *ReminderPolicy) time.Time {
	if p == nil || !sl.Invited || !sl.State.Open() || sl.EmailEnc == "" {
		return time.Time{}
	}
	from := sl.InvitedAt
	if from.IsZero() {
		from = s.CreatedAt
	}
	return p.Due(sl.Reminders, from, sl.RemindedAt)
}

// NextReminder is when the session's next reminder is due: the earliest due time of its slots,
// or zero when the session has no reminders, is no longer live, or none falls before expiry.
func NextReminder(s *Session, slots []Slot) time.Time {
	if s.Reminders == nil || !s.State.Live() {
		return time.Time{}
	}
	var next time.Time
	for i := range slots {
		at := reminderDue(s, &slots[i], s.Reminders)
		if at.IsZero() || !at.Before(s.ExpiresAt) {
			continue
		}
		if next.IsZero() || at.Before(next) {
			next = at
		}
	}
	return next
}

// Remind is the change of one reminder run at now: each slot whose reminder is due (invited,
// not signed, declined or expired, fewer than Max reminders, session live) is reminded once,
// recorded as slot.reminded {reminder, link}. A slot whose signer never opened the link
// (pending) gets a fresh link (the caller sets its id; the unused one stops working) and the
// change asks for its invitation; one who opened it gets no new link. It answers the slots
// reminded; none is ErrNothingToRemind.
func Remind(s *Session, slots []Slot, now time.Time) (Change, []int, error) {
	var c Change
	if CheckLive(s, now) != nil || s.Reminders == nil {
		return c, nil, ErrNothingToRemind
	}
	var done []int
	for i := range slots {
		sl := &slots[i]
		at := reminderDue(s, sl, s.Reminders)
		if at.IsZero() || at.After(now) {
			continue
		}
		link := sl.State == SlotPending
		sl.Reminders++
		sl.RemindedAt = now
		c.Touch(i)
		c.Record(EvSlotReminded, i, now, map[string]any{"reminder": sl.Reminders, "link": link})
		if link {
			c.Effects = append(c.Effects, Effect{Kind: EffectInvite, Slot: i})
		}
		done = append(done, i)
	}
	if len(done) == 0 {
		return c, nil, ErrNothingToRemind
	}
	return c, done, nil
}

// ReminderMessage is the notification of slot sl's latest reminder: for a signer who never
// opened the link, the invitation (as a reminder) of the slot's current link; for one who did,
// the reminder notice of that reminder's number.
func ReminderMessage(s *Session, sl *Slot) NotifyMessage {
	m := NotifyMessage{GroupID: s.GroupID, TenantID: s.TenantID, Slot: sl.Index, Reminder: true}
	if sl.State == SlotPending {
		m.Kind, m.LinkJTI = KindInvitation, sl.LinkJTI
	} else {
		m.Kind, m.Round = ReminderNotice, sl.Reminders
	}
	return m
}

// ReminderSchedule is the sessions' reminder schedule (sessionstore.Reminders): the due
// entries, forgetting one, and adding a session at its next reminder.
type ReminderSchedule interface {
	kernel.DueChecks
	Add(ctx context.Context, id string, at time.Time) error
}

var reminderActor = Actor{Kind: "system", ID: "reminders"}

// RunReminders is the reminder timer's run (DESIGN 17): it takes up to limit due entries of
// the reminder schedule (Reminders; no session is scanned) and, for each session, commits the
// reminders due at now (Remind; a fresh link for a signer who never opened theirs), puts the
// session back on the schedule at its next reminder, and sends every reminder whose
// notification (messageID's claim) is not marked sent, through send (the notify job's step,
// which claims it once). A session with nothing due, ended or gone has its entries forgotten;
// a send that answers ErrInFlight keeps them (CheckRun.Again); any other error keeps them and
// comes back joined (the next run sends what is still unsent).
func (u *SessionJobs) RunReminders(ctx context.Context, now time.Time, limit int, messageID func(NotifyMessage) string, send func(context.Context, NotifyMessage) error) (kernel.CheckRun, error) {
	if u.Reminders == nil {
		return kernel.CheckRun{}, errors.New("esign: the reminder schedule is not wired")
	}
	return kernel.RunDue(ctx, u.Reminders, now, limit, func(ctx context.Context, groupID string) (int, error) {
		sess, slots, _, err := update(ctx, u.Store, groupID, func(s *Session, slots []Slot) (Change, Extras, error) {
			ch, done, err := Remind(s, slots, now)
			if err != nil {
				return ch, Extras{}, err
			}
			for _, i := range done {
				if slots[i].State == SlotPending {
					slots[i].LinkJTI, slots[i].LinkUsed = uuid.NewString(), false
				}
			}
			if next := NextReminder(s, slots); !next.IsZero() {
				if err := u.Reminders.Add(ctx, groupID, next); err != nil {
					return ch, Extras{}, err
				}
			}
			ch.By(reminderActor)
			return ch, Extras{}, nil
		})
		switch {
		case apperr.KindOf(err) == apperr.KindNotFound:
			return 0, nil // gone
		case errors.Is(err, ErrNothingToRemind):
			if sess, slots, err = u.Store.Load(ctx, groupID); err != nil {
				return 0, err
			}
		case err != nil:
			return 0, err
		}
		if CheckLive(sess, now) != nil {
			return 0, nil
		}
		var owed []NotifyMessage
		for i := range slots {
			if slots[i].Reminders > 0 && slots[i].State.Open() {
				owed = append(owed, ReminderMessage(sess, &slots[i]))
			}
		}
		return u.sendUnsent(ctx, groupID, owed, messageID, send)
	})
}
