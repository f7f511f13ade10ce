package esign

import (
	"context"
	"errors"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/kernel"
)

// CheckInvitations is the invitation reconciler's run over the signing sessions (issue 10): it
// takes up to limit due entries of the sessions' invitation-check schedule (InviteChecks) and,
// for each session, every invitation it still owes (OwedInvitations at now: slot invited and
// open, link unused, session live) whose notification (messageID's claim) is not marked sent
// goes to send, which sends it once (the notification job's own step). A session that owes
// nothing unsent, or is gone, has its entries forgotten; a send that answers ErrInFlight (the
// lost message is being sent right now) keeps them (CheckRun.Again); any other error keeps them
// and comes back joined. send answers nil for a failure it recorded for good.
func (u *SessionJobs) CheckInvitations(ctx context.Context, now time.Time, limit int, messageID func(NotifyMessage) string, send func(context.Context, NotifyMessage) error) (kernel.CheckRun, error) {
	if u.InviteChecks == nil {
		return kernel.CheckRun{}, errors.New("esign: the invitation-check schedule is not wired")
	}
	return kernel.RunDue(ctx, u.InviteChecks, now, limit, func(ctx context.Context, groupID string) (int, error) {
		sess, slots, err := u.Store.Load(ctx, groupID)
		if apperr.KindOf(err) == apperr.KindNotFound {
			return 0, nil // a create that failed after scheduling its check
		}
		if err != nil {
			return 0, err
		}
		return u.sendUnsent(ctx, groupID, OwedInvitations(sess, slots, now), messageID, send)
	})
}

// sendUnsent sends each of the session's notifications ms whose claim (messageID) is not marked
// sent, through send; it answers how many it handed to send. A send that answers ErrInFlight
// (being sent elsewhere right now) is kernel.ErrCheckAgain; any other error stops it.
func (u *SessionJobs) sendUnsent(ctx context.Context, groupID string, ms []NotifyMessage, messageID func(NotifyMessage) string, send func(context.Context, NotifyMessage) error) (int, error) {
	n := 0
	for _, m := range ms {
		sent, err := u.Store.NoticeSent(ctx, groupID, messageID(m))
		if err != nil {
			return n, err
		}
		if sent {
			continue
		}
		n++
		if err := send(ctx, m); errors.Is(err, ErrInFlight) {
			return n, kernel.ErrCheckAgain
		} else if err != nil {
			return n, err
		}
	}
	return n, nil
}
