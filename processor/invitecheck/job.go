// Package invitecheck is the processor's ReconcileInvitations timer job (issue 10). An
// invitation leaves the dispatcher as a queue output that the host writes only after the
// function answered; a host that loses it would leave a signer or a recipient uninvited for
// good. So every change that invites puts its aggregate on an invitation-check schedule
// (sessionstore and deliverystore InviteSchedule, due INVITE_CHECK_AFTER later, written before
// the change), and this job, every five minutes, takes the due entries (no table is scanned):
//
//   - a signing session: for each invitation it still owes (esign.OwedInvitations: slot invited
//     and open, link unused, session live) whose notification claim row is not marked sent, it
//     runs the notify job's Notify with the message the change queued;
//   - a delivery whose mode e-mails the recipient, live and without sentAt: the delivery invite
//     job's Invite.
//
// Sending through the queue jobs' own code keeps it exactly once in effect: an invitation is
// claimed before it is sent (a row of the aggregate's partition: "sent-<message id>" for a
// signer, "sent-invite" for a delivery; aggstore.Once) and the claim is marked sent with the
// audit event, so the lost message showing up later is acknowledged without a second e-mail,
// and one arriving while this job sends (or a second run of this job) finds the claim held and
// leaves it to the holder (this job then keeps the entry and looks again next run). An entry is
// removed once its
// aggregate owes nothing unsent (or is gone); a send worth retrying keeps it for the next run,
// bounded by the aggregate's life (an ended aggregate owes nothing). A send the provider
// refused for good is recorded by the job that tried (notification.failed,
// delivery.invite_failed) and not tried again.
//
// Log lines carry ids and slot indexes only.
package invitecheck

import (
	"context"
	"errors"
	"time"

	"github.com/esign-svc/esign/processor/internal/jobkit"
	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/kernel"
)

// FunctionName is the function folder (processor/functions/ReconcileInvitations).
const FunctionName = "ReconcileInvitations"

// BatchSize bounds the due entries of each schedule one run takes; the rest wait for the next.
const BatchSize = 100

// Deps are the job's dependencies, all required but Now.
type Deps struct {
	// Sessions are the session jobs' use cases, with the sessions' invitation-check schedule
	// (esign.SessionJobs.CheckInvitations); Deliveries the deliveries' (delivery.InviteChecks).
	Sessions   *esign.SessionJobs
	Deliveries *delivery.InviteChecks
	// Notify sends one signing notification (notifyjob.Job.Notify); MessageID is its claim id
	// (notifyjob.MessageID).
	Notify    func(ctx context.Context, m esign.NotifyMessage) error
	MessageID func(m esign.NotifyMessage) string
	// Invite sends a delivery's invitation (deliveryupload.Job.Invite).
	Invite func(ctx context.Context, m delivery.InviteMessage) error
	Now    func() time.Time // time.Now when nil
}

// Job reconciles invitations.
type Job struct{ d Deps }

// New makes the job. Errors: a missing dependency (a wiring mistake).
func New(d Deps) (*Job, error) {
	if d.Sessions == nil || d.Sessions.Store == nil || d.Sessions.InviteChecks == nil || d.Deliveries == nil ||
		d.Deliveries.Schedule == nil || d.Deliveries.Store == nil || d.Notify == nil || d.MessageID == nil || d.Invite == nil {
		return nil, errors.New("invitecheck: Sessions, Deliveries, Notify, MessageID and Invite are required")
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Job{d: d}, nil
}

// Functions is the job's function table: the invitation reconciler timer.
func (j *Job) Functions() []jobkit.Function {
	return []jobkit.Function{
		{Name: FunctionName, Handler: funcproto.TimerHandler(j.Handle)},
	}
}

// Result counts what a run did.
type Result struct {
	Checked int // aggregates whose due checks were taken
	Sent    int // invitations found unsent and handed to their job
}

// Handle is the timer function.
func (j *Job) Handle(ctx context.Context, _ funcproto.TimerInfo) error {
	r, err := j.Run(ctx)
	if r.Sent > 0 {
		funcproto.Logf(ctx, "invitecheck: %d checked, %d unsent invitation(s) sent", r.Checked, r.Sent)
	}
	return err
}

// Run takes the due checks of both schedules. A failure on one aggregate keeps its entries for
// the next run and does not stop the others; the errors come back joined.
func (j *Job) Run(ctx context.Context) (Result, error) {
	now := j.d.Now().UTC()
	rs, errS := j.d.Sessions.CheckInvitations(ctx, now, BatchSize, j.d.MessageID, func(ctx context.Context, m esign.NotifyMessage) error {
		funcproto.Logf(ctx, "invitecheck: invitation of session %s slot %d not recorded as sent; sending", m.GroupID, m.Slot)
		return retryable(j.d.Notify(ctx, m))
	})
	again(ctx, rs)
	rd, errD := j.d.Deliveries.Run(ctx, now, BatchSize, func(ctx context.Context, m delivery.InviteMessage) error {
		funcproto.Logf(ctx, "invitecheck: invitation of delivery %s not recorded as sent; sending", m.DeliveryID)
		return retryable(j.d.Invite(ctx, m))
	})
	again(ctx, rd)
	return Result{Checked: rs.Checked + rd.Checked, Sent: rs.Sent + rd.Sent}, errors.Join(errS, errD)
}

// retryable is a send's error worth another run: a failure for good was recorded by the job
// that tried (notification.failed, delivery.invite_failed) and is not tried again.
func retryable(err error) error {
	if funcproto.IsPermanent(err) {
		return nil
	}
	return err
}

// again logs the aggregates whose invitation was being sent elsewhere: no failure, but their
// entries stay so that a later run sees the invitation recorded.
func again(ctx context.Context, r kernel.CheckRun) {
	for _, id := range r.Again {
		funcproto.Logf(ctx, "invitecheck: an invitation of %s is being sent elsewhere; checked again next run", id)
	}
}
