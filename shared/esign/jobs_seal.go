package esign

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
)

// Errors of the seal's reads and lock.
var (
	// ErrSealBusy means another seal attempt of the session holds its lock: worth a retry later.
	ErrSealBusy = &apperr.Error{Kind: apperr.KindConflict, Code: "seal_in_progress", Detail: "another seal attempt of this session is running"}
	// ErrSignatureCorrupt matches the error of a stored signature that does not read back whole.
	ErrSignatureCorrupt = &apperr.Error{Kind: apperr.KindInternal, Code: "stored_signature_corrupt", Detail: "a stored signature could not be read"}
)

// StoredSignature is what a signer submitted with the callback, kept for the seal and purged
// after it (sessionstore.Signature).
type StoredSignature struct {
	PNG      []byte
	Fields   string // JSON of the completed manifest fields
	Consents string // JSON of the consent acceptances with their verbatim texts
}

// SealStore is what the seal's use cases need of the session store besides JobStore's
// (sessionstore.Store).
type SealStore interface {
	// Signature reads slot's stored signature. Errors: KindNotFound (none: never signed, or
	// purged); ErrSignatureCorrupt; the store's.
	Signature(ctx context.Context, groupID string, slot int) (StoredSignature, error)
	// SignatureSlots lists the slots with a stored signature; DeleteSignature removes one
	// (absent is no error).
	SignatureSlots(ctx context.Context, groupID string) ([]int, error)
	DeleteSignature(ctx context.Context, groupID string, slot int) error
	// AcquireSealLock takes or renews the session's seal lock for owner until now+ttl.
	// Errors: ErrSealBusy while another owner holds a live lock; the store's.
	AcquireSealLock(ctx context.Context, groupID, owner string, now time.Time, ttl time.Duration) error
	// ReleaseSealLock gives owner's lock up (another's is left alone).
	ReleaseSealLock(ctx context.Context, groupID, owner string) error
	// Sealing lists up to limit sessions in sealing; SealingSince is when a session last
	// entered sealing (zero: not known).
	Sealing(ctx context.Context, limit int) ([]*Session, error)
	SealingSince(ctx context.Context, groupID string) (time.Time, error)
	// FailCorruptSeal stores FailSeal's change on a session whose row does not decode, leaving
	// the unreadable part as found. Errors: a lost race; the store's.
	FailCorruptSeal(ctx context.Context, sess *Session, ch Change) error
}

// LockSeal takes, or renews, the seal lock of session groupID for owner until now+ttl, so that
// two attempts never interleave their writes. Errors: ErrSealBusy while another attempt holds
// it (its lock expires within ttl if it died); the store's.
func (u *SessionJobs) LockSeal(ctx context.Context, groupID, owner string, now time.Time, ttl time.Duration) error {
	return u.Store.AcquireSealLock(ctx, groupID, owner, now, ttl)
}

// UnlockSeal gives owner's seal lock of session groupID up. Errors: the store's (the lock
// expires anyway).
func (u *SessionJobs) UnlockSeal(ctx context.Context, groupID, owner string) error {
	return u.Store.ReleaseSealLock(ctx, groupID, owner)
}

// ToSeal reads tenant's session groupID for its seal (or for recording the seal's failure).
// A row that does not decode is *CorruptError once its plain columns name tenant; the caller
// decides by its Session's state. Errors: ErrSessionNotFound; ErrWrongTenant; *CorruptError;
// the store's.
func (u *SessionJobs) ToSeal(ctx context.Context, tenant, groupID string) (*Session, []Slot, error) {
	s, slots, err := u.Store.Load(ctx, groupID)
	var c *CorruptError
	if errors.As(err, &c) {
		s = c.Session
	}
	if s == nil {
		return nil, nil, err
	}
	if s.TenantID != tenant {
		return nil, nil, ErrWrongTenant
	}
	return s, slots, err
}

// Trail is the session's audit trail, oldest first (the seal's evidence). Errors: the audit
// store's stored_audit_corrupt for a row that does not read back; the store's.
func (u *SessionJobs) Trail(ctx context.Context, groupID string) ([]AuditEvent, error) {
	return u.Store.Events(ctx, groupID)
}

// Signature is the stored signature of slot of session groupID. Errors: KindNotFound;
// ErrSignatureCorrupt; the store's.
func (u *SessionJobs) Signature(ctx context.Context, groupID string, slot int) (StoredSignature, error) {
	return u.Store.Signature(ctx, groupID, slot)
}

// CompleteSeal records the sealing session sess (as loaded before the seal's work) as complete
// with its three outputs' paths (Complete, by who at now), retrying once on a lost race on a
// fresh load. It answers the stored change; nil with no error when another attempt completed it
// first. Errors: ErrNotSealing (nothing else leaves sealing: cannot happen); the store's.
func (u *SessionJobs) CompleteSeal(ctx context.Context, sess *Session, slots []Slot, now time.Time, signedPath, certPath, evidencePath string, who Actor) (*Change, error) {
	return u.retry(ctx, sess, slots, func(s *Session, slots []Slot) (Change, error) {
		return Complete(s, slots, now, signedPath, certPath, evidencePath)
	}, who)
}

// FailSealing records seal.failed with reason on the sealing session sess (FailSeal, by who at
// now; the session stays sealing), retrying once on a lost race. It answers the stored change;
// nil with no error when there is nothing to record (the session is complete or no longer
// sealing). Errors: the store's.
func (u *SessionJobs) FailSealing(ctx context.Context, sess *Session, slots []Slot, now time.Time, reason string, who Actor) (*Change, error) {
	ch, err := u.retry(ctx, sess, slots, func(s *Session, _ []Slot) (Change, error) {
		return FailSeal(s, now, reason)
	}, who)
	if errors.Is(err, ErrNotSealing) {
		return nil, nil
	}
	return ch, err
}

// retry commits step's change of sess on the ETag it was loaded with, loading again and
// running step once more after a lost race. ErrAlreadyComplete from step is a nil change.
func (u *SessionJobs) retry(ctx context.Context, sess *Session, slots []Slot, step func(*Session, []Slot) (Change, error), who Actor) (*Change, error) {
	for try := 0; ; try++ {
		ch, err := step(sess, slots)
		if errors.Is(err, ErrAlreadyComplete) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		ch.By(who)
		err = u.Store.Commit(ctx, sess, slots, ch, Extras{})
		if err == nil {
			return &ch, nil
		}
		if !isConcurrent(err) || try > 0 {
			return nil, err
		}
		if sess, slots, err = u.Store.Load(ctx, sess.GroupID); err != nil {
			return nil, err
		}
	}
}

// FailCorrupt records seal.failed with reason on the sealing session of c, whose row does not
// decode, through the store's merge that leaves the unreadable part as found. It answers the
// stored change (its effects are the seal-failure notice). Errors: ErrAlreadyComplete,
// ErrNotSealing (the caller read the state: cannot happen); a lost race or the store's (the
// retry loads again).
func (u *SessionJobs) FailCorrupt(ctx context.Context, c *CorruptError, now time.Time, reason string, who Actor) (Change, error) {
	ch, err := FailSeal(c.Session, now, reason)
	if err != nil {
		return Change{}, err
	}
	ch.By(who)
	return ch, u.Store.FailCorruptSeal(ctx, c.Session, ch)
}

// PurgeError is the step of PurgeSignatures that failed ("deleting the signature of slot 2")
// with the store's error.
type PurgeError struct {
	Step string
	Err  error
}

func (e *PurgeError) Error() string { return e.Step + " failed: " + e.Err.Error() }
func (e *PurgeError) Unwrap() error { return e.Err }

// PurgeSignatures deletes the signature rows of the complete session sess and records
// pii.purged {what: "signature images", slots} by who at now. Nothing is recorded when no row
// is left. Errors: *PurgeError (what it could not delete is deleted when a later seal message
// for the session arrives).
func (u *SessionJobs) PurgeSignatures(ctx context.Context, sess *Session, slots []Slot, now time.Time, who Actor) error {
	idx, err := u.Store.SignatureSlots(ctx, sess.GroupID)
	if err != nil {
		return &PurgeError{Step: "listing signature rows for clean-up", Err: err}
	}
	if len(idx) == 0 {
		return nil
	}
	for _, i := range idx {
		if err := u.Store.DeleteSignature(ctx, sess.GroupID, i); err != nil {
			return &PurgeError{Step: fmt.Sprintf("deleting the signature of slot %d", i), Err: err}
		}
	}
	ev := Event{Kind: EvPIIPurged, Slot: -1, At: now, Data: map[string]any{"what": "signature images", "slots": idx}}
	if err := u.Note(ctx, sess.GroupID, slots, who, ev); err != nil {
		return &PurgeError{Step: "recording pii.purged", Err: err}
	}
	return nil
}

// StuckSeals are the seal messages that re-queue sessions sealing for longer than stuckAfter at
// now with no recorded seal failure (a lost or dropped seal message, or an attempt that died
// holding the lock); sessions with a seal.failed wait for an admin re-queue. At most limit
// sealing sessions are looked at. Each message's Attempt counts the stuckAfter periods since
// the session went to sealing (1 for the first), so successive re-queues are told apart in logs
// without a stored counter. Errors: the store's.
func (u *SessionJobs) StuckSeals(ctx context.Context, now time.Time, limit int, stuckAfter time.Duration) ([]SealMessage, error) {
	list, err := u.Store.Sealing(ctx, limit)
	if err != nil {
		return nil, err
	}
	var out []SealMessage
	for _, s := range list {
		if s.SealError != "" {
			continue
		}
		since, err := u.Store.SealingSince(ctx, s.GroupID)
		if err != nil {
			return nil, err
		}
		if !since.IsZero() && now.Sub(since) < stuckAfter {
			continue
		}
		out = append(out, SealMessage{GroupID: s.GroupID, TenantID: s.TenantID, Attempt: stuckAttempt(now, since, stuckAfter)})
	}
	return out, nil
}

// stuckAttempt numbers a re-queue by the stuck periods since the session went to sealing.
func stuckAttempt(now, since time.Time, stuck time.Duration) int {
	if since.IsZero() || stuck <= 0 {
		return 1
	}
	return max(1, int(now.Sub(since)/stuck))
}
