// Package expiry is the processor's ExpireSessions timer job: every minute it moves live
// sessions past their expiry to expired (their open slots too, with the audit events of the
// transition: esign.Expire) and forgets the expiry index rows of sessions that ended otherwise.
// Portal links of an expired session then answer 410 (the dispatcher checks the state and the
// expiry itself, so the job's minute of lag never lets a signer act late).
package expiry

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/esign-svc/esign/processor/internal/jobkit"
	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/esign/sessionstore"
	"github.com/esign-svc/esign/shared/funcproto"
)

// FunctionName is the function folder (processor/functions/ExpireSessions).
const FunctionName = "ExpireSessions"

// Schedule is the NCRONTAB schedule in its function.json: every minute.
const Schedule = "0 */1 * * * *"

// BatchSize is how many due sessions one run handles; the rest wait for the next minute.
const BatchSize = 100

// Actor stamps the job's audit events.
var Actor = esign.Actor{Kind: "system", ID: "expiry"}

// Store is what the job needs of the session store.
type Store interface {
	DueForExpiry(ctx context.Context, now time.Time, limit int) ([]string, error)
	Load(ctx context.Context, groupID string) (*esign.Session, []esign.Slot, error)
	Commit(ctx context.Context, sess *esign.Session, slots []esign.Slot, ch esign.Change, x esign.Extras) error
	ForgetExpiry(ctx context.Context, sess *esign.Session) error
	ForgetOrphanExpiry(ctx context.Context, groupID string, now time.Time) error
	SweepTransfers(ctx context.Context, now time.Time, limit int) (int, error)
}

var _ Store = (*sessionstore.Store)(nil)

// Job expires due sessions.
type Job struct {
	store Store
	now   func() time.Time
}

// Deps are the job's dependencies. Store is required.
type Deps struct {
	Store Store
	Now   func() time.Time // default time.Now
}

// New makes the job. It does no I/O. Errors: a missing dependency.
func New(d Deps) (*Job, error) {
	if d.Store == nil {
		return nil, errors.New("expiry: Store is required")
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Job{store: d.Store, now: d.Now}, nil
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
	if n > 0 {
		funcproto.Logf(ctx, "expiry: %d sessions expired", n)
	}
	return err
}

// Run handles up to BatchSize due sessions and returns how many it expired. A failure on one
// session does not stop the others; the errors come back joined (the session stays due and the
// next run tries again).
func (j *Job) Run(ctx context.Context) (int, error) {
	now := j.now().UTC()
	due, err := j.store.DueForExpiry(ctx, now, BatchSize)
	if err != nil {
		return 0, err
	}
	var errs []error
	n := 0
	for _, groupID := range due {
		expired, err := j.expire(ctx, groupID, now)
		if err != nil {
			errs = append(errs, fmt.Errorf("session %s: %w", groupID, err))
			continue
		}
		if expired {
			n++
		}
	}
	// Cross-device tokens that lapsed unredeemed are deleted in the same run.
	if _, err := j.store.SweepTransfers(ctx, now, BatchSize); err != nil {
		errs = append(errs, fmt.Errorf("transfer tokens: %w", err))
	}
	return n, errors.Join(errs...)
}

// expire moves one session to expired (retrying once on a lost race) and forgets its expiry row.
func (j *Job) expire(ctx context.Context, groupID string, now time.Time) (bool, error) {
	for attempt := 0; ; attempt++ {
		sess, slots, err := j.store.Load(ctx, groupID)
		if apperr.KindOf(err) == apperr.KindNotFound {
			return false, j.store.ForgetOrphanExpiry(ctx, groupID, now)
		}
		if err != nil {
			return false, err
		}
		if !sess.State.Live() {
			return false, j.store.ForgetExpiry(ctx, sess)
		}
		if !sess.Expired(now) {
			return false, nil // its expiry row is stale (not yet due by the session's own time)
		}
		ch := esign.Expire(sess, slots, now)
		ch.By(Actor)
		err = j.store.Commit(ctx, sess, slots, ch, esign.Extras{})
		if sessionstore.IsConcurrent(err) && attempt == 0 {
			continue
		}
		if err != nil {
			return false, err
		}
		return true, j.store.ForgetExpiry(ctx, sess)
	}
}
