// Package notifyjob is the processor's notifications queue job: it turns an esign.NotifyMessage
// (ids and a kind, never an address or a token) into one e-mail, sent through the configured
// e-mail provider, and records notification.sent in the session's audit trail. The poison
// handler records notification.failed for messages the host gave up on.
//
// Delivery guarantee: each message is sent at least once and, except after a crash, exactly
// once. Before sending, the job claims the row "sent-<message id>" in the session's partition
// (insert-if-absent); a redelivered message finds it and is acknowledged without sending (sent)
// or retried later (another worker is sending it now). After the provider accepts the message the
// row is marked sent together with the audit event, in one transaction. A send that fails gives
// the claim back, so a retry sends. Only a worker dying between the provider's acceptance and
// that transaction leaves a claim, which a later delivery takes over once the lease (ClaimLease)
// has passed: the e-mail may then go out twice, which is preferred to an invitation never sent.
// Providers with an idempotency key (the operator's service) get the message id as the dedupe id,
// so they can suppress that duplicate too.
//
// Nothing here logs an address, a token or a link: log lines carry kinds, groupIds and slot
// indexes.
package notifyjob

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/esign-svc/esign/processor/internal/jobkit"
	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/pii"
	"github.com/esign-svc/esign/shared/tokens"
)

// Function names (the folders under processor/functions).
const (
	FunctionName       = "Notify"
	PoisonFunctionName = "NotifyPoison"
)

// Audit event kinds this job writes.
const (
	EvNotificationSent   = "notification.sent"
	EvNotificationFailed = "notification.failed"
)

// ClaimLease is how long a claim protects a notification being sent from a second delivery; an
// older claim is taken to be a crashed worker's.
const ClaimLease = 2 * time.Minute

// Deps are the job's dependencies.
type Deps struct {
	Sessions  *esign.SessionJobs // the session jobs' use cases
	Tokens    *tokens.Codec
	Cipher    *pii.Cipher
	Email     notify.Sender
	PortalURL string           // base of the portal link, without trailing slash
	Now       func() time.Time // time.Now when nil
}

// Job handles notification messages.
type Job struct{ d Deps }

// New makes the job. Errors: a missing dependency (a wiring mistake).
func New(d Deps) (*Job, error) {
	if d.Sessions == nil || d.Sessions.Store == nil || d.Tokens == nil || d.Cipher == nil || d.Email == nil || d.PortalURL == "" {
		return nil, errors.New("notifyjob: Sessions, Tokens, Cipher, Email and PortalURL are required")
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Job{d: d}, nil
}

// Functions is the job's function table: the notification queue and its poison queue.
func (j *Job) Functions() []jobkit.Function {
	return []jobkit.Function{
		{Name: FunctionName, Handler: funcproto.QueueHandler(j.Handle)},
		{Name: PoisonFunctionName, Handler: funcproto.QueueHandler(j.HandlePoison)},
	}
}

var actor = esign.Actor{Kind: "system", ID: "notify"}

// Handle is the queue function: it decodes the message and runs Notify.
func (j *Job) Handle(ctx context.Context, qm funcproto.QueueMessage) error {
	var m esign.NotifyMessage
	if err := qm.Decode(&m); err != nil {
		return err
	}
	return j.NotifyAll(ctx, m)
}

// NotifyAll sends every notification of a message with targets (one per slot), each through
// Notify with its own claim, so a redelivered message re-sends none that went out. A target that
// failed for good is recorded (by Notify) and does not hold the others back; the first error
// worth retrying is returned after all targets were tried (the queue then redelivers the message
// and only the targets not yet sent go out).
func (j *Job) NotifyAll(ctx context.Context, m esign.NotifyMessage) error {
	var retry, permanent error
	for _, one := range m.Split() {
		err := j.Notify(ctx, one)
		switch {
		case err == nil:
		case funcproto.IsPermanent(err):
			if permanent == nil {
				permanent = err
			}
		case retry == nil:
			retry = err
		}
	}
	if retry != nil {
		return retry
	}
	if len(m.Targets) > 0 {
		return nil // each failure for good is recorded; the others went out
	}
	return permanent
}

// Notify sends the notification m asks for, or drops it (nil, with a log line saying why) when
// it no longer applies. Errors: Permanent ones for messages that can never succeed (unknown kind
// or session, a provider that refused the message: the refusal is recorded as
// notification.failed); any other error is worth retrying.
func (j *Job) Notify(ctx context.Context, m esign.NotifyMessage) error {
	kind := notify.Kind(m.Kind)
	if m.GroupID == "" {
		return funcproto.Permanent(apperr.Invalid(funcproto.CodeInvalidMessage, apperr.Field("groupId", "is required")))
	}
	// The seal failure's notice goes out for a row that does not decode (the seal failed
	// because of it): it needs only the row's plain columns.
	sess, slots, err := j.d.Sessions.Notice(ctx, m.TenantID, m.GroupID, kind == notify.KindSealFailure)
	if apperr.KindOf(err) == apperr.KindNotFound {
		return funcproto.Permanent(err)
	}
	if errors.Is(err, esign.ErrWrongTenant) {
		return funcproto.TenantMismatch("session")
	}
	if err != nil {
		return err
	}
	now := j.d.Now().UTC()
	msg, eventSlot, skip, err := j.compose(ctx, kind, m, sess, slots, now)
	if funcproto.IsPermanent(err) {
		return j.recordFailure(ctx, m, slots, now, codeOf(err), err)
	}
	if err != nil {
		return err
	}
	if skip != "" {
		funcproto.Logf(ctx, "notify: %s of session %s slot %d not sent: %s", kind, m.GroupID, m.Slot, skip)
		return nil
	}
	msg.CorrelationID = sess.CorrelationID
	return j.send(ctx, m, msg, slots, eventSlot, now)
}

// send claims, sends and records one message (see the package doc).
func (j *Job) send(ctx context.Context, m esign.NotifyMessage, msg notify.Message, slots []esign.Slot, eventSlot int, now time.Time) error {
	id := MessageID(m)
	var failed error // the provider's refusal or failure
	err := j.d.Sessions.SendOnce(ctx, m.GroupID, id, slots, now, ClaimLease, func(ctx context.Context) (esign.Event, error) {
		if failed = j.d.Email.Send(notify.WithDedupeID(ctx, id), msg); failed != nil {
			return esign.Event{}, failed
		}
		return esign.Event{Kind: EvNotificationSent, Slot: eventSlot, At: now, Actor: actor,
			Data: map[string]any{"kind": m.Kind, "slot": m.Slot, "channel": string(msg.Channel)}}, nil
	})
	switch {
	case errors.Is(err, esign.ErrAlreadySent):
		funcproto.Logf(ctx, "notify: %s of session %s slot %d was already sent; acknowledged", m.Kind, m.GroupID, m.Slot)
		return nil
	case failed != nil && apperr.KindOf(failed) == apperr.KindInvalid:
		return j.recordFailure(ctx, m, slots, now, codeOf(failed), funcproto.Permanent(failed))
	case failed != nil:
		return failed
	case err != nil:
		return err
	}
	funcproto.Logf(ctx, "notify: %s of session %s slot %d sent by e-mail", m.Kind, m.GroupID, m.Slot)
	return nil
}

// recordFailure writes notification.failed {kind, slot, code} and returns cause (a Permanent
// error: the message is acknowledged), or the storage error (retried, so the failure is recorded
// next time).
func (j *Job) recordFailure(ctx context.Context, m esign.NotifyMessage, slots []esign.Slot, now time.Time, code string, cause error) error {
	ev := esign.Event{Kind: EvNotificationFailed, Slot: eventSlotOf(m, slots), At: now, Actor: actor,
		Data: map[string]any{"kind": m.Kind, "slot": m.Slot, "code": code}}
	if err := j.d.Sessions.Note(ctx, m.GroupID, slots, actor, ev); err != nil {
		return err
	}
	funcproto.Logf(ctx, "notify: %s of session %s slot %d failed for good: %s", m.Kind, m.GroupID, m.Slot, code)
	return cause
}

// eventSlotOf is the audit event's slot: the slot for messages to its signer, -1 for requester
// notices (the recipient is not the slot's signer) and unknown slots.
func eventSlotOf(m esign.NotifyMessage, slots []esign.Slot) int {
	k := notify.Kind(m.Kind)
	if k != notify.KindInvitation && k != notify.KindSignerCompleted && k != notify.KindSignerReminder {
		return -1
	}
	for _, sl := range slots {
		if sl.Index == m.Slot {
			return m.Slot
		}
	}
	return -1
}

// MessageID identifies a notification for the claim row and the provider's dedupe id: a hash of
// kind, groupId, slot, link id and the reminder mark, and an automatic reminder's number when it
// has one (no personal data; the ids of messages without one are as before).
func MessageID(m esign.NotifyMessage) string {
	b := fmt.Appendf(nil, "%s\x00%s\x00%d\x00%s\x00%t", m.Kind, m.GroupID, m.Slot, m.LinkJTI, m.Reminder)
	if m.Round > 0 {
		b = fmt.Appendf(b, "\x00%d", m.Round)
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:16])
}

func codeOf(err error) string {
	if e, ok := apperr.As(err); ok {
		return e.Code
	}
	return "send_failed"
}

func errUnknownKind(kind notify.Kind) error {
	return funcproto.Permanent(apperr.Invalid("unknown_notification_kind", apperr.Field("kind", fmt.Sprintf("%q is not a notification this job sends", kind))))
}

// portalLink is {PORTAL_URL}/sign?token=<token>.
func (j *Job) portalLink(token string) string {
	return j.d.PortalURL + "/sign?token=" + url.QueryEscape(token)
}
