package jobs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// NewJob describes a job to add.
type NewJob struct {
	Profile      string          // erp or crm
	TemplatePath string          // for listings
	Request      json.RawMessage // what each row's work needs besides its record
	Records      []json.RawMessage
	MaxRetries   int       // attempts of each row before it is dead (at least 1)
	RunAt        time.Time // zero: now; later: the job is scheduled
}

// Job is a job with its counts.
type Job struct {
	ID             string          `json:"jobId"`
	Profile        string          `json:"profile"`
	TemplatePath   string          `json:"templatePath"`
	State          string          `json:"state"`
	RunAt          time.Time       `json:"runAt"`
	CreatedAt      time.Time       `json:"createdAt"`
	FinishedAt     *time.Time      `json:"finishedAt,omitempty"`
	Total          int             `json:"total"`
	Done           int             `json:"done"`
	Dead           int             `json:"dead"`
	Pending        int             `json:"pending"`
	Running        int             `json:"running"`
	NotifyState    string          `json:"notifyState"`
	NotifyAttempts int             `json:"notifyAttempts"`
	NotifyError    string          `json:"notifyError,omitempty"`
	Request        json.RawMessage `json:"-"`
}

// Add stores a job and its rows in one transaction and returns its id.
func (s *Store) Add(ctx context.Context, j NewJob) (string, error) {
	if len(j.Records) == 0 {
		return "", errors.New("a job needs at least one record")
	}
	if j.MaxRetries < 1 {
		return "", errors.New("max retries must be at least 1")
	}
	now := s.now()
	state := JobQueued
	if j.RunAt.IsZero() || !j.RunAt.After(now) {
		j.RunAt = now
	} else {
		state = JobScheduled
	}
	id := uuid.NewString()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return "", err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO jobs (id, profile, template_path, request, state, run_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		id, j.Profile, j.TemplatePath, string(j.Request), state, unix(j.RunAt), unix(now)); err != nil {
		return "", err
	}
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO queue (job_id, idx, record, state, max_retries, next_at, updated_at) VALUES (?, ?, ?, 'pending', ?, ?, ?)`)
	if err != nil {
		return "", err
	}
	defer stmt.Close()
	for i, r := range j.Records {
		if _, err := stmt.ExecContext(ctx, id, i, string(r), j.MaxRetries, unix(j.RunAt), unix(now)); err != nil {
			return "", err
		}
	}
	return id, tx.Commit()
}

// Row is a claimed row: its job's request and its record.
type Row struct {
	ID         int64
	JobID      string
	Index      int
	Record     json.RawMessage
	Request    json.RawMessage
	Attempt    int // this attempt, from 1
	MaxRetries int
}

// Claim takes the next due row (pending and due, or running with its lease passed: a worker
// died) and leases it for lease. ok is false when no row is due (jobID "" : of any job).
func (s *Store) Claim(ctx context.Context, jobID string, lease time.Duration) (r Row, ok bool, err error) {
	now := s.now()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return r, false, err
	}
	defer tx.Rollback()
	// A scheduled job whose time came is queued.
	if _, err := tx.ExecContext(ctx, `UPDATE jobs SET state = 'queued' WHERE state = 'scheduled' AND run_at <= ?`, unix(now)); err != nil {
		return r, false, err
	}
	var rec, req string
	err = tx.QueryRowContext(ctx, `SELECT q.id, q.job_id, q.idx, q.record, j.request, q.attempts, q.max_retries
		FROM queue q JOIN jobs j ON j.id = q.job_id
		WHERE j.state = 'queued' AND (? = '' OR q.job_id = ?)
		  AND ((q.state = 'pending' AND q.next_at <= ?) OR (q.state = 'running' AND q.lease_until <= ?))
		ORDER BY q.next_at, q.id LIMIT 1`, jobID, jobID, unix(now), unix(now)).
		Scan(&r.ID, &r.JobID, &r.Index, &rec, &req, &r.Attempt, &r.MaxRetries)
	if errors.Is(err, sql.ErrNoRows) {
		return r, false, tx.Commit()
	}
	if err != nil {
		return r, false, err
	}
	r.Record, r.Request = json.RawMessage(rec), json.RawMessage(req)
	r.Attempt++
	if _, err := tx.ExecContext(ctx, `UPDATE queue SET state = 'running', attempts = ?, lease_until = ?, updated_at = ? WHERE id = ?`,
		r.Attempt, unix(now.Add(lease)), unix(now), r.ID); err != nil {
		return r, false, err
	}
	return r, true, tx.Commit()
}

// Succeed marks a claimed row done with its result, and finishes its job when it was the last.
// finished is the job's new state when this row finished it, else "".
func (s *Store) Succeed(ctx context.Context, r Row, result json.RawMessage) (finished string, err error) {
	return s.settle(ctx, r, `UPDATE queue SET state = 'done', result = ?, last_error = '', updated_at = ? WHERE id = ? AND attempts = ?`,
		string(result), unix(s.now()), r.ID, r.Attempt)
}

// Fail records a failed attempt: the row is dead after its last attempt, else pending again
// after retryIn. finished is as for Succeed.
func (s *Store) Fail(ctx context.Context, r Row, cause string, retryIn time.Duration) (finished string, err error) {
	now := s.now()
	if r.Attempt >= r.MaxRetries {
		return s.settle(ctx, r, `UPDATE queue SET state = 'dead', last_error = ?, updated_at = ? WHERE id = ? AND attempts = ?`,
			cause, unix(now), r.ID, r.Attempt)
	}
	return s.settle(ctx, r, `UPDATE queue SET state = 'pending', last_error = ?, next_at = ?, lease_until = 0, updated_at = ? WHERE id = ? AND attempts = ?`,
		cause, unix(now.Add(retryIn)), unix(now), r.ID, r.Attempt)
}

// settle applies a row's outcome (only when the row is still this attempt's: a worker whose
// lease passed and whose row was claimed again changes nothing) and finishes the job when no row
// is left to do.
func (s *Store) settle(ctx context.Context, r Row, update string, args ...any) (string, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return "", err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, update, args...); err != nil {
		return "", err
	}
	var left, done, dead int
	if err := tx.QueryRowContext(ctx, `SELECT
		COALESCE(SUM(state IN ('pending', 'running')), 0), COALESCE(SUM(state = 'done'), 0), COALESCE(SUM(state = 'dead'), 0)
		FROM queue WHERE job_id = ?`, r.JobID).Scan(&left, &done, &dead); err != nil {
		return "", err
	}
	state := ""
	if left == 0 {
		state = JobCompleted
		switch {
		case done == 0:
			state = JobFailed
		case dead > 0:
			state = JobPartial
		}
		notice := "none"
		if s.Notify != nil && s.Notify(state) {
			notice = NoticePending
		}
		res, err := tx.ExecContext(ctx, `UPDATE jobs SET state = ?, finished_at = ?, notify_state = ? WHERE id = ? AND finished_at IS NULL`,
			state, unix(s.now()), notice, r.JobID)
		if err != nil {
			return "", err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			state = ""
		}
	}
	return state, tx.Commit()
}

// Retry puts a finished job's dead rows back in the queue with fresh attempts, and the job back
// to queued (its completion notice owed again). It returns how many rows it revived.
func (s *Store) Retry(ctx context.Context, jobID string) (int64, error) {
	now := unix(s.now())
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	if _, err := s.getTx(ctx, tx, jobID); err != nil {
		return 0, err
	}
	res, err := tx.ExecContext(ctx, `UPDATE queue SET state = 'pending', attempts = 0, next_at = ?, lease_until = 0, updated_at = ? WHERE job_id = ? AND state = 'dead'`,
		now, now, jobID)
	if err != nil {
		return 0, err
	}
	n, _ := res.RowsAffected()
	if n > 0 {
		if _, err := tx.ExecContext(ctx, `UPDATE jobs SET state = 'queued', finished_at = NULL, notify_state = 'none', notify_attempts = 0, notify_error = '' WHERE id = ?`, jobID); err != nil {
			return 0, err
		}
	}
	return n, tx.Commit()
}

const jobColumns = `j.id, j.profile, j.template_path, j.request, j.state, j.run_at, j.created_at, j.finished_at,
	j.notify_state, j.notify_attempts, j.notify_error,
	(SELECT COUNT(*) FROM queue q WHERE q.job_id = j.id),
	(SELECT COUNT(*) FROM queue q WHERE q.job_id = j.id AND q.state = 'done'),
	(SELECT COUNT(*) FROM queue q WHERE q.job_id = j.id AND q.state = 'dead'),
	(SELECT COUNT(*) FROM queue q WHERE q.job_id = j.id AND q.state = 'pending'),
	(SELECT COUNT(*) FROM queue q WHERE q.job_id = j.id AND q.state = 'running')`

type scanner interface{ Scan(...any) error }

func scanJob(sc scanner) (Job, error) {
	var j Job
	var runAt, createdAt int64
	var finished sql.NullInt64
	var req string
	err := sc.Scan(&j.ID, &j.Profile, &j.TemplatePath, &req, &j.State, &runAt, &createdAt, &finished,
		&j.NotifyState, &j.NotifyAttempts, &j.NotifyError, &j.Total, &j.Done, &j.Dead, &j.Pending, &j.Running)
	if err != nil {
		return j, err
	}
	j.Request = json.RawMessage(req)
	j.RunAt, j.CreatedAt = fromUnix(runAt), fromUnix(createdAt)
	if finished.Valid {
		t := fromUnix(finished.Int64)
		j.FinishedAt = &t
	}
	return j, nil
}

// Get reads a job. Errors: ErrNotFound.
func (s *Store) Get(ctx context.Context, id string) (Job, error) {
	return s.getTx(ctx, s.db, id)
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (s *Store) getTx(ctx context.Context, q querier, id string) (Job, error) {
	j, err := scanJob(q.QueryRowContext(ctx, `SELECT `+jobColumns+` FROM jobs j WHERE j.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return j, fmt.Errorf("job %s: %w", id, ErrNotFound)
	}
	return j, err
}

// List lists the jobs, newest first.
func (s *Store) List(ctx context.Context) ([]Job, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+jobColumns+` FROM jobs j ORDER BY j.created_at DESC, j.id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Job
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	return out, rows.Err()
}

// RowState is a row as listings show it.
type RowState struct {
	Index     int             `json:"index"`
	State     string          `json:"state"`
	Attempts  int             `json:"attempts"`
	MaxRetry  int             `json:"maxRetries"`
	LastError string          `json:"lastError,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
}

// Rows lists a job's rows in index order.
func (s *Store) Rows(ctx context.Context, jobID string) ([]RowState, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT idx, state, attempts, max_retries, last_error, result FROM queue WHERE job_id = ? ORDER BY idx`, jobID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []RowState
	for rows.Next() {
		var r RowState
		var res string
		if err := rows.Scan(&r.Index, &r.State, &r.Attempts, &r.MaxRetry, &r.LastError, &res); err != nil {
			return nil, err
		}
		if res != "" {
			r.Result = json.RawMessage(res)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Due is whether a row of jobID ("" : any job) could be claimed now or is leased by a worker:
// a drain stops when nothing is due.
func (s *Store) Due(ctx context.Context, jobID string) (bool, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM queue q JOIN jobs j ON j.id = q.job_id
		WHERE (? = '' OR q.job_id = ?) AND (j.state = 'queued' OR (j.state = 'scheduled' AND j.run_at <= ?))
		  AND (q.state = 'running' OR (q.state = 'pending' AND q.next_at <= ?))`,
		jobID, jobID, unix(s.now()), unix(s.now())).Scan(&n)
	return n > 0, err
}
