package sessionstore

import (
	"context"
	"errors"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/azure/tablestore"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/kernel/aggstore"
)

// prefixSent marks the rows that record a notification's sending (one per notification id).
const prefixSent = "sent-"

// Errors of the notification claim.
var (
	// ErrAlreadySent: the notification was sent before; acknowledge without sending again.
	ErrAlreadySent = esign.ErrAlreadySent
	// ErrInFlight: another delivery of the notification is sending it now; try again later.
	ErrInFlight = esign.ErrInFlight
)

// RecordEvents writes audit events that change no state (such as pii.purged) in one
// transaction, without touching the session row or its ETag. Events of a slot carry the slot's
// e-mail hash, as Apply's do. A change with slots or effects is refused: state changes go
// through Apply. Errors: the table's.
func (s *Store) RecordEvents(ctx context.Context, groupID string, slots []esign.Slot, ch esign.Change) error {
	if len(ch.Slots) > 0 {
		return apperr.New(apperr.KindInternal, "not_event_only", "RecordEvents takes events only; use Apply for state changes")
	}
	if len(ch.Events) == 0 {
		return nil
	}
	return s.tab.Record(ctx, aggregate{s: &esign.Session{GroupID: groupID}, slots: slots}, ch.Events)
}

// NotificationClaim is the right to send one notification, held until Complete or Release
// (esign.NotificationClaim; its Held is the kernel's aggstore.Claim).
type NotificationClaim = esign.NotificationClaim

// held is the kernel's claim c holds. Errors: a claim this store did not make.
func held(c NotificationClaim) (aggstore.Claim, error) {
	h, ok := c.Held.(aggstore.Claim)
	if !ok {
		return aggstore.Claim{}, apperr.New(apperr.KindInternal, "not_a_claim", "the notification claim was not made by this store")
	}
	return h, nil
}

// ClaimNotification records that notification id of the session is being sent (row
// "sent-<id>", the kernel's aggstore.Once). Errors: ErrAlreadySent when it was sent before;
// ErrInFlight when another claim younger than lease holds it; the tablestore ones. A claim older
// than lease is taken over (its holder crashed between claiming and completing), so a
// notification can be sent twice only when a worker dies after the provider accepted it and
// before Complete: at least once.
func (s *Store) ClaimNotification(ctx context.Context, groupID, id string, now time.Time, lease time.Duration) (NotificationClaim, error) {
	c, err := s.tab.Once().Claim(ctx, groupID, prefixSent+id, now, lease)
	switch {
	case errors.Is(err, aggstore.ErrOnceDone):
		return NotificationClaim{}, ErrAlreadySent
	case errors.Is(err, aggstore.ErrOnceBusy):
		return NotificationClaim{}, ErrInFlight
	case err != nil:
		return NotificationClaim{}, err
	}
	return NotificationClaim{GroupID: groupID, ID: id, Held: c}, nil
}

// CompleteNotification marks the claimed notification sent and writes its audit events, in one
// transaction. Errors: ErrInFlight when the claim was taken over meanwhile (another worker sent
// it too); the tablestore ones.
func (s *Store) CompleteNotification(ctx context.Context, c NotificationClaim, slots []esign.Slot, events []esign.Event, now time.Time) error {
	h, err := held(c)
	if err != nil {
		return err
	}
	evOps, err := s.tab.EventOps(aggregate{s: &esign.Session{GroupID: c.GroupID}, slots: slots}, events)
	if err != nil {
		return err
	}
	err = s.t.Transact(ctx, c.GroupID, append([]tablestore.Op{h.DoneOp(now)}, evOps...))
	if k := apperr.KindOf(err); k == apperr.KindPrecondition || (k == apperr.KindNotFound && err != nil) {
		return ErrInFlight
	}
	return err
}

// ReleaseNotification gives the claim up after a failed send, so a later delivery may try again.
// A claim already gone or taken over is not an error. Errors: the tablestore ones.
func (s *Store) ReleaseNotification(ctx context.Context, c NotificationClaim) error {
	h, err := held(c)
	if err != nil {
		return err
	}
	return s.tab.Once().Release(ctx, h)
}

// NotificationSent reports whether notification id of the session was sent (its claim row is
// marked sent): one point read. Errors: the tablestore ones.
func (s *Store) NotificationSent(ctx context.Context, groupID, id string) (bool, error) {
	return s.tab.Once().Done(ctx, groupID, prefixSent+id)
}
