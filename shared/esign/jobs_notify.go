package esign

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
)

// Errors of a notification's claim (SendOnce).
var (
	// ErrAlreadySent: the notification was sent before; acknowledge without sending again.
	ErrAlreadySent = &apperr.Error{Kind: apperr.KindConflict, Code: "notification_already_sent", Detail: "this notification was already sent"}
	// ErrInFlight: another delivery of the notification is sending it now; try again later.
	ErrInFlight = &apperr.Error{Kind: apperr.KindUnavailable, Code: "notification_in_flight", Detail: "this notification is being sent by another worker"}
)

// NotificationClaim is the right to send one notification of a session, held until it is
// completed (sent, with its audit events) or released. Held is the store's own record of the
// claim: only the store that made the claim reads it.
type NotificationClaim struct {
	GroupID string
	ID      string
	Held    any
}

// NoticeStore is what sending a notification once needs of the session store
// (sessionstore.Store: the claim row "sent-<id>" in the session's partition).
type NoticeStore interface {
	// ClaimNotification takes notification id of the session. Errors: ErrAlreadySent;
	// ErrInFlight while a claim younger than lease holds it; the store's.
	ClaimNotification(ctx context.Context, groupID, id string, now time.Time, lease time.Duration) (NotificationClaim, error)
	// CompleteNotification marks the claim sent with its audit events in one transaction.
	// Errors: ErrInFlight when the claim was taken over meanwhile; the store's.
	CompleteNotification(ctx context.Context, c NotificationClaim, slots []Slot, events []Event, now time.Time) error
	// ReleaseNotification gives a claim up after a failed send.
	ReleaseNotification(ctx context.Context, c NotificationClaim) error
	// NotificationSent reports whether notification id was sent (one point read).
	NotificationSent(ctx context.Context, groupID, id string) (bool, error)
	// LastEvent is the time of the session's latest event of kind (zero: none), read from the
	// kind and time columns only.
	LastEvent(ctx context.Context, groupID, kind string) (time.Time, error)
}

// Notice reads the session a notification is about. tenant, when not empty, must be the
// session's. For the seal-failure notice (sealFailure) a row that does not decode answers its
// plain columns (CorruptError.Session) and no slots: the seal failed because the row is
// unreadable, and the notice needs nothing else. Errors: ErrSessionNotFound; ErrWrongTenant;
// the store's.
func (u *SessionJobs) Notice(ctx context.Context, tenant, groupID string, sealFailure bool) (*Session, []Slot, error) {
	s, slots, err := u.Store.Load(ctx, groupID)
	var c *CorruptError
	if errors.As(err, &c) && sealFailure {
		s, slots, err = c.Session, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if tenant != "" && tenant != s.TenantID {
		return nil, nil, ErrWrongTenant
	}
	return s, slots, nil
}

// LastEvent is the time of the session's latest event of kind, or now when there is none. It
// reads the kind and time columns only, so a notice (the seal failure's above all) goes out for
// a trail whose event data is unreadable. Errors: the store's.
func (u *SessionJobs) LastEvent(ctx context.Context, groupID, kind string, now time.Time) (time.Time, error) {
	at, err := u.Store.LastEvent(ctx, groupID, kind)
	if err != nil || at.IsZero() {
		return now, err
	}
	return at, nil
}

// Sent reports whether notification id of the session went out (its claim is marked sent).
// Errors: the store's.
func (u *SessionJobs) Sent(ctx context.Context, groupID, id string) (bool, error) {
	return u.Store.NotificationSent(ctx, groupID, id)
}

// SendOnce sends notification id of the session at most once in effect: it claims the
// notification (a claim older than lease is taken over: its holder died), runs send, and marks
// the claim sent together with the audit event send answers, in one transaction (one retry).
// A send that fails gives the claim back, so a retry sends. Only a worker dying between the
// send and that transaction leaves a claim, which a later delivery takes over once the lease
// has passed (the notification may then go out twice, preferred to never). Errors:
// ErrAlreadySent (nothing sent: acknowledge); ErrInFlight while another claim holds it;
// send's error as it is; the store's, after a send, wrapped as not recorded. A claim taken over
// while send ran is nil: its new holder records it.
func (u *SessionJobs) SendOnce(ctx context.Context, groupID, id string, slots []Slot, now time.Time, lease time.Duration, send func(ctx context.Context) (Event, error)) error {
	claim, err := u.Store.ClaimNotification(ctx, groupID, id, now, lease)
	if err != nil {
		return err
	}
	ev, err := send(ctx)
	if err != nil {
		_ = u.Store.ReleaseNotification(ctx, claim) // best effort: a left claim expires with its lease
		return err
	}
	err = u.Store.CompleteNotification(ctx, claim, slots, []Event{ev}, now)
	if err != nil && !errors.Is(err, ErrInFlight) {
		err = u.Store.CompleteNotification(ctx, claim, slots, []Event{ev}, now) // one retry
	}
	if errors.Is(err, ErrInFlight) {
		return nil // another delivery took the claim over and records it
	}
	if err != nil {
		return fmt.Errorf("notify: sent but not recorded: %w", err)
	}
	return nil
}
