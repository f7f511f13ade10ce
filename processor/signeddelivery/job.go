// Package signeddelivery is the processor's job for the delivery that waits for signing
// (auto-trigger with templateSettings.esign and .delivery, DESIGN 9): when a session with a
// delivery plan completes, the seal job queues its ids on queue QueueName; this job makes the
// delivery sessions of the signed PDF through delivery.Creator (under an idempotency key of the
// session, so a redelivered message makes them once), queues their invitations and uploads,
// and records session.delivery_started, which drops the plan and its recipients' addresses. A
// licence that lost the delivery feature (or expired) since the render is recorded as
// session.delivery_failed with the licence's code.
package signeddelivery

import (
	"context"
	"errors"
	"time"

	"github.com/esign-svc/esign/processor/internal/jobkit"
	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/effects"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/licence"
	"github.com/esign-svc/esign/shared/licensing"
	"github.com/esign-svc/esign/shared/pii"
	"github.com/esign-svc/esign/shared/render"
)

// Function names and the queue (processor/functions/<Name>/function.json).
const (
	FunctionName       = "SignedDelivery"
	PoisonFunctionName = "SignedDeliveryPoison"
	QueueName          = esign.QueueSignedDelivery
)

// Message names the completed session (esign.SealMessage's ids).
type Message = esign.SealMessage

// Creator makes delivery sessions (delivery.Creator).
type Creator interface {
	Create(ctx context.Context, by delivery.Requester, key string, req delivery.CreateRequest) (delivery.Created, error)
}

// Deps are the dependencies of the signed-delivery job. Licence is required.
type Deps struct {
	Sessions *esign.SessionJobs // the session jobs' use cases
	Creator  Creator
	Cipher   *pii.Cipher
	Licence  *licence.Licence // the deployment's, checked again before the deliveries are made
	Meter    licensing.Meter  // delivery.created per new delivery (DESIGN 19)
	Now      func() time.Time
}

// Job is the signed-delivery job (New builds it).
type Job struct{ Deps }

// New makes the job. It does no I/O. Errors: a missing dependency.
func New(d Deps) (*Job, error) {
	if d.Sessions == nil || d.Sessions.Store == nil || d.Creator == nil || d.Cipher == nil || d.Licence == nil {
		return nil, errors.New("signeddelivery: Sessions, Creator, Cipher and Licence are required")
	}
	return &Job{Deps: d}, nil
}

// Functions is the job's function table: the signed-delivery queue and its poison queue.
func (j *Job) Functions() []jobkit.Function {
	return []jobkit.Function{
		{Name: FunctionName, Handler: funcproto.QueueHandler(j.Handle)},
		{Name: PoisonFunctionName, Handler: funcproto.QueueHandler(j.HandlePoison)},
	}
}

var systemActor = kernel.Actor{Kind: "system", ID: "signed-delivery"}

// Handle is the SignedDelivery queue function. Replies: nil once the deliveries are made and
// recorded (or were before: no plan left); nil after recording session.delivery_failed when the
// plan can never be carried out (unreadable, refused by delivery's validation or by the
// licence); Permanent
// for a message without ids or of another tenant; a plain error (retried, then poisoned) when
// storage fails.
func (j *Job) Handle(ctx context.Context, qm funcproto.QueueMessage) error {
	s, err := j.load(ctx, qm)
	if err != nil || s == nil {
		return err
	}
	req, err := render.SignedDelivery(s, j.Cipher)
	if errors.Is(err, esign.ErrNoDeliveryPlanned) {
		funcproto.Logf(ctx, "signed-delivery: group %s has no delivery waiting (%s); message acknowledged", s.GroupID, s.State)
		return nil
	}
	if err == nil {
		err = j.Licence.Allow(licence.Plan{Delivery: true})
	}
	if err != nil {
		return j.fail(ctx, s.GroupID, err)
	}
	by := delivery.Requester{TenantID: s.TenantID, CallerID: systemActor.ID, Actor: systemActor}
	c, err := j.Creator.Create(ctx, by, render.SignedDeliveryKey(s.GroupID), req)
	if apperr.KindOf(err) == apperr.KindInvalid {
		return j.fail(ctx, s.GroupID, err)
	}
	if err != nil {
		return err
	}
	if err := effects.EmitDeliveries(ctx, c, req.Mode, s.TenantID, j.Meter); err != nil {
		return err
	}
	err = j.Sessions.StartedDelivery(ctx, s.GroupID, c.DeliveryIDs, j.Now().UTC(), systemActor)
	if err == nil {
		funcproto.Logf(ctx, "signed-delivery: group %s: %d delivery session(s) made", s.GroupID, len(c.DeliveryIDs))
	}
	return err
}

// HandlePoison is the SignedDeliveryPoison queue function: the host gave up on the message. It
// records session.delivery_failed (code retries_exhausted) unless the deliveries were recorded.
func (j *Job) HandlePoison(ctx context.Context, qm funcproto.QueueMessage) error {
	s, err := j.load(ctx, qm)
	if err != nil || s == nil {
		return err
	}
	return j.fail(ctx, s.GroupID, apperr.New(apperr.KindInternal, "retries_exhausted", "the delivery failed after its retries"))
}

// fail records session.delivery_failed with cause's code and acknowledges.
func (j *Job) fail(ctx context.Context, groupID string, cause error) error {
	code := "delivery_failed"
	if e, ok := apperr.As(cause); ok {
		code = e.Code
	}
	funcproto.Logf(ctx, "signed-delivery: group %s: the delivery cannot be made (%s)", groupID, code)
	return j.Sessions.FailedDelivery(ctx, groupID, code, j.Now().UTC(), systemActor)
}

// load reads the message's session: nil when it is gone (acknowledged).
func (j *Job) load(ctx context.Context, qm funcproto.QueueMessage) (*esign.Session, error) {
	var m Message
	if err := qm.Decode(&m); err != nil {
		return nil, err
	}
	if m.GroupID == "" || m.TenantID == "" {
		return nil, funcproto.Permanent(apperr.Invalid(funcproto.CodeInvalidMessage, apperr.Field("groupId", "groupId and tenantId are required")))
	}
	s, _, err := j.Sessions.Get(ctx, m.TenantID, m.GroupID)
	if apperr.KindOf(err) == apperr.KindNotFound {
		funcproto.Logf(ctx, "signed-delivery: no session %s; message acknowledged", m.GroupID)
		return nil, nil
	}
	if errors.Is(err, esign.ErrWrongTenant) {
		return nil, funcproto.TenantMismatch("session")
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}
