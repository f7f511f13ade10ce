// Package workflowcallback is the processor's terminal-callback job (DESIGN 10 and 17, spec
// "Workflow"): when a workflow ends (complete, rejected, cancelled) a message on queue QueueName
// makes this job hand {workflowId, correlationId, state, completedAt} for the workflow's
// callbackUrl to the events' sender (shared/event, a Direct delivery), which the Events timer
// posts: signed `X-Esign-Signature: t=..,v1=..` under WEBHOOK_SECRETS, the URL policy checked
// on every attempt, bounded time-out, no redirects; retried with the events' back-off for 24 h
// under one Idempotency-Key, each attempt in the tenant's callback deliveries log (CallbackLog).
// There is no second retry machine: this job only enqueues.
//
// Audit lets the sender record every attempt on the workflow (workflow.callback_attempted
// {attempt, status or code}), and the end as workflow.callback_delivered or
// workflow.callback_failed; never the URL or the body.
package workflowcallback

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/esign-svc/esign/processor/internal/jobkit"
	"github.com/esign-svc/esign/shared/event"
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

// CallbackLog is the deliveries log (per tenant) the callbacks' attempts go to, and
// CallbackType their type in it.
const (
	CallbackLog  = "workflow-callback"
	CallbackType = "workflow.callback"
)

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

// Queue takes the callback for the events' sender (*webhookstore.Store).
type Queue interface {
	Enqueue(ctx context.Context, p event.Pending) error
}

// Deps are the callback job's dependencies, all required.
type Deps struct {
	// Workflows is the workflow store (*workflowstore.Store), reached only through the use
	// cases (workflow.Workflows).
	Workflows workflow.Repo
	Sends     Queue
	Now       func() time.Time // default time.Now
}

// Job is the callback job (New builds it).
type Job struct{ Deps }

// New makes the job. It does no I/O. Errors: a missing dependency.
func New(d Deps) (*Job, error) {
	if d.Workflows == nil || d.Sends == nil {
		return nil, errors.New("workflowcallback: Workflows and Sends are required")
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

// Handle is the WorkflowCallback queue function. Replies: nil once the callback is handed to
// the sender (again: a message handled twice enqueues it once, keyed by its idempotency key);
// nil without effect for a workflow that is gone, has not ended or has no callbackUrl;
// Permanent for a message without ids or of another tenant; a plain error (retried by the
// host, then poisoned) when storage fails.
func (j *Job) Handle(ctx context.Context, qm funcproto.QueueMessage) error {
	_, w, err := j.load(ctx, qm)
	if err != nil || w == nil {
		return err
	}
	p, err := Pending(w, j.now())
	if err != nil {
		return err
	}
	if err := j.Sends.Enqueue(ctx, p); err != nil {
		return err
	}
	funcproto.Logf(ctx, "workflow-callback: %s (%s) handed to the sender", w.ID, w.State)
	return nil
}

// Pending is ended workflow w's callback as a delivery of the events' sender, due at now.
func Pending(w *workflow.Workflow, now time.Time) (event.Pending, error) {
	body, err := json.Marshal(Body{WorkflowID: w.ID, CorrelationID: w.CorrelationID, State: string(w.State), CompletedAt: w.CompletedAt.UTC()})
	if err != nil {
		return event.Pending{}, err
	}
	key := webhook.Key("workflow-callback", w.ID, string(w.State))
	return event.Pending{TenantID: w.Tenant, SubID: CallbackLog,
		Event:  event.Envelope{ID: key, Type: CallbackType, Timestamp: w.CompletedAt.UTC(), TenantID: w.Tenant},
		Direct: &event.Direct{URL: w.Setup.CallbackURL, Body: body, Ref: w.ID}, FirstAt: now, NextAt: now}, nil
}

// Audit is the sender's OnDirect for the callbacks: it records attempt a of p's workflow
// (workflow.callback_attempted, then _delivered or _failed at its end). Other Direct
// deliveries are not its own and pass.
func Audit(workflows workflow.Repo, now func() time.Time) func(ctx context.Context, p event.Pending, a event.Attempt, code string) error {
	j := &Job{Deps: Deps{Workflows: workflows, Now: now}}
	return func(ctx context.Context, p event.Pending, a event.Attempt, code string) error {
		if p.SubID != CallbackLog || p.Direct == nil {
			return nil
		}
		ca := workflow.CallbackAttempt{Attempt: a.Attempt, Status: a.Status, Code: code}
		switch a.Outcome {
		case event.OutcomeDelivered:
			ca.End = workflow.CallbackDelivered
		case event.OutcomeRetrying:
			ca.End = workflow.CallbackRetry
		default:
			ca.End = workflow.CallbackFailed
		}
		err := j.workflows().RecordCallback(ctx, p.TenantID, p.Direct.Ref, systemActor, ca)
		if errors.Is(err, workflow.ErrNotFound) {
			return nil // the workflow is gone: its callback is still logged
		}
		return err
	}
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
