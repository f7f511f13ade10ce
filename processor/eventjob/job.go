// Package eventjob delivers the integrator events of DESIGN 17: a timer that fans the kernel's
// outbox rows (written with each change that makes an event) out to the tenant's matching
// subscriptions, then makes every due delivery attempt: signed the Standard Webhooks way,
// retried with back-off for 24 h under one webhook-id, each attempt in the subscription's
// deliveries log (shared/event); and the workflows' terminal callbacks the workflowcallback job
// hands it (Direct deliveries, signed X-Esign-Signature). A run killed half way loses nothing: the outbox entry and the
// pending deliveries stay due until their work is done, and the next run takes them again.
package eventjob

import (
	"context"
	"errors"
	"time"

	"github.com/esign-svc/esign/processor/internal/jobkit"
	"github.com/esign-svc/esign/shared/event"
	"github.com/esign-svc/esign/shared/funcproto"
)

// FunctionName is the timer's function (processor/functions/Events).
const FunctionName = "Events"

// BatchSize bounds the outbox entries and the deliveries one run takes.
const BatchSize = 100

// Deps are the job's dependencies.
type Deps struct {
	Outbox event.OutboxSource // the kernel's outbox (aggstore.Outbox, adapted by the app)
	Store  event.Store        // the subscriptions (webhookstore.Store)
	Queue  event.Queue        // their pending deliveries (webhookstore.Store)
	Sender *event.Sender
	Now    func() time.Time // time.Now when nil
}

// Job is the events timer.
type Job struct {
	fan  *event.Fanout
	send *event.Sender
}

// New checks d. Errors: a missing dependency.
func New(d Deps) (*Job, error) {
	if d.Outbox == nil || d.Store == nil || d.Queue == nil || d.Sender == nil {
		return nil, errors.New("eventjob: Outbox, Store, Queue and Sender are required")
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Job{fan: &event.Fanout{Source: d.Outbox, Store: d.Store, Queue: d.Queue, Now: d.Now}, send: d.Sender}, nil
}

// Functions is the job's function table.
func (j *Job) Functions() []jobkit.Function {
	return []jobkit.Function{{Name: FunctionName, Handler: funcproto.TimerHandler(j.Handle)}}
}

// Handle is one timer run.
func (j *Job) Handle(ctx context.Context, _ funcproto.TimerInfo) error {
	fanned, sent, err := j.Run(ctx)
	if fanned > 0 || sent > 0 {
		funcproto.Logf(ctx, "events: %d fanned out, %d delivery attempt(s)", fanned, sent)
	}
	return err
}

// Rounds bounds how many batches of each kind one run takes when more keep coming.
const Rounds = 10

// Run fans out the due outbox entries, then makes the due delivery attempts, each in rounds of
// BatchSize while a round finds work (at most Rounds). A fan-out error does not keep the due
// attempts from being made.
func (j *Job) Run(ctx context.Context) (fanned, sent int, err error) {
	var errF, errS error
	for round, n := 0, 1; round < Rounds && n > 0 && errF == nil; round++ {
		n, errF = j.fan.Run(ctx, BatchSize)
		fanned += n
	}
	for round, n := 0, BatchSize; round < Rounds && n == BatchSize && errS == nil; round++ {
		n, errS = j.send.Sends(ctx, BatchSize)
		sent += n
	}
	return fanned, sent, errors.Join(errF, errS)
}
