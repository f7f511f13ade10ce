// Package portalpurge is the processor's post-seal clean-up of the personal data the signing
// portal holds (spec "What the service does": the processor's post-seal clean-up of personal
// data held by the portal). The seal job, once a session is complete, queues a Message on
// "portalpurge" (its output binding "purge"); this job asks the portal, through
// portalclient.Client.Purge, to forget every slot of the session, and records pii.purged
// {what: "portal session data", slots: n} in the audit trail. Running as its own queue job means
// a portal outage never holds up completion or the notices: the host retries, and after
// maxDequeueCount the poison handler records pii.purge_failed.
//
// Idempotency: a second message for a session already purged calls the portal again (the portal
// is idempotent by Idempotency-Key, and 404 counts as done) but records no second pii.purged:
// the audit trail is read first. Two copies of one message running at the very same moment
// could both record it; the queue delivers one message per seal, so this is accepted rather than
// paid for with a lock.
//
// Without a portal API (PORTAL_API_URL unset, local development) the job records
// pii.purge_skipped {what, reason: "portal API not configured"} once per session and acks: the
// trail says the portal was not asked, never that it purged.
package portalpurge

import (
	"context"
	"errors"
	"time"

	"github.com/esign-svc/esign/processor/internal/jobkit"
	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/portalclient"
)

// Function names (function.json); the queue is queues.PortalPurge.
const (
	FunctionName       = "PortalPurge"
	PoisonFunctionName = "PortalPurgePoison"
)

// Audit event kinds and data.
const (
	EvPurgeFailed  = "pii.purge_failed"
	EvPurgeSkipped = "pii.purge_skipped"
	// What is the "what" of this job's pii.* events, telling them apart from the seal job's
	// "signature images".
	What = "portal session data"
	// ReasonNotConfigured is the pii.purge_skipped reason without a portal API.
	ReasonNotConfigured = "portal API not configured"
	// CodeRetriesExhausted is the pii.purge_failed code the poison handler records.
	CodeRetriesExhausted = "retries_exhausted"
)

// Message is the queue message (queues.PortalPurge): the session to purge at the portal.
type Message = esign.PurgeMessage

// Purger is what the job needs of the portal client (*portalclient.Client).
type Purger interface {
	Purge(ctx context.Context, r portalclient.PurgeRequest) error
}

var _ Purger = (*portalclient.Client)(nil)

// Deps are the job's dependencies. Sessions (the session jobs' use cases) is required; a nil
// Portal means no portal API is configured; a nil Now is time.Now.
type Deps struct {
	Sessions *esign.SessionJobs
	Portal   Purger
	Now      func() time.Time
}

// Job is the portal purge job.
type Job struct{ d Deps }

// systemActor stamps the job's audit events.
var systemActor = esign.Actor{Kind: "system", ID: "portalpurge"}

// New makes the job. Errors: a missing Sessions (a wiring mistake).
func New(d Deps) (*Job, error) {
	if d.Sessions == nil || d.Sessions.Store == nil {
		return nil, errors.New("portalpurge: Sessions is required")
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Job{d: d}, nil
}

// Functions is the job's function table: the purge queue and its poison queue.
func (j *Job) Functions() []jobkit.Function {
	return []jobkit.Function{
		{Name: FunctionName, Handler: funcproto.QueueHandler(j.Handle)},
		{Name: PoisonFunctionName, Handler: funcproto.QueueHandler(j.HandlePoison)},
	}
}

// load decodes the message and reads its session. A nil session with a nil error means ack.
// Errors: Permanent for a message that does not decode, lacks ids, or names another tenant's
// session; the store's (retried).
func (j *Job) load(ctx context.Context, qm funcproto.QueueMessage, name string) (*esign.Session, []esign.Slot, error) {
	var m Message
	if err := qm.Decode(&m); err != nil {
		return nil, nil, err
	}
	if m.GroupID == "" || m.TenantID == "" {
		return nil, nil, funcproto.Permanent(apperr.Invalid(funcproto.CodeInvalidMessage,
			apperr.Field("groupId", "groupId and tenantId are required")))
	}
	sess, slots, err := j.d.Sessions.Get(ctx, m.TenantID, m.GroupID)
	if apperr.KindOf(err) == apperr.KindNotFound {
		funcproto.Logf(ctx, "%s: no session %s; message acknowledged", name, m.GroupID)
		return nil, nil, nil
	}
	if errors.Is(err, esign.ErrWrongTenant) {
		return nil, nil, funcproto.Permanent(apperr.New(apperr.KindInvalid, funcproto.CodeTenantMismatch,
			"the purge message's tenant is not the session's"))
	}
	if err != nil {
		return nil, nil, err
	}
	return sess, slots, nil
}

// recorded reports whether the trail holds an event of kind about What.
func (j *Job) recorded(ctx context.Context, groupID, kind string) (bool, error) {
	return j.d.Sessions.Recorded(ctx, groupID, kind, What)
}

// record writes one session-level event by the job.
func (j *Job) record(ctx context.Context, sess *esign.Session, slots []esign.Slot, kind string, data map[string]any) error {
	data["what"] = What
	return j.d.Sessions.Note(ctx, sess.GroupID, slots, systemActor, esign.Event{Kind: kind, Slot: -1, At: j.d.Now().UTC(), Data: data})
}

// sessionIDs are the portal's per-slot ids of every slot.
func sessionIDs(slots []esign.Slot) []string {
	out := make([]string, 0, len(slots))
	for _, sl := range slots {
		if sl.SessionID != "" {
			out = append(out, sl.SessionID)
		}
	}
	return out
}

// errCode is what a log line or the trail may say about err: its code, or "unavailable".
func errCode(err error) string {
	if e, ok := apperr.As(err); ok {
		return e.Code
	}
	return portalclient.CodeUnavailable
}
