package sessionstore

import (
	"context"

	"github.com/esign-svc/esign/shared/azure/tablestore"
	"github.com/esign-svc/esign/shared/esign"
)

// Step runs a transition on a freshly loaded session. It may return extra operations of the
// same partition (signature rows, callback ids) to commit with the change.
type Step func(s *esign.Session, slots []esign.Slot) (esign.Change, []tablestore.Op, error)

// Update loads the session, runs step and applies its change in one transaction (the kernel's
// Update: a lost race loads and runs step again, a bounded number of times, then
// ErrConcurrent). A step error is returned as is and nothing is written. The first change that
// invites adds the session to the invitation-check schedule before it is written, as Apply does.
func (s *Store) Update(ctx context.Context, groupID string, step Step) (*esign.Session, []esign.Slot, esign.Change, error) {
	var ended *esign.Session
	scheduled := false
	a, ch, err := s.tab.Update(ctx, groupID, func(a aggregate) (esign.Change, []tablestore.Op, error) {
		ch, extra, err := step(a.s, a.slots)
		ended = a.s
		if err == nil && !scheduled && ch.Asks(esign.EffectInvite) {
			if err := s.scheduleInviteCheck(ctx, groupID, ch); err != nil {
				return ch, nil, err
			}
			scheduled = true
		}
		return ch, extra, err
	})
	if err != nil {
		return nil, nil, ch, err
	}
	if ended != nil && ended.State.Terminal() && !ch.Empty() {
		_ = s.expiry.Remove(ctx, ended.GroupID, ended.ExpiresAt) // best effort, as in Apply
	}
	return a.s, a.slots, ch, nil
}
