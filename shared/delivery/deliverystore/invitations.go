package deliverystore

import (
	"context"
	"time"

	"github.com/esign-svc/esign/shared/kernel/aggstore"
)

// InviteSchedule is the name of the invitation-check schedule in the index table: Create puts a
// delivery whose mode e-mails the recipient on it, due InviteCheckAfter after the create, before
// the session is written, so the ReconcileInvitations job can send an invitation whose queue
// output the host lost (issue 10; as sessionstore does for signing sessions).
const InviteSchedule = "dinv"

// DefaultInviteCheckAfter is the delay of a check when the app sets none.
const DefaultInviteCheckAfter = 10 * time.Minute

// SetInviteCheckAfter sets the delay of the invitation check (d > 0; call it while wiring).
func (s *Store) SetInviteCheckAfter(d time.Duration) {
	if d > 0 {
		s.checkAfter = d
	}
}

// DueInviteChecks lists up to limit invitation checks due at or before now (the tablestore's
// errors).
func (s *Store) DueInviteChecks(ctx context.Context, now time.Time, limit int) ([]aggstore.Item, error) {
	return s.invites.Due(ctx, now, limit)
}

// ForgetInviteCheck removes a checked entry (a missing one is no error).
func (s *Store) ForgetInviteCheck(ctx context.Context, it aggstore.Item) error {
	return s.invites.Remove(ctx, it.ID, it.At)
}
