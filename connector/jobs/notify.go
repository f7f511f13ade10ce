package jobs

import (
	"context"
	"database/sql"
	"errors"

	"github.com/esign-svc/esign/shared/event"
)

// Notice states of a job.
const (
	NoticeNone    = "none"
	NoticePending = "pending"
	NoticeSent    = "sent"
	NoticeFailed  = "failed" // given up after event.RetryFor or a permanent refusal
)

// NextNotice is a finished job whose completion notice is owed (ok false: none is).
func (s *Store) NextNotice(ctx context.Context) (j Job, ok bool, err error) {
	j, err = scanJob(s.db.QueryRowContext(ctx, `SELECT `+jobColumns+` FROM jobs j WHERE j.notify_state = 'pending' AND j.notify_next_at <= ? ORDER BY j.finished_at LIMIT 1`, unix(s.now())))
	if errors.Is(err, sql.ErrNoRows) {
		return j, false, nil
	}
	return j, err == nil, err
}

// NoticeOutcome records an attempt of a job's notice: sent, or failed with cause. A failed
// notice is tried again on the service's event delivery policy (one retry machine, DESIGN 17):
// after event.Backoff of its attempts, and given up when permanent or once event.RetryFor has
// passed since the job finished (when the notice was first owed).
func (s *Store) NoticeOutcome(ctx context.Context, jobID string, sendErr error, permanent bool) error {
	if sendErr == nil {
		_, err := s.db.ExecContext(ctx, `UPDATE jobs SET notify_state = 'sent', notify_attempts = notify_attempts + 1, notify_error = '' WHERE id = ?`, jobID)
		return err
	}
	var attempts int
	if err := s.db.QueryRowContext(ctx, `SELECT notify_attempts FROM jobs WHERE id = ?`, jobID).Scan(&attempts); err != nil {
		return err
	}
	now := unix(s.now())
	_, err := s.db.ExecContext(ctx, `UPDATE jobs SET notify_attempts = notify_attempts + 1, notify_error = ?,
		notify_next_at = ?,
		notify_state = CASE WHEN ? OR ? - COALESCE(finished_at, ?) >= ? THEN 'failed' ELSE 'pending' END WHERE id = ?`,
		sendErr.Error(), now+event.Backoff(attempts+1).Milliseconds(), permanent, now, now, event.RetryFor.Milliseconds(), jobID)
	return err
}
