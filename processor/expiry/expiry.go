// Package expiry is the processor's ExpireSessions timer job: every minute it moves live
// sessions past their expiry to expired (their open slots too, with the audit events of the
// transition: esign.Expire) and forgets the expiry index rows of sessions that ended otherwise.
// Portal links of an expired session then answer 410 (the dispatcher checks the state and the
// expiry itself, so the job's minute of lag never lets a signer act late). The same run records
// delivery.expired for live deliveries past their expiry (delivery.Expiries, issue 27), whose
// links already answer 410 from their ExpiresAt on. And it sweeps the batch intakes that died
// (dispatch.IntakeSweep, issue 26): a batch whose intake started an hour ago and has no batch
// row has its record rows and blobs deleted.
package expiry

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/esign-svc/esign/processor/internal/jobkit"
	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/dispatch"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/funcproto"
)

// FunctionName is the function folder (processor/functions/ExpireSessions).
const FunctionName = "ExpireSessions"

// Schedule is the NCRONTAB schedule in its function.json: every minute.
const Schedule = "0 */1 * * * *"

// BatchSize is how many due sessions (and, apart, due delivery expiry entries and due intake
// entries) one run handles; the rest wait for the next minute.
const BatchSize = 100

// Actor stamps the job's audit events.
var Actor = esign.Actor{Kind: "system", ID: "expiry"}

// Job expires due sessions through the session jobs' use cases (esign.SessionJobs.ExpireDue),
// due deliveries through theirs (delivery.Expiries.Run) and sweeps the intakes that died
// (dispatch.IntakeSweep.Run).
type Job struct {
	sessions   *esign.SessionJobs
	deliveries *delivery.Expiries
	intakes    *dispatch.IntakeSweep
	now        func() time.Time
}

// Deps are the job's dependencies. Sessions, Deliveries and Intakes are required.
type Deps struct {
	Sessions   *esign.SessionJobs
	Deliveries *delivery.Expiries
	Intakes    *dispatch.IntakeSweep
	Now        func() time.Time // default time.Now
}

// New makes the job. It does no I/O. Errors: a missing dependency.
func New(d Deps) (*Job, error) {
	if d.Sessions == nil || d.Sessions.Store == nil {
		return nil, errors.New("expiry: Sessions is required")
	}
	if d.Deliveries == nil || d.Deliveries.Schedule == nil || d.Deliveries.Store == nil {
		return nil, errors.New("expiry: Deliveries is required")
	}
	if d.Intakes == nil || d.Intakes.Schedule == nil || d.Intakes.Store == nil || d.Intakes.Blobs == nil {
		return nil, errors.New("expiry: Intakes is required")
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Job{sessions: d.Sessions, deliveries: d.Deliveries, intakes: d.Intakes, now: d.Now}, nil
}

// Functions is the job's function table: the expiry timer.
func (j *Job) Functions() []jobkit.Function {
	return []jobkit.Function{
		{Name: FunctionName, Handler: funcproto.TimerHandler(j.Handle)},
	}
}

// Handle is the timer function.
func (j *Job) Handle(ctx context.Context, _ funcproto.TimerInfo) error {
	n, err := j.Run(ctx)
	if n.Sessions > 0 || n.Deliveries > 0 || n.Intakes > 0 {
		funcproto.Logf(ctx, "expiry: %d sessions, %d deliveries expired; %d failed batch intakes discarded", n.Sessions, n.Deliveries, n.Intakes)
	}
	return err
}

// Counts is what one run expired, and the failed batch intakes it discarded.
type Counts struct {
	Sessions   int
	Deliveries int
	Intakes    int
}

// Run handles up to BatchSize due sessions, up to BatchSize due delivery expiry entries and up
// to BatchSize due intake entries, and returns how many sessions and deliveries it expired and
// how many batch intakes it discarded; cross-device tokens that lapsed unredeemed are deleted
// in the same run. A failure on one session, delivery or intake does not stop the others; the
// errors come back joined (it stays due and the next run tries again).
func (j *Job) Run(ctx context.Context) (Counts, error) {
	now := j.now().UTC()
	var c Counts
	var errSessions, errDeliveries, errIntakes error
	c.Sessions, errSessions = j.sessions.ExpireDue(ctx, now, BatchSize, Actor)
	run, errDeliveries := j.deliveries.Run(ctx, now, BatchSize, Actor)
	c.Deliveries = run.Sent
	if errDeliveries != nil {
		errDeliveries = fmt.Errorf("deliveries: %w", errDeliveries)
	}
	swept, errIntakes := j.intakes.Run(ctx, now, BatchSize)
	c.Intakes = swept.Sent
	if errIntakes != nil {
		errIntakes = fmt.Errorf("intakes: %w", errIntakes)
	}
	return c, errors.Join(errSessions, errDeliveries, errIntakes)
}
