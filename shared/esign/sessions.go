package esign

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/pii"
)

// SessionEffects carries out a stored change's effects as queue outputs (shared/effects:
// effects.SessionOutputs).
type SessionEffects interface {
	// Emit adds the outputs of ch's effects (invitations, notices, the seal message).
	Emit(ctx context.Context, s *Session, slots []Slot, ch Change, reminder bool) error
	// Seal adds the seal message of a re-queued seal.
	Seal(ctx context.Context, m SealMessage) error
}

// Sessions is the signing session's use-case service (issue 23): one method per transition a
// route makes on a stored session. Each loads the session once, checks the tenant (another
// tenant's session is ErrSessionNotFound, as an unknown one), runs the machine, stores the
// change with its audit events and extras in one transaction, carries out the effects and
// answers what the route encodes. Creating a session is Creator's.
type Sessions struct {
	Store    SessionStore
	Effects  SessionEffects
	Cipher   *pii.Cipher   // decrypts a signer's address for an OTP code
	OTPBlock time.Duration // how long three locked codes block a slot (0: otp.DefaultBlock)
	Now      func() time.Time
}

func (u *Sessions) now() time.Time { return u.Now().UTC() }

// own runs step on one of tenant's sessions (another tenant's is not found) and stores it.
func (u *Sessions) own(ctx context.Context, tenant, groupID string, step func(s *Session, slots []Slot) (Change, error)) (*Session, []Slot, Change, error) {
	return update(ctx, u.Store, groupID, func(s *Session, slots []Slot) (Change, Extras, error) {
		if s.TenantID != tenant {
			return Change{}, Extras{}, ErrSessionNotFound
		}
		ch, err := step(s, slots)
		return ch, Extras{}, err
	})
}

// End cancels (reason cancelled) or revokes (reason revoked) one of tenant's sessions on
// behalf of who, and queues the change's notices. Errors: ErrSessionNotFound; Cancel's (409 for
// a session that already ended); the store's.
func (u *Sessions) End(ctx context.Context, tenant, groupID string, reason CancelReason, who Actor) (*Session, error) {
	s, slots, ch, err := u.own(ctx, tenant, groupID, func(s *Session, _ []Slot) (Change, error) {
		ch, err := Cancel(s, u.now(), reason, who.ID)
		ch.By(who)
		return ch, err
	})
	if err != nil {
		return nil, err
	}
	return s, u.Effects.Emit(ctx, s, slots, ch, false)
}

// Resend gives every slot of tenant's session on correlationID that is activated, viewed or
// otp_verified (or only slot, when not nil) a fresh single-use link (esign.Reinvite) and queues
// the invitations as reminders. It answers the stored session and the slots it re-invited.
// Errors: ErrSessionNotFound; 410 for an ended session; 400 slotIndex naming no slot; 409
// nothing_to_resend, or Reinvite's for the one slot named; the store's.
func (u *Sessions) Resend(ctx context.Context, tenant, correlationID string, slot *int, who Actor) (*Session, []Slot, []int, error) {
	groupID, err := u.Store.GroupByCorrelation(ctx, tenant, correlationID)
	if err != nil {
		return nil, nil, nil, err
	}
	s, slots, ch, err := u.own(ctx, tenant, groupID, func(s *Session, slots []Slot) (Change, error) {
		now := u.now()
		if err := CheckLive(s, now); err != nil {
			return Change{}, err
		}
		var all Change
		for i := range slots {
			if slot != nil && *slot != i {
				continue
			}
			ch, err := Reinvite(s, slots, i, now)
			if err != nil {
				if slot != nil {
					return Change{}, err
				}
				continue // not eligible: skipped when resending to all
			}
			slots[i].LinkJTI, slots[i].LinkUsed = uuid.NewString(), false
			all.Slots = append(all.Slots, ch.Slots...)
			all.Events = append(all.Events, ch.Events...)
			all.Effects = append(all.Effects, ch.Effects...)
		}
		if slot != nil && (*slot < 0 || *slot >= len(slots)) {
			return Change{}, apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field("slotIndex", "no such slot"))
		}
		if len(all.Effects) == 0 {
			return all, apperr.New(apperr.KindConflict, "nothing_to_resend",
				"no slot is activated, viewed or otp_verified; pending slots still hold their unused link")
		}
		all.By(who)
		return all, nil
	})
	if err != nil {
		return nil, nil, nil, err
	}
	if err := u.Effects.Emit(ctx, s, slots, ch, true); err != nil {
		return nil, nil, nil, err
	}
	return s, slots, ch.Slots, nil
}

// RetrySeal re-queues the seal of one of tenant's sessions in sealing whose last seal failed or
// that is stuck (RequeueSeal): it records seal.requeued {attempt} and queues the seal message
// with that attempt. It answers the session and the attempt. Errors: ErrSessionNotFound; 409
// session_already_complete, session_not_sealing, seal_not_stuck; the store's.
func (u *Sessions) RetrySeal(ctx context.Context, tenant, groupID string, who Actor) (*Session, int, error) {
	var attempt int
	s, _, _, err := u.own(ctx, tenant, groupID, func(s *Session, _ []Slot) (Change, error) {
		since, previous := s.CreatedAt, 0
		if s.State == SessionSealing { // the store is read only when the answer can be yes
			var err error
			if since, err = u.Store.SealingSince(ctx, s.GroupID); err != nil {
				return Change{}, err
			}
			if previous, err = u.Store.CountEvents(ctx, s.GroupID, EvSealRequeued); err != nil {
				return Change{}, err
			}
		}
		ch, n, err := RequeueSeal(s, u.now(), since, previous)
		attempt = n
		ch.By(who)
		return ch, err
	})
	if err != nil {
		return nil, 0, err
	}
	return s, attempt, u.Effects.Seal(ctx, SealMessage{GroupID: s.GroupID, TenantID: s.TenantID, Attempt: attempt})
}

// EraseEmail erases slot idx's e-mail hash, encrypted e-mail and phone from one of tenant's
// sessions (EraseContact, recording pii.erased) and cuts the hash out of the session's audit
// rows: before the slot forgets it (so a failed scrub can be retried) and after (rows written
// meanwhile). Nothing changes when the slot may not be erased. It answers the session and how
// many audit rows were scrubbed. Errors: ErrSessionNotFound; EraseContact's; the store's.
func (u *Sessions) EraseEmail(ctx context.Context, tenant, groupID string, idx int, who Actor) (*Session, int, error) {
	cur, curSlots, err := u.Store.Load(ctx, groupID)
	if err != nil {
		return nil, 0, err
	}
	if cur.TenantID != tenant {
		return nil, 0, ErrSessionNotFound
	}
	var hash string
	if idx < len(curSlots) {
		hash = curSlots[idx].EmailHash
	}
	if _, err := EraseContact(cur, curSlots, idx, u.now()); err != nil { // on the copy first
		return nil, 0, err
	}
	before, err := u.Store.ScrubEmailHash(ctx, cur.GroupID, hash)
	if err != nil {
		return nil, 0, err
	}
	s, _, _, err := u.own(ctx, tenant, cur.GroupID, func(s *Session, slots []Slot) (Change, error) {
		ch, err := EraseContact(s, slots, idx, u.now())
		ch.By(who)
		return ch, err
	})
	if err != nil {
		return nil, 0, err
	}
	after, err := u.Store.ScrubEmailHash(ctx, s.GroupID, hash)
	if err != nil {
		return nil, 0, err
	}
	return s, before + after, nil
}

// Ended is the 410 of the session when it has ended (expired or cancelled), else nil: an
// unknown session, or one that could not be read, is nil too (the caller answers its own
// error). The routes that take a token past its own expiry use it to answer the session's end.
func (u *Sessions) Ended(ctx context.Context, groupID string) error {
	s, _, err := u.Store.Load(ctx, groupID)
	if err != nil {
		return nil
	}
	if err := CheckLive(s, u.now()); apperr.KindOf(err) == apperr.KindGone {
		return err
	}
	return nil
}
