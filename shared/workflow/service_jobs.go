package workflow

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/esign-svc/esign/shared/audit"
	"github.com/esign-svc/esign/shared/kernel"
)

// Audit event kinds of the workflow notices (the processor's workflow-notify job).
const (
	EvNoticeSent   = "workflow.notice_sent"
	EvNoticeFailed = "workflow.notice_failed"
)

// Errors of a notice sent once (Repo.SendNotice): the kernel's, under the workflow's names.
var (
	// ErrNoticeSent: the notice was sent before; acknowledge without sending again.
	ErrNoticeSent = kernel.ErrNoticeSent
	// ErrNoticeInFlight: another worker is sending the notice now.
	ErrNoticeInFlight = kernel.ErrNoticeInFlight
)

// The processor's use cases (the workflow seal, callback, trigger and notify jobs). A job reads
// its message's workflow with Load and answers another tenant's message as the queue protocol
// says (processor/internal/jobkit); every transition below checks the tenant again inside the
// store's update, stamps the change by the job's actor and returns it without emitting: the
// job's reply carries its outputs, so it decides what a redelivered message repeats.

// Load reads the workflow a processor message names (one point read). Errors: ErrNotFound;
// the store's.
func (v *Workflows) Load(ctx context.Context, id string) (*Workflow, error) {
	return v.Store.Load(ctx, id)
}

// system runs a job's transition: the tenant checked on the workflow as loaded, the machine,
// the change stored with its audit rows by who.
func (v *Workflows) system(ctx context.Context, tenant, id string, who kernel.Actor, move func(x *Workflow, now time.Time) (kernel.Change, error)) (*Workflow, kernel.Change, error) {
	return v.Store.Update(ctx, id, func(x *Workflow) (kernel.Change, error) {
		if x.Tenant != tenant {
			return kernel.Change{}, ErrNotFound
		}
		ch, err := move(x, v.now())
		ch.By(who)
		return ch, err
	})
}

// settled is a transition's error with ErrInvalidState read as done: the workflow moved on
// meanwhile (another delivery of the message).
func settled(err error) error {
	if errors.Is(err, ErrInvalidState) {
		return nil
	}
	return err
}

// Complete stores the sealed PDF on a sealing workflow of the tenant and completes it
// (Workflow.Complete); the change's effects ask for the callback and the auto-trigger. Errors:
// ErrInvalidState when another attempt completed it first; ErrNotFound; the store's.
func (v *Workflows) Complete(ctx context.Context, tenant, id string, who kernel.Actor, sealedPath, sealedHash string) (*Workflow, kernel.Change, error) {
	return v.system(ctx, tenant, id, who, func(x *Workflow, now time.Time) (kernel.Change, error) {
		return x.Complete(sealedPath, sealedHash, now)
	})
}

// SealFailed records workflow.seal_failed with reason (Workflow.SealFailed); a workflow no
// longer sealing is not an error.
func (v *Workflows) SealFailed(ctx context.Context, tenant, id string, who kernel.Actor, reason string) error {
	_, _, err := v.system(ctx, tenant, id, who, func(x *Workflow, now time.Time) (kernel.Change, error) {
		return x.SealFailed(reason, now)
	})
	return settled(err)
}

// Events is the workflow's audit trail, oldest first (the seal's evidence bundle).
func (v *Workflows) Events(ctx context.Context, id string) ([]audit.Record, error) {
	return v.Store.Events(ctx, id)
}

// CallbackUnattempted reports whether complete workflow x has a callback no attempt was
// recorded for (what a resumed completion queues again).
func (v *Workflows) CallbackUnattempted(ctx context.Context, x *Workflow) (bool, error) {
	if x.Setup.CallbackURL == "" {
		return false, nil
	}
	evs, err := v.Store.Events(ctx, x.ID)
	if err != nil {
		return false, err
	}
	return !slices.ContainsFunc(evs, func(r audit.Record) bool { return r.Kind == EvCallbackAttempted }), nil
}

// RecordCallback records callback attempt a on an ended workflow of the tenant
// (Workflow.Callback). Errors: the machine's; ErrNotFound; the store's.
func (v *Workflows) RecordCallback(ctx context.Context, tenant, id string, who kernel.Actor, a CallbackAttempt) error {
	_, _, err := v.system(ctx, tenant, id, who, func(x *Workflow, now time.Time) (kernel.Change, error) {
		return x.Callback(a, now)
	})
	return err
}

// TriggerStarted records the auto-trigger's signing session or deliveries
// (Workflow.TriggerStarted); a trigger that ended meanwhile is not an error.
func (v *Workflows) TriggerStarted(ctx context.Context, tenant, id string, who kernel.Actor, groupID string, deliveryIDs []string) error {
	_, _, err := v.system(ctx, tenant, id, who, func(x *Workflow, now time.Time) (kernel.Change, error) {
		return x.TriggerStarted(groupID, deliveryIDs, now)
	})
	return settled(err)
}

// TriggerFailed records workflow.trigger_failed with code (Workflow.TriggerFailed); a trigger
// that ended meanwhile is not an error.
func (v *Workflows) TriggerFailed(ctx context.Context, tenant, id string, who kernel.Actor, code string) error {
	_, _, err := v.system(ctx, tenant, id, who, func(x *Workflow, now time.Time) (kernel.Change, error) {
		return x.TriggerFailed(code, now)
	})
	return settled(err)
}

// Notice sends one notice of workflow x once per key (the queue message's id) and audits it
// by who: send delivers the e-mails and says how many; the store then marks the key sent with
// workflow.notice_sent {kind, count, resend} in one transaction. A failed send gives the claim
// back; a claim taken over after the send is not an error (the e-mails went out). Errors:
// ErrNoticeSent for a key sent before (nothing sent); ErrNoticeInFlight while another worker
// holds it; send's; the store's.
func (v *Workflows) Notice(ctx context.Context, x *Workflow, key, kind string, resend bool, who kernel.Actor, lease time.Duration, send func() (int, error)) error {
	now := v.now()
	sent := false
	err := v.Store.SendNotice(ctx, x, key, now, lease, func() ([]kernel.Event, error) {
		n, err := send()
		if err != nil {
			return nil, err
		}
		sent = true
		var ch kernel.Change
		ch.Record(EvNoticeSent, kernel.NoSlot, now, map[string]any{"kind": kind, "count": n, "resend": resend})
		ch.By(who)
		return ch.Events, nil
	})
	if sent && errors.Is(err, ErrNoticeInFlight) {
		return nil
	}
	return err
}

// NoticeFailed records workflow.notice_failed {kind, code retries_exhausted} on workflow id,
// its state untouched.
func (v *Workflows) NoticeFailed(ctx context.Context, id, kind string, who kernel.Actor) error {
	var ch kernel.Change
	ch.Record(EvNoticeFailed, kernel.NoSlot, v.now(), map[string]any{"kind": kind, "code": "retries_exhausted"})
	ch.By(who)
	return v.Store.Record(ctx, id, ch.Events)
}
