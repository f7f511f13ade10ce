package esign

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/esign-svc/esign/shared/kernel"
)

// Errors of a notification sent once (SendOnce): the kernel's notice errors, under esign's names.
var (
	// ErrAlreadySent: the notification was sent before; acknowledge without sending again.
	ErrAlreadySent = kernel.ErrNoticeSent
	// ErrInFlight: another delivery of the notification is sending it now; try again later.
	ErrInFlight = kernel.ErrNoticeInFlight
)

// NoticeStore is what sending a notification once needs of the session store
// (sessionstore.Store: the claim row "sent-<id>" in the session's partition).
type NoticeStore interface {
	// SendNotice claims notification id of session a (as loaded: its slots give the audit rows
	// their subjects), runs send and marks the claim sent with the events send returns in one
	// transaction (one retry); a failed send gives the claim back and is returned as is.
	// Errors: ErrAlreadySent; ErrInFlight while a claim younger than lease holds it, or when the
	// claim was taken over while send ran; send's; the store's.
	SendNotice(ctx context.Context, a Aggregate, id string, now time.Time, lease time.Duration, send func() ([]Event, error)) error
	// NoticeSent reports whether notification id was sent (one point read).
	NoticeSent(ctx context.Context, groupID, id string) (bool, error)
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
	return u.Store.NoticeSent(ctx, groupID, id)
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
	sent := false
	err := u.Store.SendNotice(ctx, Aggregate{Session: &Session{GroupID: groupID}, Slots: slots}, id, now, lease, func() ([]Event, error) {
		ev, err := send(ctx)
		if err != nil {
			return nil, err
		}
		sent = true
		return []Event{ev}, nil
	})
	switch {
	case sent && errors.Is(err, ErrInFlight):
		return nil // another delivery took the claim over and records it
	case sent && err != nil:
		return fmt.Errorf("notify: sent but not recorded: %w", err)
	}
	return err
}
