package sessionstore

import (
	"context"
	"time"

	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/kernel/aggstore"
)

// The invitation check (issue 10): an invitation leaves as a queue output only after the
// dispatcher answered, so a host that loses the output would leave a signer uninvited. Every
// change that invites (Start, the sequential order's next signer, resend-invite) therefore puts
// its session on the invitation-check schedule, due the check delay (INVITE_CHECK_AFTER, default
// aggstore.DefaultCheckAfter) after the change, before the change itself is written (a stale
// entry is harmless; a missing one is not). The ReconcileInvitations job takes the due entries,
// sends what the session still owes (esign.OwedInvitations) and is not recorded as sent, and
// removes them.

// InviteSchedule is the name of the invitation-check schedule in the index table.
const InviteSchedule = "inv"

// InviteChecks is the invitation-check schedule (SetAfter while wiring; Due and Forget for the
// reconciler).
func (s *Store) InviteChecks() *aggstore.Checks { return s.invites }

// scheduleInviteCheck adds groupID to the invitation-check schedule when ch invites: one upsert,
// due the check delay after the change's last event.
func (s *Store) scheduleInviteCheck(ctx context.Context, groupID string, ch esign.Change) error {
	if !ch.Asks(esign.EffectInvite) {
		return nil
	}
	return s.invites.After(ctx, groupID, lastEvent(ch))
}

// lastEvent is the time of the change's latest event (now for a change without events).
func lastEvent(ch esign.Change) time.Time {
	var at time.Time
	for _, ev := range ch.Events {
		if ev.At.After(at) {
			at = ev.At
		}
	}
	if at.IsZero() {
		return time.Now()
	}
	return at
}

// The reminders (DESIGN 17): a session with a reminders block sits on the reminder schedule at
// its next reminder (esign.NextReminder), put there by every change that invites, before the
// change is written (a stale entry is harmless: the reminder job finds nothing due and forgets
// it), and put back by the reminder job after each run. The job reads only the due entries.

// ReminderSchedule is the name of the reminder schedule in the index table.
const ReminderSchedule = "rem"

// Reminders is the reminder schedule (esign.SessionJobs.Reminders).
func (s *Store) Reminders() *aggstore.Checks { return s.remind }

// scheduleReminder adds the session at its next reminder when ch invites and the session has
// reminders: one upsert.
func (s *Store) scheduleReminder(ctx context.Context, a aggregate, ch esign.Change) error {
	if !ch.Asks(esign.EffectInvite) {
		return nil
	}
	at := esign.NextReminder(a.s, a.slots)
	if at.IsZero() {
		return nil
	}
	return s.remind.Add(ctx, a.s.GroupID, at)
}
