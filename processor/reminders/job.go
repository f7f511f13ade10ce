// Package reminders is the processor's SendReminders timer job (issue 27, DESIGN 17). A
// session created with a reminders block sits on the sessions' reminder schedule (sessionstore
// Reminders) at its next reminder; every ten minutes this job takes the due entries (no table
// is scanned, so a run costs what is due, not what is live) and, per session
// (esign.SessionJobs.RunReminders):
//
//   - records each due reminder (slot.reminded {reminder, link}) and puts the session back on
//     the schedule at its next one, until each signer had max reminders or the session ends;
//   - a signer who never opened the link gets an invitation (marked as a reminder) with a fresh
//     link: the slot's link id is replaced, so the unused link stops working;
//   - a signer who opened it gets the signer_reminder e-mail without a link (continue on the
//     device where they opened it: a new link would demote that device).
//
// The e-mails go through the notification job's own step (notifyjob.Job.Notify), which claims
// each once (aggstore.Once: "sent-<message id>", an automatic reminder's id naming its number)
// and records notification.sent with it, so a run that fails after recording a reminder sends
// it on the next run and never twice.
//
// Deliveries created with a reminders block (DESIGN 17: unopened recipients) sit on the
// deliveries' own reminder schedule (deliverystore Reminders); the same run takes their due
// entries (delivery.Reminders.Run) and hands each due round to the delivery job's step
// (deliveryupload.Job.Remind), which sends the invitation again as a reminder, with a working
// link, once per round (claim "sent-remind-<n>") and records delivery.reminded.
//
// Log lines carry ids and slot indexes only.
package reminders

import (
	"context"
	"errors"
	"time"

	"github.com/esign-svc/esign/processor/internal/jobkit"
	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/funcproto"
)

// FunctionName is the function folder (processor/functions/SendReminders).
const FunctionName = "SendReminders"

// BatchSize bounds the due entries one run takes; the rest wait for the next.
const BatchSize = 100

// Deps are the job's dependencies, all required but Now.
type Deps struct {
	// Sessions are the session jobs' use cases, with the reminder schedule
	// (esign.SessionJobs.Reminders).
	Sessions *esign.SessionJobs
	// Notify sends one signing notification (notifyjob.Job.Notify); MessageID is its claim id
	// (notifyjob.MessageID).
	Notify    func(ctx context.Context, m esign.NotifyMessage) error
	MessageID func(m esign.NotifyMessage) string
	// Deliveries are the deliveries' reminder use case (delivery.Reminders, with their schedule)
	// and Remind its step (deliveryupload.Job.Remind); both or neither (sessions only).
	Deliveries *delivery.Reminders
	Remind     func(ctx context.Context, m delivery.ReminderMessage) error
	Now        func() time.Time // time.Now when nil
}

// Job sends the due reminders.
type Job struct{ d Deps }

// New makes the job. Errors: a missing dependency (a wiring mistake).
func New(d Deps) (*Job, error) {
	if d.Sessions == nil || d.Sessions.Store == nil || d.Sessions.Reminders == nil || d.Notify == nil || d.MessageID == nil {
		return nil, errors.New("reminders: Sessions (with Reminders), Notify and MessageID are required")
	}
	if (d.Deliveries == nil) != (d.Remind == nil) || d.Deliveries != nil && (d.Deliveries.Schedule == nil || d.Deliveries.Store == nil) {
		return nil, errors.New("reminders: Deliveries (with Schedule and Store) and Remind go together")
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Job{d: d}, nil
}

// Functions is the job's function table: the reminder timer.
func (j *Job) Functions() []jobkit.Function {
	return []jobkit.Function{{Name: FunctionName, Handler: funcproto.TimerHandler(j.Handle)}}
}

// Handle is the timer function.
func (j *Job) Handle(ctx context.Context, _ funcproto.TimerInfo) error {
	r, err := j.Run(ctx)
	if r.Sent > 0 {
		funcproto.Logf(ctx, "reminders: %d session(s) or deliveries checked, %d reminder(s) sent", r.Checked, r.Sent)
	}
	for _, id := range r.Again {
		funcproto.Logf(ctx, "reminders: a reminder of %s is being sent elsewhere; checked again next run", id)
	}
	return err
}

// Result counts what a run did.
type Result struct {
	Checked int      // sessions and deliveries whose due entries were taken
	Sent    int      // reminders handed to the notification step or the delivery job's
	Again   []string // sessions and deliveries whose reminder was being sent elsewhere (kept for the next run)
}

// Run takes the due reminders. A failure on one session keeps its entries for the next run and
// does not stop the others; the errors come back joined. A send the provider refused for good
// is recorded by the notification step (notification.failed) and not tried again.
func (j *Job) Run(ctx context.Context) (Result, error) {
	r, err := j.d.Sessions.RunReminders(ctx, j.d.Now().UTC(), BatchSize, j.d.MessageID, func(ctx context.Context, m esign.NotifyMessage) error {
		funcproto.Logf(ctx, "reminders: reminding session %s slot %d (%s)", m.GroupID, m.Slot, m.Kind)
		if err := j.d.Notify(ctx, m); err != nil && !funcproto.IsPermanent(err) {
			return err
		}
		return nil
	})
	res := Result{Checked: r.Checked, Sent: r.Sent, Again: r.Again}
	if j.d.Deliveries == nil {
		return res, err
	}
	dr, derr := j.d.Deliveries.Run(ctx, j.d.Now().UTC(), BatchSize, func(ctx context.Context, m delivery.ReminderMessage) error {
		funcproto.Logf(ctx, "reminders: reminding delivery %s (round %d)", m.DeliveryID, m.Round)
		if err := j.d.Remind(ctx, m); err != nil && !funcproto.IsPermanent(err) {
			return err
		}
		return nil
	})
	res.Checked, res.Sent, res.Again = res.Checked+dr.Checked, res.Sent+dr.Sent, append(res.Again, dr.Again...)
	return res, errors.Join(err, derr)
}
