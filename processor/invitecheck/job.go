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
	"fmt"
	"time"

	"github.com/esign-svc/esign/processor/internal/jobkit"
	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/delivery/deliverystore"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/esign/sessionstore"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/kernel/aggstore"
)

// FunctionName is the function folder (processor/functions/ReconcileInvitations).
const FunctionName = "ReconcileInvitations"

// BatchSize bounds the due entries of each schedule one run takes; the rest wait for the next.
const BatchSize = 100

// Sessions is what the job needs of the session store.
type Sessions interface {
	InviteChecks() *aggstore.Checks
	Load(ctx context.Context, groupID string) (*esign.Session, []esign.Slot, error)
	NotificationSent(ctx context.Context, groupID, id string) (bool, error)
}

// Deliveries is what the job needs of the delivery store.
type Deliveries interface {
	InviteChecks() *aggstore.Checks
	Load(ctx context.Context, deliveryID string) (*delivery.Session, error)
}

var (
	_ Sessions   = (*sessionstore.Store)(nil)
	_ Deliveries = (*deliverystore.Store)(nil)
)

// Deps are the job's dependencies, all required but Now.
type Deps struct {
	Sessions   Sessions
	Deliveries Deliveries
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
	if d.Sessions == nil || d.Deliveries == nil || d.Notify == nil || d.MessageID == nil || d.Invite == nil {
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
	var r Result
	errS := j.each(ctx, j.d.Sessions.InviteChecks(), now, &r, j.session)
	errD := j.each(ctx, j.d.Deliveries.InviteChecks(), now, &r, j.delivery)
	return r, errors.Join(errS, errD)
}

// errKeep is a check that found an invitation being sent by another worker right now (the
// queue job with the message that was thought lost): no failure, but the entry stays so a later
// run sees it recorded.
var errKeep = errors.New("invitecheck: an invitation is being sent elsewhere")

// inFlight turns the claim's in-flight errors into errKeep.
func inFlight(err error) error {
	if errors.Is(err, sessionstore.ErrInFlight) || errors.Is(err, deliverystore.ErrInviteInFlight) {
		return errKeep
	}
	return err
}

// each groups the due entries by aggregate, checks each aggregate once and forgets its entries
// when check succeeded.
func (j *Job) each(ctx context.Context, c *aggstore.Checks, now time.Time, r *Result, check func(ctx context.Context, id string, now time.Time) (int, error)) error {
	items, err := c.Due(ctx, now, BatchSize)
	if err != nil {
		return err
	}
	var order []string
	byID := map[string][]aggstore.Item{}
	for _, it := range items {
		if _, seen := byID[it.ID]; !seen {
			order = append(order, it.ID)
		}
		byID[it.ID] = append(byID[it.ID], it)
	}
	var errs []error
	for _, id := range order {
		sent, err := check(ctx, id, now)
		r.Sent += sent
		if errors.Is(err, errKeep) {
			funcproto.Logf(ctx, "invitecheck: an invitation of %s is being sent elsewhere; checked again next run", id)
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", id, err))
			continue
		}
		r.Checked++
		for _, it := range byID[id] {
			if err := c.Forget(ctx, it); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", id, err))
			}
		}
	}
	return errors.Join(errs...)
}

// session sends the invitations a signing session owes and that are not recorded as sent.
func (j *Job) session(ctx context.Context, groupID string, now time.Time) (int, error) {
	sess, slots, err := j.d.Sessions.Load(ctx, groupID)
	if apperr.KindOf(err) == apperr.KindNotFound {
		return 0, nil // a create that failed after scheduling its check
	}
	if err != nil {
		return 0, err
	}
	n := 0
	for _, m := range esign.OwedInvitations(sess, slots, now) {
		sent, err := j.d.Sessions.NotificationSent(ctx, groupID, j.d.MessageID(m))
		if err != nil {
			return n, err
		}
		if sent {
			continue
		}
		funcproto.Logf(ctx, "invitecheck: invitation of session %s slot %d not recorded as sent; sending", groupID, m.Slot)
		n++
		if err := j.d.Notify(ctx, m); err != nil && !funcproto.IsPermanent(err) {
			return n, inFlight(err)
		}
	}
	return n, nil
}

// delivery sends a delivery's invitation when it is owed and not recorded as sent.
func (j *Job) delivery(ctx context.Context, id string, now time.Time) (int, error) {
	s, err := j.d.Deliveries.Load(ctx, id)
	if apperr.KindOf(err) == apperr.KindNotFound {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if !s.Mode.Emails() || delivery.CheckLive(s, now) != nil || !s.SentAt.IsZero() {
		return 0, nil
	}
	funcproto.Logf(ctx, "invitecheck: invitation of delivery %s not recorded as sent; sending", id)
	if err := j.d.Invite(ctx, delivery.InviteMessage{DeliveryID: s.DeliveryID, TenantID: s.TenantID}); err != nil && !funcproto.IsPermanent(err) {
		return 1, inFlight(err)
	}
	return 1, nil
}
