package sessionstore

import (
	"context"

	"github.com/esign-svc/esign/shared/azure/tablestore"
	"github.com/esign-svc/esign/shared/esign"
)

// Step runs a transition on a freshly loaded session. It may return extra operations of the
// same partition (signature rows, callback ids) to commit with the change.
type Step func(s *esign.Session, slots []esign.Slot) (esign.Change, []tablestore.Op, error)

// Update loads the session, runs step and applies its change in one transaction. When another
// request changed the session meanwhile it reloads and runs step once more (the second run sees
// the other change and may then fail cleanly); a second lost race is ErrConcurrent. A step error
// is returned as is and nothing is written.
func (s *Store) Update(ctx context.Context, groupID string, step Step) (*esign.Session, []esign.Slot, esign.Change, error) {
	for attempt := 0; ; attempt++ {
		sess, slots, err := s.Load(ctx, groupID)
		if err != nil {
			return nil, nil, esign.Change{}, err
		}
		ch, extra, err := step(sess, slots)
		if err != nil {
			return nil, nil, ch, err
		}
		err = s.Apply(ctx, sess, slots, ch, extra...)
		if IsConcurrent(err) && attempt == 0 {
			continue
		}
		if err != nil {
			return nil, nil, ch, err
		}
		return sess, slots, ch, nil
	}
}
