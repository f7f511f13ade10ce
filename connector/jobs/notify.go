package jobs

import (
	"context"
	"database/sql"
	"errors"
)

// Notice states of a job.
const (
	NoticeNone    = "none"
	NoticePending = "pending"
	NoticeSent    = "sent"
	NoticeFailed  = "failed" // given up after MaxNoticeAttempts or a permanent refusal
)

// MaxNoticeAttempts bounds the completion notice's attempts.
const MaxNoticeAttempts = 5

// NextNotice is a finished job whose completion notice is owed (ok false: none is).
func (s *Store) NextNotice(ctx context.Context) (j Job, ok bool, err error) {
	j, err = scanJob(s.db.QueryRowContext(ctx, `SELECT `+jobColumns+` FROM jobs j WHERE j.notify_state = 'pending' AND j.notify_next_at <= ? ORDER BY j.finished_at LIMIT 1`, unix(s.now())))
	if errors.Is(err, sql.ErrNoRows) {
		return j, false, nil
	}
	return j, err == nil, err
}

// NoticeOutcome records an attempt of a job's notice: sent, or failed with cause (given up when
// permanent or after MaxNoticeAttempts).
func (s *Store) NoticeOutcome(ctx context.Context, jobID string, sendErr error, permanent bool) error {
	if sendErr == nil {
		_, err := s.db.ExecContext(ctx, `UPDATE jobs SET notify_state = 'sent', notify_attempts = notify_attempts + 1, notify_error = '' WHERE id = ?`, jobID)
		return err
	}
	// The next attempt waits 5 s, 10 s, 20 s, ... after this one.
	_, err := s.db.ExecContext(ctx, `UPDATE jobs SET notify_attempts = notify_attempts + 1, notify_error = ?,
		notify_next_at = ? + (5000 << notify_attempts),
		notify_state = CASE WHEN ? OR notify_attempts + 1 >= ? THEN 'failed' ELSE 'pending' END WHERE id = ?`,
		sendErr.Error(), unix(s.now()), permanent, MaxNoticeAttempts, jobID)
	return err
}
