package sessionstore

import (
	"context"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/esign"
)

// prefixSent marks the rows that record a notification's sending (one per notification id).
const prefixSent = "sent-"

// Errors of a notification sent once (SendNotice): the kernel's, under esign's names.
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

// SendNotice sends notification id of session a once (row "sent-<id>" of its partition, the
// kernel's aggstore.Table.SendNotice): it claims the notification, runs send and marks it sent
// with the events send returns (each of a slot carrying the slot's e-mail hash) in one
// transaction; a failed send gives the claim back and is returned as is. A claim older than
// lease is taken over (its holder crashed between claiming and recording), so a notification
// can be sent twice only when a worker dies after the provider accepted it and before the
// record: at least once. Errors: ErrAlreadySent; ErrInFlight; send's; the tablestore ones.
func (s *Store) SendNotice(ctx context.Context, a esign.Aggregate, id string, now time.Time, lease time.Duration, send func() ([]esign.Event, error)) error {
	return s.tab.SendNotice(ctx, aggregate{s: a.Session, slots: a.Slots}, prefixSent+id, now, lease, send)
}

// NoticeSent reports whether notification id of the session was sent (its claim row is marked
// sent): one point read. Errors: the tablestore ones.
func (s *Store) NoticeSent(ctx context.Context, groupID, id string) (bool, error) {
	return s.tab.NoticeSent(ctx, groupID, prefixSent+id)
}
