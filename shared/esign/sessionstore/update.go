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
// ErrConcurrent). A step error is returned as is and nothing is written. As with Apply, a change
// that invites is put on the invitation-check schedule first, and a session that ended leaves
// the expiry schedule.
func (s *Store) Update(ctx context.Context, groupID string, step Step) (*esign.Session, []esign.Slot, esign.Change, error) {
	a, ch, err := s.tab.Update(ctx, groupID, func(a aggregate) (esign.Change, []tablestore.Op, error) {
		return step(a.s, a.slots)
	})
	if err != nil {
		return nil, nil, ch, err
	}
	return a.s, a.slots, ch, nil
}
