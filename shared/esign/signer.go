package esign

import (
	"context"
	"crypto/subtle"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/tokens"
)

// Errors of the signer's portal transitions besides the state machine's and the tokens'.
var (
	ErrAccessNotCurrent = &apperr.Error{Kind: apperr.KindUnauthenticated, Code: tokens.CodeInvalid, Detail: "the access token does not belong to this signer's current portal session"}
	ErrLinkUsed         = &apperr.Error{Kind: apperr.KindUnauthenticated, Code: "link_used", Detail: "this signing link was already used; ask the sender for a new one"}
	ErrLinkReplaced     = &apperr.Error{Kind: apperr.KindUnauthenticated, Code: "link_replaced", Detail: "a newer signing link replaced this one; use the latest invitation"}
)

// Device is the signer's browser as the request shows it: the audit actor's IP and user agent.
type Device struct{ IP, UserAgent string }

func (d Device) actor(sl *Slot) Actor {
	return Actor{Kind: "signer", ID: sl.SessionID, IP: d.IP, UserAgent: d.UserAgent}
}

// holder is the slot a verified portal access token acts on, checked on the freshly loaded
// session: the session live (410/409), then TokenSlot's checks.
func holder(s *Session, slots []Slot, c tokens.PortalAccess, write bool, now timeNow) (*Slot, error) {
	if err := CheckLive(s, now()); err != nil {
		return nil, err
	}
	sl, err := TokenSlot(slots, c)
	if err == nil && write {
		err = CheckDevice(c, sl)
	}
	return sl, err
}

// TokenSlot is the slot a verified portal access token names, when the token is of the slot's
// current portal session and not of a newer generation. Errors: 401 token_invalid
// (ErrAccessNotCurrent).
func TokenSlot(slots []Slot, c tokens.PortalAccess) (*Slot, error) {
	i := c.SlotIndex
	if i < 0 || i >= len(slots) {
		return nil, ErrAccessNotCurrent
	}
	sl := &slots[i]
	if sl.SessionID != c.SessionID || c.Generation > sl.Generation {
		return nil, ErrAccessNotCurrent
	}
	return sl, nil
}

// CheckDevice refuses a view-only token (an earlier device generation's) for an action that
// changes the slot: 409 device_secondary.
func CheckDevice(c tokens.PortalAccess, sl *Slot) error {
	if c.Generation < sl.Generation {
		return ErrSecondary
	}
	return nil
}

type timeNow = func() time.Time

// Activate consumes a portal link's single-use slot token: the session goes from pending to
// in_progress and the link is marked used. It answers the stored session and the slot. Errors:
// 401 link_replaced for a link no longer the slot's (or whose session is gone), link_used; 410
// ended; 409 sealing or complete, a closed or (sequential) not yet invited slot; the store's.
func (u *Sessions) Activate(ctx context.Context, c tokens.Slot, d Device) (*Session, *Slot, error) {
	s, slots, _, err := update(ctx, u.Store, c.GroupID, func(s *Session, slots []Slot) (Change, Extras, error) {
		now := u.now()
		if err := CheckLive(s, now); err != nil {
			return Change{}, Extras{}, err
		}
		if c.SlotIndex >= len(slots) {
			return Change{}, Extras{}, ErrLinkReplaced
		}
		sl := &slots[c.SlotIndex]
		if subtle.ConstantTimeCompare([]byte(c.ID), []byte(sl.LinkJTI)) != 1 {
			return Change{}, Extras{}, ErrLinkReplaced
		}
		if sl.LinkUsed {
			return Change{}, Extras{}, ErrLinkUsed
		}
		ch, err := Activate(s, slots, sl.Index, now, map[string]any{"generation": sl.Generation})
		if err != nil {
			return ch, Extras{}, err
		}
		sl.LinkUsed = true
		ch.By(d.actor(sl))
		return ch, Extras{}, nil
	})
	if apperr.KindOf(err) == apperr.KindNotFound {
		return nil, nil, ErrLinkReplaced // the token was signed by us, but its session is gone (erased)
	}
	if err != nil {
		return nil, nil, err
	}
	return s, &slots[c.SlotIndex], nil
}

// tokenChange is Store.Update of the session a portal access token names. A session that is
// gone (none to load) is 401 token_invalid (ErrAccessNotCurrent), as SessionReads.Signer
// answers it, so a route makes its one call with no read before it.
func (u *Sessions) tokenChange(ctx context.Context, c tokens.PortalAccess, step Step) (*Session, []Slot, Change, error) {
	loaded := false
	s, slots, ch, err := update(ctx, u.Store, c.GroupID, func(s *Session, slots []Slot) (Change, Extras, error) {
		loaded = true
		return step(s, slots)
	})
	if !loaded && apperr.KindOf(err) == apperr.KindNotFound {
		return nil, nil, Change{}, ErrAccessNotCurrent
	}
	return s, slots, ch, err
}

// act runs t on the slot c names (holder's checks, write for a change of the current device
// only) and stores it (tokenChange); emit carries out the change's effects.
func (u *Sessions) act(ctx context.Context, c tokens.PortalAccess, d Device, write, emit bool,
	t func(s *Session, slots []Slot, i int) (Change, error)) (*Session, *Slot, error) {
	s, slots, ch, err := u.tokenChange(ctx, c, func(s *Session, slots []Slot) (Change, Extras, error) {
		sl, err := holder(s, slots, c, write, u.now)
		if err != nil {
			return Change{}, Extras{}, err
		}
		ch, err := t(s, slots, sl.Index)
		ch.By(d.actor(sl))
		return ch, Extras{}, err
	})
	if err != nil {
		return nil, nil, err
	}
	if emit {
		if err := u.Effects.Emit(ctx, s, slots, ch, false); err != nil {
			return nil, nil, err
		}
	}
	return s, &slots[c.SlotIndex], nil
}

// Viewed records that the signer opened the document (MarkViewed); a view-only token may.
// Errors: holder's (but device_secondary); MarkViewed's; the store's.
func (u *Sessions) Viewed(ctx context.Context, c tokens.PortalAccess, d Device) (*Session, *Slot, error) {
	return u.act(ctx, c, d, false, false, func(s *Session, slots []Slot, i int) (Change, error) {
		return MarkViewed(s, slots, i, u.now(), nil)
	})
}

// Consent records the acceptance of the named statements of the current wording. Errors:
// holder's; Consent's (409 not_viewed, 400 an unknown statement); the store's.
func (u *Sessions) Consent(ctx context.Context, c tokens.PortalAccess, d Device, statements []string) (*Session, *Slot, error) {
	return u.act(ctx, c, d, true, false, func(s *Session, slots []Slot, i int) (Change, error) {
		return Consent(s, slots, i, u.now(), statements)
	})
}

// Decline records the signer's decline with its reason (Decline) and queues its notices (and
// the seal when it was the last open step). Errors: holder's; Decline's; the store's.
func (u *Sessions) Decline(ctx context.Context, c tokens.PortalAccess, d Device, reason string) (*Session, *Slot, error) {
	return u.act(ctx, c, d, true, true, func(s *Session, slots []Slot, i int) (Change, error) {
		return Decline(s, slots, i, u.now(), reason, nil)
	})
}
