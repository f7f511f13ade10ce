package esign

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/tokens"
)

// Errors of a signer's submission (the signed callback) besides the state machine's.
var (
	ErrWrongSlot = &apperr.Error{Kind: apperr.KindForbidden, Code: "token_wrong_slot",
		Detail: "the access token does not belong to this signer's slot"}
	ErrSecondary = &apperr.Error{Kind: apperr.KindConflict, Code: CodeDeviceSecondary,
		Detail: "the signing session moved to another device; this one can only view"}
	ErrConsentMismatch = &apperr.Error{Kind: apperr.KindConflict, Code: "consent_mismatch",
		Detail: "the consents do not match what the signer accepted in the portal"}
	ErrAlreadySigned = &apperr.Error{Kind: apperr.KindConflict, Code: "slot_already_signed",
		Detail: "this slot is already signed"}
)

// Submission is what a signer submits through the portal's signed callback, checked for form
// (its HMAC verified, its access token verified into Claims).
type Submission struct {
	Claims        tokens.PortalAccess
	SessionID     string // the body's sessionId: must be the slot Claims names
	CallbackID    string
	SignerName    string
	IP, UserAgent string
	Fields        []CompletedField
	AcceptedAt    map[string]time.Time // consent id -> acceptance time the portal reports
	PNG           []byte
	Width, Height int
}

// Submit is the signed callback's transition: on the session the access token names, it checks
// the body's slot, the session gate, the device, the fields against the manifest and the
// consents against what the slot recorded, then signs the slot (Sign) and stores the change with
// the signature and the callback id in one transaction, and queues the change's effects (the
// seal message when the last required slot signed). A submission for a slot already signed
// commits only its callback id, so a replay (401 callback_replayed) is told apart from a second
// submission (409 slot_already_signed). It answers the stored session and slots. Errors:
// ErrSessionNotFound; 403 token_wrong_slot; 409 device_secondary, consent_mismatch,
// slot_already_signed, Sign's; 400 invalid_fields naming each field; 410 ended; 413
// signature_too_large; the store's.
func (u *Sessions) Submit(ctx context.Context, in Submission) (*Session, []Slot, error) {
	fieldsJSON, err := json.Marshal(in.Fields)
	if err != nil {
		return nil, nil, apperr.Wrap(err, apperr.KindInternal, "encode_failed", "could not encode the fields")
	}
	now := u.now()
	var already bool
	s, slots, ch, err := update(ctx, u.Store, in.Claims.GroupID, func(s *Session, slots []Slot) (Change, Extras, error) {
		already = false
		if err := bodySlot(slots, in.Claims, in.SessionID); err != nil {
			return Change{}, Extras{}, err
		}
		sl := &slots[in.Claims.SlotIndex]
		if sl.State == SlotSigned {
			already = true
			return Change{}, Extras{CallbackID: in.CallbackID}, nil
		}
		return submit(s, slots, sl, in, fieldsJSON, now)
	})
	if err != nil {
		return nil, nil, err
	}
	if already {
		return nil, nil, ErrAlreadySigned
	}
	if err := u.Effects.Emit(ctx, s, slots, ch, false); err != nil {
		return nil, nil, err
	}
	return s, slots, nil
}

// bodySlot checks that the body's sessionId is the slot the access token names. Any other
// sessionId, whether another slot's, another session's or unknown, is 403 token_wrong_slot: the
// token answers which slot the caller may sign, and no index is read to say more.
func bodySlot(slots []Slot, claims tokens.PortalAccess, sessionID string) error {
	if claims.SlotIndex < 0 || claims.SlotIndex >= len(slots) ||
		subtle.ConstantTimeCompare([]byte(slots[claims.SlotIndex].SessionID), []byte(sessionID)) != 1 ||
		subtle.ConstantTimeCompare([]byte(claims.SessionID), []byte(sessionID)) != 1 {
		return ErrWrongSlot
	}
	return nil
}

// submit is the transaction's step: the session gate, the device, the fields against the
// manifest, the consents against what the slot recorded, then Sign with the signature and the
// callback id.
func submit(s *Session, slots []Slot, sl *Slot, in Submission, fieldsJSON []byte, now time.Time) (Change, Extras, error) {
	if err := CheckLive(s, now); err != nil {
		return Change{}, Extras{}, err
	}
	if in.Claims.SessionID != sl.SessionID || in.Claims.Generation > sl.Generation {
		return Change{}, Extras{}, ErrWrongSlot
	}
	if in.Claims.Generation < sl.Generation {
		return Change{}, Extras{}, ErrSecondary
	}
	if probs := CheckFields(s.Manifest, sl.Role, in.Fields); len(probs) > 0 {
		fe := make([]apperr.FieldError, len(probs))
		for i, pr := range probs {
			fe[i] = apperr.Field(pr.Field, pr.Message)
		}
		return Change{}, Extras{}, apperr.Invalid("invalid_fields", fe...)
	}
	if err := matchConsents(sl, in.AcceptedAt); err != nil {
		return Change{}, Extras{}, err
	}
	consentsJSON, err := json.Marshal(sl.Consents)
	if err != nil {
		return Change{}, Extras{}, apperr.Wrap(err, apperr.KindInternal, "encode_failed", "could not encode the consents")
	}
	ch, err := Sign(s, slots, sl.Index, now, SignInput{SignerName: in.SignerName, IP: in.IP, UserAgent: in.UserAgent,
		Meta: map[string]any{"callbackId": in.CallbackID, "fields": len(in.Fields), "consentVersion": ConsentVersion,
			"signatureBytes": len(in.PNG), "signatureWidth": in.Width, "signatureHeight": in.Height}})
	if err != nil {
		return ch, Extras{}, err
	}
	ch.By(Actor{Kind: "signer", ID: sl.SessionID, IP: in.IP, UserAgent: in.UserAgent})
	return ch, Extras{CallbackID: in.CallbackID, Signature: &SignatureRecord{Slot: sl.Index, PNG: in.PNG,
		Fields: string(fieldsJSON), Consents: string(consentsJSON)}}, nil
}

// matchConsents wants every reported acceptance to be one the slot recorded, at the same
// instant. A slot that lacks one is left to Sign (409 consent_required).
func matchConsents(sl *Slot, reported map[string]time.Time) error {
	for _, rec := range sl.Consents {
		if rec.Version != ConsentVersion {
			continue
		}
		at, ok := reported[rec.ID]
		if !ok {
			continue
		}
		want, err := time.Parse(time.RFC3339Nano, rec.AcceptedAt)
		if err != nil || !want.Equal(at) {
			return ErrConsentMismatch
		}
	}
	return nil
}
