// Package worker does the connector's background jobs: it claims the generation queue's rows
// from the store, renders each record through the dispatcher (one render per row, under a
// correlationId of the row's own, so a row done again after a worker died renders nothing twice),
// records the outcome (done, or failed and retried later, or dead after its last attempt), and
// posts each finished job's completion notice to the webhook. Once a day it applies the log
// retention (SERVICE_LOG_RETENTION_DAYS) to the store.
package worker

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/esign-svc/esign/connector/client"
	"github.com/esign-svc/esign/connector/jobs"
)

// Request is what a job's rows share: the render request without its record, and the prefix
// of each row's correlationId (<prefix>-<index>).
type Request struct {
	Render            client.RenderRequest `json:"render"`
	CorrelationPrefix string               `json:"correlationPrefix"`
}

// Result is a done row's result.
type Result struct {
	CorrelationID string `json:"correlationId"`
	PDFBlobPath   string `json:"pdfBlobPath"`
	PDFHash       string `json:"pdfHash"`
	Repeated      bool   `json:"repeated,omitempty"`
}

// Renderer is the dispatcher call of a row (client.Client.Render).
type Renderer interface {
	Render(ctx context.Context, req client.RenderRequest, record client.Record) (*client.Rendered, error)
}

// Worker processes rows. Zero durations take defaults.
type Worker struct {
	Store    *jobs.Store
	Renderer Renderer
	Notifier *Notifier // nil: no completion notices
	// Lease is how long a claimed row is a worker's before another may take it (default 2 min).
	Lease time.Duration
	// RetryDelay is the wait before a failed row's next attempt, doubled per attempt
	// (default 10 s; 0 keeps the default, a negative value retries at once).
	RetryDelay time.Duration
	// Poll is the wait when nothing is due (default 1 s).
	Poll time.Duration
	// OnRow is told of each row's outcome (progress bars).
	OnRow func(jobID string, index int, state string)
	// RetentionDays is SERVICE_LOG_RETENTION_DAYS: Drain and Serve purge finished jobs and
	// upload-log rows older than this once per jobs.PurgeInterval (0 disables).
	RetentionDays int
	// OnPurge is told of each automatic purge.
	OnPurge func(jobs.Purged)

	purgeCheckedAt time.Time // the store's clock at the last PurgeDue, to ask at most once a minute
}

func (w *Worker) lease() time.Duration { return cmp.Or(w.Lease, 2*time.Minute) }
func (w *Worker) poll() time.Duration  { return cmp.Or(w.Poll, time.Second) }

// Once claims and does one due row of jobID ("" : any job) and sends the notices owed. ok is
// false when no row was due. Errors: the store's (a row's failure is its outcome, not an error).
func (w *Worker) Once(ctx context.Context, jobID string) (ok bool, err error) {
	row, ok, err := w.Store.Claim(ctx, jobID, w.lease())
	if err != nil || !ok {
		return false, errors.Join(err, w.SendNotices(ctx))
	}
	if err := w.do(ctx, row); err != nil {
		return true, err
	}
	return true, w.SendNotices(ctx)
}

// Drain applies the log retention when it is due (once a day, see purge), then does rows of
// jobID ("" : any job) until none is due (a row leased by another worker is waited for until its
// lease passes), then sends the notices owed.
func (w *Worker) Drain(ctx context.Context, jobID string) error {
	if err := w.purge(ctx); err != nil {
		return err
	}
	for {
		ok, err := w.Once(ctx, jobID)
		if err != nil {
			return err
		}
		if ok {
			continue
		}
		due, err := w.Store.Due(ctx, jobID)
		if err != nil || !due {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(min(w.poll(), 200*time.Millisecond)):
		}
	}
}

// Serve works until ctx ends: due rows, scheduled jobs when their time comes, notices.
func (w *Worker) Serve(ctx context.Context) error {
	for {
		if err := w.Drain(ctx, ""); err != nil && ctx.Err() == nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(w.poll()):
		}
	}
}

// purge applies the retention when it is due (jobs.Store.PurgeDue), asking the store at most
// once a minute of its clock.
func (w *Worker) purge(ctx context.Context) error {
	if w.RetentionDays <= 0 {
		return nil
	}
	now := w.Store.Now()
	if !w.purgeCheckedAt.IsZero() && now.Sub(w.purgeCheckedAt) < time.Minute && now.After(w.purgeCheckedAt) {
		return nil
	}
	w.purgeCheckedAt = now
	p, ran, err := w.Store.PurgeDue(ctx, w.RetentionDays)
	if err == nil && ran && w.OnPurge != nil {
		w.OnPurge(p)
	}
	return err
}

func (w *Worker) do(ctx context.Context, row jobs.Row) error {
	// A row that can never succeed is dead at once: its current attempt is made its last.
	dead := func(cause string) error {
		last := row
		last.MaxRetries = row.Attempt
		_, err := w.Store.Fail(ctx, last, cause, 0)
		return err
	}
	var req Request
	if err := json.Unmarshal(row.Request, &req); err != nil {
		return dead("the job's request does not parse")
	}
	var rec client.Record
	if err := json.Unmarshal(row.Record, &rec); err != nil {
		return dead("the record does not parse")
	}
	r := req.Render
	opts := client.RenderOptions{}
	if r.Options != nil {
		opts = *r.Options
	}
	opts.CorrelationID = fmt.Sprintf("%s-%d", req.CorrelationPrefix, row.Index+1)
	r.Options = &opts
	out, err := w.Renderer.Render(ctx, r, rec)
	if ctx.Err() != nil {
		return ctx.Err() // stopped: the lease makes the row due again later
	}
	state := jobs.RowDone
	if err != nil {
		state = jobs.RowPending
		if row.Attempt >= row.MaxRetries {
			state = jobs.RowDead
		}
		_, err = w.Store.Fail(ctx, row, Cause(err), w.retryIn(row.Attempt))
	} else {
		res, _ := json.Marshal(Result{CorrelationID: opts.CorrelationID, PDFBlobPath: out.PDFBlobPath, PDFHash: out.PDFHash, Repeated: out.Repeated})
		_, err = w.Store.Succeed(ctx, row, res)
	}
	if err == nil && w.OnRow != nil {
		w.OnRow(row.JobID, row.Index, state)
	}
	return err
}

func (w *Worker) retryIn(attempt int) time.Duration {
	d := w.RetryDelay
	if d < 0 {
		return 0
	}
	if d == 0 {
		d = 10 * time.Second
	}
	return min(d<<(attempt-1), time.Hour)
}

// Cause is what a row keeps of a failure: the status, the problem's code and the paths of the
// fields at fault, never a value of the record (a problem's detail may quote one).
func Cause(err error) string {
	var e *client.Error
	if errors.As(err, &e) {
		s := fmt.Sprintf("%d %s", e.Status, cmp.Or(e.Problem.Code, "(no problem body)"))
		var fields []string
		for _, f := range e.Problem.Errors {
			fields = append(fields, f.Field)
		}
		if len(fields) > 0 {
			s += ": " + strings.Join(fields, ", ")
		}
		return s
	}
	var te *client.TokenError
	if errors.As(err, &te) {
		return te.Error()
	}
	return err.Error()
}
