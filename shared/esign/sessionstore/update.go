package sessionstore

import (
	"context"

	"github.com/esign-svc/esign/shared/azure/tablestore"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/kernel"
)

// tableStep runs a transition on a freshly loaded session with extra operations of the same
// partition (signature rows, callback ids) to commit with the change.
type tableStep func(s *esign.Session, slots []esign.Slot) (esign.Change, []tablestore.Op, error)

// update loads the session, runs step and applies its change in one transaction (the kernel's
// Update: a lost race loads and runs step again, a bounded number of times, then
// ErrConcurrent). A step error is returned as is and nothing is written. As with Apply, a change
// that invites is put on the invitation-check schedule first, and a session that ended leaves
// the expiry schedule.
func (s *Store) update(ctx context.Context, groupID string, step tableStep) (esign.Aggregate, esign.Change, error) {
	a, ch, err := s.tab.Update(ctx, groupID, func(a aggregate) (esign.Change, []tablestore.Op, error) {
		return step(a.s, a.slots)
	})
	if err != nil {
		return esign.Aggregate{}, ch, err
	}
	return esign.Aggregate{Session: a.s, Slots: a.slots}, ch, nil
}

var (
	_ esign.SessionStore                          = (*Store)(nil)
	_ kernel.Updater[esign.Aggregate, esign.Step] = (*Store)(nil) // the one Update shape (issue 23)
)

// Update loads session groupID, runs the domain step (esign.Step) and stores its change with
// the audit events and the step's extras as this store's operations (the callback id, the
// signature rows, a cross-device token stored or consumed) in one transaction on the session's
// ETag (update). A step error is returned as is and nothing is written. Errors:
// ErrNotFound; ErrConcurrent; callback_replayed; 413 signature_too_large (nothing is
// written); the tablestore ones.
func (s *Store) Update(ctx context.Context, groupID string, step esign.Step) (esign.Aggregate, esign.Change, error) {
	return s.update(ctx, groupID, func(sess *esign.Session, slots []esign.Slot) (esign.Change, []tablestore.Op, error) {
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
