// Package workflowcallback is the processor's terminal-callback job (DESIGN 10, spec
// "Workflow"): when a workflow ends (complete, rejected, cancelled) a message on queue QueueName
// makes this job POST {workflowId, correlationId, state, completedAt} to the workflow's
// callbackUrl through shared/webhook (signed `X-Esign-Signature: t=..,v1=..` under
// WEBHOOK_SECRETS, the URL policy checked on every attempt, bounded time-out, no redirects).
//
// Retries: a retryable answer (network failure, time-out, 408, 425, 429, 5xx) puts the message
// back on the queue with the next attempt number, hidden for the next delay of Backoff (or the
// receiver's Retry-After when longer), so the attempts spread over about 24 hours; a permanent
// answer, or a retryable one after the last delay, ends it. Every attempt is audited on the
// workflow (workflow.callback_attempted {attempt, status or code}), and the end as
// workflow.callback_delivered or workflow.callback_failed; never the URL or the body. All
// attempts carry one Idempotency-Key, so a receiver acts on the callback once.
package workflowcallback

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/esign-svc/esign/processor/internal/jobkit"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/webhook"
	"github.com/esign-svc/esign/shared/workflow"
)

// Function names and the queue (processor/functions/<Name>/function.json).
const (
	FunctionName       = "WorkflowCallback"
	PoisonFunctionName = "WorkflowCallbackPoison"
	QueueName          = workflow.QueueCallback
)

// Backoff is the wait before each retry: attempt n+1 waits Backoff[n-1]. Seven attempts over
// 20 h 36 min, the last within the 24 h window.
var Backoff = []time.Duration{time.Minute, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 6 * time.Hour, 12 * time.Hour}

// Message names the ended workflow and the attempt (1 for the first; 0 reads as 1): the
// workflow-callback queue's one message type (queues.WorkflowCallback).
type Message = workflow.CallbackMessage

// Body is the callback's JSON body (spec "Workflow", callback).
type Body struct {
	WorkflowID    string    `json:"workflowId"`
	CorrelationID string    `json:"correlationId"`
	State         string    `json:"state"`
	CompletedAt   time.Time `json:"completedAt"`
}

// Poster posts one signed request (*webhook.Client).
type Poster interface {
	Post(ctx context.Context, r webhook.Request) (int, error)
}

// Queue re-enqueues a message hidden for a delay (*queuestore.Queue on QueueName).
type Queue interface {
	SendWithVisibilityDelay(ctx context.Context, v any, delay time.Duration) (string, error)
}

// Deps are the callback job's dependencies. Workflows and Queue are required; a nil Poster
// (WEBHOOK_SECRETS not set) ends every callback as failed with code webhook_not_configured.
type Deps struct {
	// Workflows is the workflow store (*workflowstore.Store), reached only through the use
	// cases (workflow.Workflows).
	Workflows workflow.Repo
	Poster    Poster
	Queue     Queue
	Now       func() time.Time // default time.Now
}

// Job is the callback job (New builds it).
type Job struct{ Deps }

// New makes the job. It does no I/O. Errors: a missing dependency.
func New(d Deps) (*Job, error) {
	if d.Workflows == nil || d.Queue == nil {
		return nil, errors.New("workflowcallback: Workflows and Queue are required")
	}
	return &Job{Deps: d}, nil
}

// Functions is the job's function table: the callback queue and its poison queue.
func (j *Job) Functions() []jobkit.Function {
	return []jobkit.Function{
		{Name: FunctionName, Handler: funcproto.QueueHandler(j.Handle)},
		{Name: PoisonFunctionName, Handler: funcproto.QueueHandler(j.HandlePoison)},
	}
}

var systemActor = kernel.Actor{Kind: "system", ID: "workflow-callback"}

// workflows is the workflow use-case service the job's reads and transitions call.
func (j *Job) workflows() *workflow.Workflows {
	return &workflow.Workflows{Store: j.Workflows, Now: j.now}
}

func (j *Job) now() time.Time {
	if j.Now == nil {
		return time.Now().UTC()
	}
	return j.Now().UTC()
}

// Handle is the WorkflowCallback queue function. Replies: nil once the attempt is posted and
// audited (and the next one queued); nil without effect for a workflow that is gone, has not
// ended or has no callbackUrl; Permanent for a message without ids or of another tenant; a plain
// error (retried by the host, then poisoned) when storage fails.
func (j *Job) Handle(ctx context.Context, qm funcproto.QueueMessage) error {
	m, w, err := j.load(ctx, qm)
	if err != nil || w == nil {
		return err
	}
	a := workflow.CallbackAttempt{Attempt: m.Attempt}
	var retryAfter time.Duration
	if j.Poster == nil {
		a.Code, a.End = "webhook_not_configured", workflow.CallbackFailed
	} else {
		body, err := json.Marshal(Body{WorkflowID: w.ID, CorrelationID: w.CorrelationID, State: string(w.State), CompletedAt: w.CompletedAt.UTC()})
		if err != nil {
			return err
		}
		a.Status, err = j.Poster.Post(ctx, webhook.Request{URL: w.Setup.CallbackURL, Body: body,
			IdempotencyKey: webhook.Key("workflow-callback", w.ID, string(w.State))})
		a.Code, a.End, retryAfter = outcome(err, m.Attempt)
	}
	if err := j.workflows().RecordCallback(ctx, w.Tenant, w.ID, systemActor, a); err != nil {
		return err
	}
	funcproto.Logf(ctx, "workflow-callback: %s attempt %d: status %d %s %s", w.ID, a.Attempt, a.Status, a.Code, a.End)
	if a.End != workflow.CallbackRetry {
		return nil
	}
	next := Message{WorkflowID: w.ID, TenantID: w.Tenant, Attempt: m.Attempt + 1}
	_, err = j.Queue.SendWithVisibilityDelay(ctx, next, max(Backoff[m.Attempt-1], retryAfter))
	return err
}

// outcome classifies a Post's error for attempt: the code (when there was no answer), the end,
// and the receiver's Retry-After.
func outcome(err error, attempt int) (code, end string, retryAfter time.Duration) {
	if err == nil {
		return "", workflow.CallbackDelivered, 0
	}
	var we *webhook.Error
	if errors.As(err, &we) {
		retryAfter = we.RetryAfter
		switch {
		case we.Status != 0:
		case errors.Is(err, webhook.ErrURLRefused):
			code = "url_refused"
		case we.Timeout():
			code = "timeout"
		case we.Retryable:
			code = "network"
		default:
			code = "invalid_request"
		}
	}
	if !errors.Is(err, webhook.ErrRetryable) || attempt > len(Backoff) {
		return code, workflow.CallbackFailed, 0
	}
	return code, workflow.CallbackRetry, retryAfter
}

// HandlePoison is the WorkflowCallbackPoison queue function: the host gave up on the message
// (storage kept failing). It records workflow.callback_failed (code retries_exhausted).
func (j *Job) HandlePoison(ctx context.Context, qm funcproto.QueueMessage) error {
	m, w, err := j.load(ctx, qm)
	if err != nil || w == nil {
		return err
	}
	return j.workflows().RecordCallback(ctx, w.Tenant, w.ID, systemActor,
		workflow.CallbackAttempt{Attempt: m.Attempt, Code: "retries_exhausted", End: workflow.CallbackFailed})
}

// load reads the message's workflow: nil when there is nothing to post (acknowledged).
func (j *Job) load(ctx context.Context, qm funcproto.QueueMessage) (Message, *workflow.Workflow, error) {
	var m Message
	if err := qm.Decode(&m); err != nil {
		return m, nil, err
	}
	m.Attempt = max(m.Attempt, 1)
	w, err := jobkit.Workflow(ctx, j.workflows(), "workflow-callback", m.WorkflowID, m.TenantID)
	if err != nil || w == nil {
		return m, nil, err
	}
	if !w.State.Terminal() || w.Setup.CallbackURL == "" {
		funcproto.Logf(ctx, "workflow-callback: %s (%s) has no callback to post; message acknowledged", w.ID, w.State)
		return m, nil, nil
	}
	return m, w, nil
}
