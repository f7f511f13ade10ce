package esign

import (
	"context"
	"errors"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/kernel"
)

// AuditEvent is one stored audit event of a session's trail (kernel.Record, audit.Record).
type AuditEvent = kernel.Record

// Errors of the stores the job use cases read (the session store's are these values).
var (
	// ErrConcurrent is a commit that lost a race on the session's ETag (the kernel's
	// aggstore.ErrConcurrent matches it).
	ErrConcurrent = &apperr.Error{Kind: apperr.KindConflict, Code: "concurrent_update", Detail: "the resource was changed by another request; nothing was written"}
	// ErrWrongTenant is a job message naming another tenant's session: the job answers it as
	// its message's fault (never retried).
	ErrWrongTenant = &apperr.Error{Kind: apperr.KindInvalid, Code: "tenant_mismatch", Detail: "the message's tenant is not the session's"}
)

// isConcurrent reports a lost race on the session's ETag.
func isConcurrent(err error) bool { return errors.Is(err, ErrConcurrent) }

// CorruptError is the error of a session row that does not decode (it matches the store's
// stored_session_corrupt). Its Session holds the row's plain columns, which always read (ids,
// state, the requester's encrypted address, the seal error, the ETag) and nothing of the part
// that failed: enough to record the seal's failure (FailCorruptSeal) and for the seal-failure
// notice, never enough to build evidence from.
type CorruptError struct {
	Session *Session
	Prop    string // the property that does not decode: "manifest", "slot03"
	Cause   error  // the store's error (it names the row and the property, never the content)
}

func (e *CorruptError) Error() string { return e.Cause.Error() }
func (e *CorruptError) Unwrap() error { return e.Cause }

// JobStore is what the processor's session jobs need of the session store
// (sessionstore.Store): the reads, the changes they commit on a session they hold, the events
// that change no state, the notification claims, the seal's rows and lock, and the expiry
// schedule.
type JobStore interface {
	NoticeStore
	SealStore
	// Load reads a session with its slots. Errors: ErrSessionNotFound; *CorruptError for a row
	// that does not decode; the store's.
	Load(ctx context.Context, groupID string) (*Session, []Slot, error)
	// Update loads the session, runs step and stores its change (SessionStore.Update).
	kernel.Updater[Aggregate, Step]
	// Commit stores a change of a session the caller loaded, on the ETag it was read with.
	// Errors: ErrConcurrent on a lost race; the store's.
	Commit(ctx context.Context, sess *Session, slots []Slot, ch Change, x Extras) error
	// RecordEvents writes events that change no state (no slot, no effect), leaving the
	// session row and its ETag alone.
	RecordEvents(ctx context.Context, groupID string, slots []Slot, ch Change) error
	// Events is the session's audit trail, oldest first. Errors: the audit store's
	// stored_audit_corrupt for a row that does not read back; the store's.
	Events(ctx context.Context, groupID string) ([]AuditEvent, error)

	// The expiry schedule: the live sessions due by now (at most limit), and forgetting the
	// entry of a session that ended (ForgetExpiry) or is gone (ForgetOrphanExpiry).
	DueForExpiry(ctx context.Context, now time.Time, limit int) ([]string, error)
	ForgetExpiry(ctx context.Context, sess *Session) error
	ForgetOrphanExpiry(ctx context.Context, groupID string, now time.Time) error
	// SweepTransfers deletes up to limit cross-device tokens that lapsed unredeemed.
	SweepTransfers(ctx context.Context, now time.Time, limit int) (int, error)
}

// SessionJobs is the signing session's use-case service for the processor's jobs (issue 23):
// one method per transition or read a job makes on a stored session. Each loads the session,
// checks the message's tenant (ErrWrongTenant), runs the machine and stores the change with its
// audit events, retrying a lost race as the job did; the job decodes its message, calls one
// method, carries out what is not the session's (a PDF, an e-mail, a portal call) and turns the
// answer into its reply. Session routes are Sessions'.
type SessionJobs struct {
	Store JobStore
	// InviteChecks is the sessions' invitation-check schedule (sessionstore.InviteChecks);
	// only CheckInvitations reads it.
	InviteChecks kernel.DueChecks
	// Reminders is the sessions' reminder schedule (sessionstore.Reminders); only
	// RunReminders reads it.
	Reminders ReminderSchedule
}

// own loads tenant's session groupID. Errors: ErrSessionNotFound; ErrWrongTenant; the
// store's (a *CorruptError as it is).
func (u *SessionJobs) own(ctx context.Context, tenant, groupID string) (*Session, []Slot, error) {
	s, slots, err := u.Store.Load(ctx, groupID)
	if err != nil {
		return nil, nil, err
	}
	if s.TenantID != tenant {
		return nil, nil, ErrWrongTenant
	}
	return s, slots, nil
}
