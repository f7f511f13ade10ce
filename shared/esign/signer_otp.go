package esign

import (
	"context"
	"strconv"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/logging"
	"github.com/esign-svc/esign/shared/otp"
	"github.com/esign-svc/esign/shared/otp/otpflow"
	"github.com/esign-svc/esign/shared/pii"
	"github.com/esign-svc/esign/shared/tokens"
)

// ErrNoDestination means the slot's chosen OTP channel has no address on record.
var ErrNoDestination = &apperr.Error{Kind: apperr.KindConflict, Code: "otp_destination_missing",
	Detail: "no address is on record for this signer's chosen channel"}

// OTPSent is a stored OTP send: the address the code goes to (for the sender only: never
// logged or stored in clear), the channel, and the stored session and slot.
type OTPSent struct {
	To      string
	Channel OTPChannel
	Session *Session
	Slot    *Slot
}

// RecordOTP stores a new code's keyed hash on the slot c names, with the masked destination,
// before the code is sent (otpflow.Flow.Send's record): the current device only; the channel is
// the slot's, or pick under signer-choice. Errors: holder's; 409 otp_destination_missing;
// SendOTP's (400 otp_not_required, otp_already_verified, otp_blocked; 429 otp_rate_limited;
// 409 slot_wrong_state); the store's (a session that is gone: 401 token_invalid, tokenChange).
func (u *Sessions) RecordOTP(ctx context.Context, c tokens.PortalAccess, d Device, pick OTPChannel, code otpflow.Code) (OTPSent, error) {
	var out OTPSent
	s, slots, _, err := u.tokenChange(ctx, c, func(s *Session, slots []Slot) (Change, Extras, error) {
		sl, err := holder(s, slots, c, true, u.now)
		if err != nil {
			return Change{}, Extras{}, err
		}
		hasPhone := sl.PhoneEnc != ""
		if out.Channel, err = sl.OTPChannelFor(pick, hasPhone); err != nil {
			return Change{}, Extras{}, err
		}
		var masked string
		if out.To, masked, err = u.destination(s.GroupID, sl, out.Channel); err != nil {
			return Change{}, Extras{}, err
		}
		hash := code.Hash(s.GroupID, strconv.Itoa(sl.Index))
		ch, err := SendOTP(s, slots, sl.Index, u.now(), pick, hasPhone, hash, masked, u.OTPBlock)
		ch.By(d.actor(sl))
		return ch, Extras{}, err
	})
	if err != nil {
		return OTPSent{}, err
	}
	out.Session, out.Slot = s, &slots[c.SlotIndex]
	return out, nil
}

// UndoOTP withdraws the recorded send of slot c.SlotIndex after the code could not be sent
// (otpflow.Flow.Send's undo). Errors: the store's.
func (u *Sessions) UndoOTP(ctx context.Context, c tokens.PortalAccess, d Device) error {
	_, _, _, err := update(ctx, u.Store, c.GroupID, func(s *Session, slots []Slot) (Change, Extras, error) {
		ch := UndoOTPSend(s, slots, c.SlotIndex, u.now())
		ch.By(d.actor(&slots[c.SlotIndex]))
		return ch, Extras{}, nil
	})
	return err
}

// VerifyOTP compares code with the slot's stored hash (in constant time, otpflow.Code.Matches)
// and persists the outcome (pass, wrong try, lock, block) with its audit event: the current
// device only. It answers the outcome, the slot's OTP state after it and the stored slot.
// Errors: holder's; VerifyOTP's; the store's (a session that is gone: 401 token_invalid,
// tokenChange).
func (u *Sessions) VerifyOTP(ctx context.Context, c tokens.PortalAccess, d Device, code otpflow.Code) (otp.Outcome, *Slot, error) {
	var out otp.Outcome
	_, slots, _, err := u.tokenChange(ctx, c, func(s *Session, slots []Slot) (Change, Extras, error) {
		sl, err := holder(s, slots, c, true, u.now)
		if err != nil {
			return Change{}, Extras{}, err
		}
		ch, o, err := VerifyOTP(s, slots, sl.Index, u.now(), code.Matches(s.GroupID, strconv.Itoa(sl.Index)), u.OTPBlock)
		out = o
		ch.By(d.actor(sl))
		return ch, Extras{}, err
	})
	if err != nil {
		return 0, nil, err
	}
	return out, &slots[c.SlotIndex], nil
}

// destination decrypts the address of the channel (AAD bound to the slot row) and masks it.
func (u *Sessions) destination(groupID string, sl *Slot, ch OTPChannel) (to, masked string, err error) {
	idx := strconv.Itoa(sl.Index)
	enc, aad, mask := sl.EmailEnc, pii.AAD(groupID, "slot", idx), pii.MaskEmail
	if ch == OTPSMS {
		enc, aad, mask = sl.PhoneEnc, pii.AAD(groupID, "phone", idx), pii.MaskPhone
	}
	if enc == "" {
		return "", "", ErrNoDestination
	}
	to, err = u.Cipher.DecryptString(enc, aad)
	if err != nil {
		return "", "", err
	}
	return to, mask(to), nil
}

// CreateTransfer makes a one-time cross-device code for the slot c names (the current device
// only): a 256-bit random token whose SHA-256 alone is stored, its index row first (should the
// transaction fail, it points at nothing and a redeem reads it as unknown, and it is removed),
// then the token in the session's partition with slot.transfer_created. It answers the token
// (for the link, never stored or logged) and the stored transfer. Errors: holder's;
// CreateTransfer's (409 slot_not_open, slot_wrong_state); the store's (a session that is gone:
// 401 token_invalid). holder's checks run on a read first too, so that a refused token writes
// no index row.
func (u *Sessions) CreateTransfer(ctx context.Context, c tokens.PortalAccess, d Device) (string, Transfer, error) {
	s, slots, err := u.Store.Load(ctx, c.GroupID)
	if apperr.KindOf(err) == apperr.KindNotFound {
		return "", Transfer{}, ErrAccessNotCurrent
	}
	if err != nil {
		return "", Transfer{}, err
	}
	if _, err := holder(s, slots, c, true, u.now); err != nil {
		return "", Transfer{}, err
	}
	token, hash, err := tokens.NewOpaque()
	if err != nil {
		return "", Transfer{}, apperr.Wrap(err, apperr.KindInternal, tokens.CodeIssueFailed, "could not make a transfer code")
	}
	if err := u.Store.IndexTransfer(ctx, c.GroupID, Transfer{Hash: hash, ExpiresAt: u.now().Add(TransferTTL)}); err != nil {
		return "", Transfer{}, err
	}
	var tr Transfer
	_, _, _, err = u.tokenChange(ctx, c, func(s *Session, slots []Slot) (Change, Extras, error) {
		sl, err := holder(s, slots, c, true, u.now)
		if err != nil {
			return Change{}, Extras{}, err
		}
		ch, t, err := CreateTransfer(s, slots, sl.Index, u.now(), hash)
		if err != nil {
			return ch, Extras{}, err
		}
		tr = t
		ch.By(d.actor(sl))
		return ch, Extras{NewTransfer: &t}, nil
	})
	if err != nil {
		_ = u.Store.ForgetTransfer(ctx, hash)
		return "", Transfer{}, err
	}
	return token, tr, nil
}

// RedeemTransfer consumes a cross-device token for the new device d: in one transaction with the
// session's ETag it deletes the stored token on its ETag (single use) and runs RedeemTransfer
// (the slot's next device generation, slot.transfer_redeemed with d's IP and user agent); the
// index row is then removed best effort (logged when not). It answers the stored session and
// the slot. Errors: 401 transfer_token_invalid for an unknown, used, expired or superseded token
// alike, or one whose session was erased; RedeemTransfer's; the store's.
func (u *Sessions) RedeemTransfer(ctx context.Context, token string, d Device) (*Session, *Slot, error) {
	if !tokens.OpaqueValid(token) {
		return nil, nil, ErrTransferInvalid
	}
	hash := tokens.OpaqueHash(token)
	gid, err := u.Store.TransferGroup(ctx, hash)
	if err != nil {
		return nil, nil, err
	}
	s, slots, ch, err := update(ctx, u.Store, gid, func(s *Session, slots []Slot) (Change, Extras, error) {
		t, err := u.Store.Transfer(ctx, gid, hash)
		if err != nil {
			return Change{}, Extras{}, err
		}
		ch, err := RedeemTransfer(s, slots, t, u.now(), map[string]any{"ip": d.IP, "userAgent": d.UserAgent})
		if err != nil {
			return ch, Extras{}, err
		}
		ch.By(Actor{Kind: "signer", ID: slots[t.Slot].SessionID, IP: d.IP, UserAgent: d.UserAgent})
		return ch, Extras{Redeemed: &t}, nil
	})
	if apperr.KindOf(err) == apperr.KindNotFound {
		return nil, nil, ErrTransferInvalid // the session was erased
	}
	if err != nil {
		return nil, nil, err
	}
	if ferr := u.Store.ForgetTransfer(ctx, hash); ferr != nil {
		logging.From(ctx).Warn().Err(ferr).Str("groupId", gid).Msg("transfer index row not removed")
	}
	return s, &slots[ch.Events[0].Slot], nil
}
