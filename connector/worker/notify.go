package worker

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/esign-svc/esign/connector/jobs"
	"github.com/esign-svc/esign/connector/settings"
	"github.com/esign-svc/esign/shared/webhook"
)

// Notice is the completion webhook's JSON body (README "Command line (svcconnect)").
type Notice struct {
	Event        string    `json:"event"` // svcconnect.job.finished
	JobID        string    `json:"jobId"`
	Profile      string    `json:"profile"`
	TemplatePath string    `json:"templatePath"`
	Outcome      string    `json:"outcome"` // Completed, Partial or Failed
	Total        int       `json:"total"`
	Succeeded    int       `json:"succeeded"`
	Dead         int       `json:"dead"`
	CreatedAt    time.Time `json:"createdAt"`
	FinishedAt   time.Time `json:"finishedAt"`
	Failures     []Failure `json:"failures"`
}

// Failure is a dead row of a notice (at most MaxNoticeFailures are listed).
type Failure struct {
	Index    int    `json:"index"`
	Attempts int    `json:"attempts"`
	Error    string `json:"error"`
}

// MaxNoticeFailures bounds the failures a notice lists.
const MaxNoticeFailures = 100

// Outcome is the notice's word for a finished job state.
func Outcome(state string) string {
	switch state {
	case jobs.JobCompleted:
		return "Completed"
	case jobs.JobPartial:
		return "Partial"
	}
	return "Failed"
}

// Wants is SERVICE_BATCH_NOTIFY_ON as a store's Notify: Always, or FailureOnly (Partial and
// Failed jobs).
func Wants(notifyOn string) func(state string) bool {
	return func(state string) bool {
		return notifyOn == settings.NotifyAlways || state == jobs.JobPartial || state == jobs.JobFailed
	}
}

// Notifier posts notices, signed like the service's callbacks (X-Esign-Signature with the
// secret; shared/webhook) when there is a secret, unsigned when there is none, with an
// Idempotency-Key per job so a receiver can drop a repeat.
type Notifier struct {
	URL    string
	Client *webhook.Client
}

// NewNotifier is nil when url is blank (notices disabled); a blank secret posts unsigned.
// Errors: a secret too short.
func NewNotifier(url, secret string) (*Notifier, error) {
	if url == "" {
		return nil, nil
	}
	c, err := webhook.NewUnsigned()
	if secret != "" {
		c, err = webhook.New(secret)
	}
	if err != nil {
		return nil, err
	}
	return &Notifier{URL: url, Client: c}, nil
}

// SendNotices posts every notice owed now; each attempt's outcome is recorded (a failed one is
// tried again later on the events' back-off for event.RetryFor). Errors: the store's.
func (w *Worker) SendNotices(ctx context.Context) error {
	if w.Notifier == nil {
		return nil
	}
	for {
		j, ok, err := w.Store.NextNotice(ctx)
		if err != nil || !ok {
			return err
		}
		body, err := w.notice(ctx, j)
		if err != nil {
			return err
		}
		_, sendErr := w.Notifier.Client.Post(ctx, webhook.Request{URL: w.Notifier.URL, Body: body,
			IdempotencyKey: webhook.Key("svcconnect.job.finished", j.ID)})
		if err := w.Store.NoticeOutcome(ctx, j.ID, sendErr, errors.Is(sendErr, webhook.ErrPermanent)); err != nil {
			return err
		}
	}
}

func (w *Worker) notice(ctx context.Context, j jobs.Job) ([]byte, error) {
	rows, err := w.Store.Rows(ctx, j.ID)
	if err != nil {
		return nil, err
	}
	n := Notice{Event: "svcconnect.job.finished", JobID: j.ID, Profile: j.Profile, TemplatePath: j.TemplatePath,
		Outcome: Outcome(j.State), Total: j.Total, Succeeded: j.Done, Dead: j.Dead, CreatedAt: j.CreatedAt,
		Failures: []Failure{}}
	if j.FinishedAt != nil {
		n.FinishedAt = *j.FinishedAt
	}
	for _, r := range rows {
		if r.State == jobs.RowDead && len(n.Failures) < MaxNoticeFailures {
			n.Failures = append(n.Failures, Failure{Index: r.Index, Attempts: r.Attempts, Error: r.LastError})
		}
	}
	return json.Marshal(n)
}
