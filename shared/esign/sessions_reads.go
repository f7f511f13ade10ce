package esign

import (
	"context"
	"strconv"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/pii"
	"github.com/esign-svc/esign/shared/tokens"
)

// SessionReadStore is what the session reads need of the store (sessionstore.Store).
type SessionReadStore interface {
	// Load reads a session with its slots. Errors: ErrSessionNotFound; the store's.
	Load(ctx context.Context, groupID string) (*Session, []Slot, error)
	// GroupByCorrelation is the tenant's latest session for a correlationId. Errors:
	// ErrSessionNotFound; the store's.
	GroupByCorrelation(ctx context.Context, tenantID, correlationID string) (string, error)
	// Timeline is the session's audit events, oldest first, with their kind, slot and time only.
	Timeline(ctx context.Context, groupID string) ([]Event, error)
}

// SessionReads is the signing session's read side (issue 23), next to Sessions: the reads a
// route answers from a stored session without changing it. Each loads the session once and
// checks who may see it (the tenant, or the holder of a portal access token) before answering.
type SessionReads struct {
	Store  SessionReadStore
	Cipher *pii.Cipher // decrypts a signer's e-mail for the owning tenant's status
	Now    func() time.Time
}

// SessionStatus is what the status routes answer of one of the tenant's sessions.
type SessionStatus struct {
	Session *Session
	Slots   []Slot
	// State is the state the caller sees: a live session past its expiry is expired even before
	// the expiry job has recorded it.
	State SessionState
	// Emails are the slots' decrypted e-mail addresses, by slot ("" once erased).
	Emails []string
	// Events are the session's audit timeline: kinds, slots and times only.
	Events []Event
}

// StatusByCorrelation is the status of tenant's latest session for correlationID. Errors:
// ErrSessionNotFound (none of the tenant's, another tenant's alike); Status's.
func (r *SessionReads) StatusByCorrelation(ctx context.Context, tenant, correlationID string) (SessionStatus, error) {
	groupID, err := r.Store.GroupByCorrelation(ctx, tenant, correlationID)
	if err != nil {
		return SessionStatus{}, err
	}
	return r.Status(ctx, tenant, groupID)
}

// Status is the status of one of tenant's sessions: the session and its slots with each
// signer's e-mail decrypted, the state shown and the audit timeline. Errors: ErrSessionNotFound
// for an unknown session and for another tenant's; a signer's e-mail that does not decrypt; the
// store's.
func (r *SessionReads) Status(ctx context.Context, tenant, groupID string) (SessionStatus, error) {
	s, slots, err := r.Store.Load(ctx, groupID)
	if err != nil {
		return SessionStatus{}, err
	}
	if s.TenantID != tenant {
		return SessionStatus{}, ErrSessionNotFound
	}
	events, err := r.Store.Timeline(ctx, groupID)
	if err != nil {
		return SessionStatus{}, err
	}
	st := SessionStatus{Session: s, Slots: slots, State: s.State, Emails: make([]string, len(slots)), Events: events}
	if s.State.Live() && s.Expired(r.Now()) {
		st.State = SessionExpired
	}
	for i := range slots {
		sl := &slots[i]
		if sl.EmailEnc == "" {
			continue
		}
		if st.Emails[i], err = r.Cipher.DecryptString(sl.EmailEnc, pii.AAD(s.GroupID, "slot", strconv.Itoa(sl.Index))); err != nil {
			return SessionStatus{}, err
		}
	}
	return st, nil
}

// SignerView is a session as the holder of a verified portal access token may see it.
type SignerView struct {
	Session *Session
	Slots   []Slot
	Slot    *Slot // the slot the token names
	// Secondary: the token is of an earlier device generation than the slot's (view only).
	Secondary bool
}

// Signer loads the session a verified portal access token names and checks, before anything
// else, that the session is live and the token is of the slot's current portal session
// (holder's checks, for a read). Errors: 401 token_invalid (ErrAccessNotCurrent) for a
// session that is gone or a token not current; 410 ended; 409 sealing or complete; the
// store's.
func (r *SessionReads) Signer(ctx context.Context, c tokens.PortalAccess) (SignerView, error) {
	s, slots, err := r.Store.Load(ctx, c.GroupID)
	if apperr.KindOf(err) == apperr.KindNotFound {
		return SignerView{}, ErrAccessNotCurrent
	}
	if err != nil {
		return SignerView{}, err
	}
	sl, err := holder(s, slots, c, false, func() time.Time { return r.Now().UTC() })
	if err != nil {
		return SignerView{}, err
	}
	return SignerView{Session: s, Slots: slots, Slot: sl, Secondary: c.Generation < sl.Generation}, nil
}
