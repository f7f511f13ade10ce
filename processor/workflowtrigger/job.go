// Package workflowtrigger is the processor's auto-trigger of a sealed workflow record (DESIGN 10,
// section 9's auto-trigger): when the workflow-seal job completes a workflow whose
// templateSettings enabled esign or delivery, it queues the workflow's ids on queue QueueName;
// this job starts, on the sealed PDF (signed/<tenantId>/workflows/<id>.pdf), the signing session
// under the workflow's correlationId (with the delivery of the signed PDF waiting for it, when
// both are enabled) or the delivery sessions, through the same use case as a render
// (render.Starter), queues their invitations, and records workflow.esign_started or
// workflow.delivery_started.
//
// A redelivered message resumes: the session made under the correlationId on the same PDF is
// found again, the deliveries are made under the key workflow:<id> once. A trigger the creators
// refuse (the PDF gone, a signer's address refused since the workflow was made) is recorded as
// workflow.trigger_failed with the refusal's code and acknowledged; so is a trigger the licence
// no longer allows (it lost esign or delivery since the workflow was created, or expired:
// licence_feature_missing, licence_expired).
package workflowtrigger

import (
	"context"
	"errors"
	"time"

	"github.com/esign-svc/esign/processor/internal/jobkit"
	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/effects"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/licence"
	"github.com/esign-svc/esign/shared/licensing"
	"github.com/esign-svc/esign/shared/render"
	"github.com/esign-svc/esign/shared/workflow"
)

// Function names and the queue (processor/functions/<Name>/function.json). The function's
// outputs are the signers' invitations (queues.Notifications) and the deliveries
// (queues.DeliveryInvite, queues.DeliveryUpload), through shared/effects.
const (
	FunctionName       = "WorkflowTrigger"
	PoisonFunctionName = "WorkflowTriggerPoison"
	QueueName          = workflow.QueueTrigger
)

// Message names the complete workflow (what the seal job queues).
type Message = workflow.TriggerMessage

// Starter carries out an auto-trigger (render.Starter).
type Starter interface {
	Start(ctx context.Context, by render.Caller, tr render.Trigger, t render.Target, groupID, deliveryKey string) (render.Started, error)
}

var _ Starter = render.Starter{}

// Deps are the dependencies of the workflow auto-trigger job. Workflows, Starter and Licence are required.
type Deps struct {
	// Workflows is the workflow store (*workflowstore.Store), reached only through the use
	// cases (workflow.Workflows).
	Workflows workflow.Repo
	Starter   Starter
	Licence   *licence.Licence // the deployment's, checked again before anything starts
	Meter     licensing.Meter  // delivery.created per new delivery (DESIGN 19)
	Now       func() time.Time // default time.Now
}

// Job is the workflow auto-trigger job (New builds it).
type Job struct{ Deps }

// New makes the job. It does no I/O. Errors: a missing dependency.
func New(d Deps) (*Job, error) {
	if d.Workflows == nil || d.Starter == nil || d.Licence == nil {
		return nil, errors.New("workflowtrigger: Workflows, Starter and Licence are required")
	}
	return &Job{Deps: d}, nil
}

// Functions is the job's function table: the auto-trigger queue and its poison queue.
func (j *Job) Functions() []jobkit.Function {
	return []jobkit.Function{
		{Name: FunctionName, Handler: funcproto.QueueHandler(j.Handle)},
		{Name: PoisonFunctionName, Handler: funcproto.QueueHandler(j.HandlePoison)},
	}
}

var systemActor = kernel.Actor{Kind: "system", ID: "workflow-trigger"}

// DeliveryKey is the idempotency key of the deliveries of workflow id's sealed record.
func DeliveryKey(id string) string { return "workflow:" + id }

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

// Handle is the WorkflowTrigger queue function. Replies: nil once the session or the
// deliveries are started and recorded (their invitations queued), or when nothing is left to
// start (the trigger ended, the workflow is gone or not complete); nil after recording
// workflow.trigger_failed when the licence or the creators refuse the trigger; Permanent for a message without
// ids or of another tenant; a plain error (retried by the host, then poisoned) when storage
// fails.
func (j *Job) Handle(ctx context.Context, qm funcproto.QueueMessage) error {
	w, err := j.load(ctx, qm)
	if err != nil || w == nil {
		return err
	}
	tr, target, err := workflow.PlanTrigger(w)
	if err == nil && tr.None() {
		funcproto.Logf(ctx, "workflow-trigger: %s has nothing to start; message acknowledged", w.ID)
		return nil
	}
	if err == nil {
		err = j.Licence.Allow(tr.Plan())
	}
	var st render.Started
	if err == nil {
		by := render.Caller{TenantID: w.Tenant, CallerID: w.CreatedBy, Actor: systemActor, Licence: j.Licence}
		st, err = j.Starter.Start(ctx, by, tr, target, w.ESignGroupID, DeliveryKey(w.ID))
	}
	if k := apperr.KindOf(err); k == apperr.KindInvalid || k == apperr.KindConflict || k == apperr.KindTooLarge || k == apperr.KindForbidden {
		return j.fail(ctx, w, err)
	}
	if err != nil {
		return err
	}
	var groupID string
	var deliveryIDs []string
	switch {
	case st.ESign != nil:
		groupID = st.ESign.Session.GroupID
		if st.ESignNew {
			if err := effects.Emit(ctx, st.ESign.Session, st.ESign.Slots, st.ESign.Change, false); err != nil {
				return err
			}
		}
	case st.Delivery != nil:
		deliveryIDs = st.Delivery.DeliveryIDs
		if err := effects.EmitDeliveries(ctx, *st.Delivery, st.DeliveryMode, w.Tenant, j.Meter); err != nil {
			return err
		}
	}
	err = j.workflows().TriggerStarted(ctx, w.Tenant, w.ID, systemActor, groupID, deliveryIDs)
	if err == nil {
		funcproto.Logf(ctx, "workflow-trigger: %s: signing session %q, %d delivery session(s) started", w.ID, groupID, len(deliveryIDs))
	}
	return err
}

// HandlePoison is the WorkflowTriggerPoison queue function: the host gave up on the message. It
// records workflow.trigger_failed (retries_exhausted) unless the trigger ended.
func (j *Job) HandlePoison(ctx context.Context, qm funcproto.QueueMessage) error {
	w, err := j.load(ctx, qm)
	if err != nil || w == nil {
		return err
	}
	return j.fail(ctx, w, apperr.New(apperr.KindInternal, "retries_exhausted", "the auto-trigger failed after its retries"))
}

// fail records workflow.trigger_failed with cause's code and acknowledges.
// A trigger that ended meanwhile (another delivery of the message) is not an error.
func (j *Job) fail(ctx context.Context, w *workflow.Workflow, cause error) error {
	code := "trigger_failed"
	if e, ok := apperr.As(cause); ok {
		code = e.Code
	}
	funcproto.Logf(ctx, "workflow-trigger: %s: the auto-trigger cannot start (%s)", w.ID, code)
	return j.workflows().TriggerFailed(ctx, w.Tenant, w.ID, systemActor, code)
}

// load reads the message's workflow: nil when it is gone, not complete, or its trigger ended
// (acknowledged).
func (j *Job) load(ctx context.Context, qm funcproto.QueueMessage) (*workflow.Workflow, error) {
	var m Message
	if err := qm.Decode(&m); err != nil {
		return nil, err
	}
	w, err := jobkit.Workflow(ctx, j.workflows(), "workflow-trigger", m.WorkflowID, m.TenantID)
	if err != nil || w == nil {
		return nil, err
	}
	if w.State != workflow.StateComplete || w.Triggered() {
		funcproto.Logf(ctx, "workflow-trigger: %s is %s, trigger ended %v; message acknowledged", w.ID, w.State, w.Triggered())
		return nil, nil
	}
	return w, nil
}
