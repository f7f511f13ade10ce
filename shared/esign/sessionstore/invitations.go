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
// its session on the invitation-check schedule, due InviteCheckAfter after the change, before
// the change itself is written (a stale entry is harmless; a missing one is not). The
// ReconcileInvitations job takes the due entries, sends what the session still owes
// (esign.OwedInvitations) and is not recorded as sent, and removes them.

// InviteSchedule is the name of the invitation-check schedule in the index table.
const InviteSchedule = "inv"

// DefaultInviteCheckAfter is how long after an invitation the check is due when the app sets
// none (SetInviteCheckAfter).
const DefaultInviteCheckAfter = 10 * time.Minute

// SetInviteCheckAfter sets how long after an inviting change its check is due (d > 0; call it
// while wiring, before the store is used).
func (s *Store) SetInviteCheckAfter(d time.Duration) {
	if d > 0 {
		s.checkAfter = d
	}
}

// scheduleInviteCheck adds groupID to the invitation-check schedule when ch invites: one upsert,
// due InviteCheckAfter after the change's last event.
func (s *Store) scheduleInviteCheck(ctx context.Context, groupID string, ch esign.Change) error {
	if !ch.Asks(esign.EffectInvite) {
		return nil
	}
	return s.invites.Add(ctx, groupID, lastEvent(ch).Add(s.checkAfter))
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

// DueInviteChecks lists up to limit invitation checks due at or before now, oldest first (a
// session may have several). Errors: the tablestore ones.
func (s *Store) DueInviteChecks(ctx context.Context, now time.Time, limit int) ([]aggstore.Item, error) {
	return s.invites.Due(ctx, now, limit)
}

// ForgetInviteCheck removes a checked entry; a missing one is no error.
func (s *Store) ForgetInviteCheck(ctx context.Context, it aggstore.Item) error {
	return s.invites.Remove(ctx, it.ID, it.At)
}
