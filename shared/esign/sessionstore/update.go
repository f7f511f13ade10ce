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

var _ esign.SessionStore = (*Store)(nil)

// Change is Update for a domain step (esign.Step): the step's extras become this store's
// operations (the callback id, the signature rows, a cross-device token stored or consumed),
// committed with the change. Errors: Update's; 413 signature_too_large (nothing is written).
func (s *Store) Change(ctx context.Context, groupID string, step esign.Step) (*esign.Session, []esign.Slot, esign.Change, error) {
	return s.Update(ctx, groupID, func(sess *esign.Session, slots []esign.Slot) (esign.Change, []tablestore.Op, error) {
		ch, x, err := step(sess, slots)
		if err != nil {
			return ch, nil, err
		}
		ops, err := extraOps(sess.GroupID, x)
		return ch, ops, err
	})
}

// Commit stores a change of a session the caller loaded (Load) on the ETag it was read with,
// with its audit events and the extras as this store's operations, in one transaction: the
// domain's form of Apply, for jobs that hold the session across other work (the seal, the
// expiry) and build no table operation. Errors: Apply's; 413 signature_too_large.
func (s *Store) Commit(ctx context.Context, sess *esign.Session, slots []esign.Slot, ch esign.Change, x esign.Extras) error {
	ops, err := extraOps(sess.GroupID, x)
	if err != nil {
		return err
	}
	return s.Apply(ctx, sess, slots, ch, ops...)
}

// extraOps are the operations of a step's extras, in a fixed order.
func extraOps(groupID string, x esign.Extras) ([]tablestore.Op, error) {
	var ops []tablestore.Op
	if x.Signature != nil {
		op, err := SignatureOp(groupID, x.Signature.Slot, Signature{PNG: x.Signature.PNG,
			Fields: x.Signature.Fields, Consents: x.Signature.Consents})
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
	}
	if x.CallbackID != "" {
		ops = append(ops, CallbackOnce(groupID, x.CallbackID))
	}
	if x.NewTransfer != nil {
		ops = append(ops, TransferOp(groupID, *x.NewTransfer))
	}
	if x.Redeemed != nil {
		ops = append(ops, RedeemOp(groupID, *x.Redeemed))
	}
	return ops, nil
}

// CountEvents is how many audit events of kind the session's trail holds.
func (s *Store) CountEvents(ctx context.Context, groupID, kind string) (int, error) {
	events, err := s.Events(ctx, groupID)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range events {
		if e.Kind == kind {
			n++
		}
	}
	return n, nil
}
