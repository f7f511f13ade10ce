package esign

import (
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/otp"
)

// Audit event kinds of the OTP flow.
const (
	EvSlotOTPSent       = "slot.otp_sent"
	EvSlotOTPVerified   = "slot.otp_verified"
	EvSlotOTPFailed     = "slot.otp_failed"
	EvSlotOTPLocked     = "slot.otp_locked"
	EvSlotOTPBlocked    = "slot.otp_blocked"
	EvSlotOTPSendFailed = "slot.otp_send_failed"
)

// OTPState is a slot's one-time-passcode record (shared/otp: the code only as its keyed hash).
type OTPState = otp.State

// EffectiveOTPChannel is the slot's OTP channel: its configured one, or e-mail on a device that
// took the session over by cross-device transfer when the slot had none (the spec's full OTP
// challenge on the new device).
func (sl *Slot) EffectiveOTPChannel() OTPChannel {
	if sl.RequiresOTPConfigured() {
		return sl.OTPChannel
	}
	if sl.Transferred() {
		return OTPEmail
	}
	return OTPNone
}

// Transferred reports whether the slot's current device took the session over by a
// cross-device redeem (rather than through the invitation's link: the first, or a resend's).
func (sl *Slot) Transferred() bool { return sl.Generation > sl.LinkGeneration }

// RequiresOTPConfigured reports whether the create request asked for OTP on this slot.
func (sl *Slot) RequiresOTPConfigured() bool { return sl.OTPChannel != "" && sl.OTPChannel != OTPNone }

// OTPVerified reports whether the slot's current device generation has passed OTP.
func (sl *Slot) OTPVerified() bool { return sl.OTP.Verified(sl.Generation) }

// NeedsOTP reports whether the document and signing are still closed to this slot.
func (sl *Slot) NeedsOTP() bool { return sl.EffectiveOTPChannel() != OTPNone && !sl.OTPVerified() }

// ErrOTPRequired is the 403 of the document proxy, viewed and the callback before OTP passed.
var ErrOTPRequired = &apperr.Error{Kind: apperr.KindForbidden, Code: otp.CodeRequired, Detail: "the signer has not passed the OTP challenge"}

// SendOTP records a new code for slot i on the chosen channel (for signer-choice the portal's
// pick, email or sms; sms needs a phone number), replacing any earlier one. hasPhone says whether
// the slot has a phone number. The caller generates the code (otp.NewCode), stores only codeHash
// through this change, and delivers the code after persisting it.
func SendOTP(s *Session, slots []Slot, i int, now time.Time, pick OTPChannel, hasPhone bool, codeHash, maskedDest string, block time.Duration) (Change, error) {
	var c Change
	sl, err := openSlot(s, slots, i, now)
	if err != nil {
		return c, err
	}
	channel, err := otpChannel(sl, pick, hasPhone)
	if err != nil {
		return c, err
	}
	if sl.State == SlotPending {
		return c, ErrSlotWrongState
	}
	if err := sl.OTP.CheckSend(now, sl.Generation, block); err != nil {
		return c, err
	}
	sl.OTP.Record(now, string(channel), maskedDest, codeHash)
	c.Touch(i)
	c.Record(EvSlotOTPSent, i, now, map[string]any{"channel": string(channel), "destination": maskedDest,
		"expiresAt": sl.OTP.ExpiresAt.UTC().Format(time.RFC3339Nano), "generation": sl.Generation})
	return c, nil
}

// OTPChannelFor is the channel a send would use (for choosing the destination before SendOTP).
func (sl *Slot) OTPChannelFor(pick OTPChannel, hasPhone bool) (OTPChannel, error) {
	return otpChannel(sl, pick, hasPhone)
}

func otpChannel(sl *Slot, pick OTPChannel, hasPhone bool) (OTPChannel, error) {
	want := sl.EffectiveOTPChannel()
	switch want {
	case OTPNone:
		return "", apperr.New(apperr.KindInvalid, otp.CodeNotRequired, "this signer's slot does not use OTP")
	case OTPSignerChoice:
		switch pick {
		case OTPEmail:
			return OTPEmail, nil
		case OTPSMS:
			if !hasPhone {
				return "", apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field("channel", "no phone number is set for this signer"))
			}
			return OTPSMS, nil
		}
		return "", apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field("channel", "choose email or sms"))
	}
	if pick != "" && pick != want {
		return "", apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field("channel", "this signer's codes go by "+string(want)))
	}
	return want, nil
}

// UndoOTPSend forgets a code whose delivery failed, so the signer may ask again at once.
func UndoOTPSend(s *Session, slots []Slot, i int, now time.Time) Change {
	var c Change
	slots[i].OTP.UndoSend()
	c.Touch(i)
	c.Record(EvSlotOTPSendFailed, i, now, map[string]any{"channel": slots[i].OTP.Channel})
	return c
}

// VerifyOTP checks a code for slot i: matches tells whether the submitted code's keyed hash equals
// the stored one (the caller compares in constant time). Every outcome, pass or failure, is a
// change to persist (attempt counts, locks and blocks must survive); the outcome's Err says how
// to answer a failure.
func VerifyOTP(s *Session, slots []Slot, i int, now time.Time, matches func(storedHash string) bool, block time.Duration) (Change, otp.Outcome, error) {
	var c Change
	sl, err := openSlot(s, slots, i, now)
	if err != nil {
		return c, 0, err
	}
	if sl.EffectiveOTPChannel() == OTPNone {
		return c, 0, apperr.New(apperr.KindInvalid, otp.CodeNotRequired, "this signer's slot does not use OTP")
	}
	out, err := sl.OTP.Verify(now, sl.Generation, block, matches)
	if err != nil {
		return c, 0, err
	}
	c.Touch(i)
	switch out {
	case otp.Passed:
		if sl.State == SlotActivated {
			sl.enter(SlotOTPVerified, now)
		} else if _, seen := sl.Timeline[SlotOTPVerified]; !seen && sl.Timeline != nil {
			sl.Timeline[SlotOTPVerified] = now
		}
		c.Record(EvSlotOTPVerified, i, now, map[string]any{"channel": sl.OTP.Channel, "destination": sl.OTP.Destination,
			"sentAt": sl.OTP.SentAt.UTC().Format(time.RFC3339Nano), "generation": sl.Generation})
	case otp.Expired, otp.Locked:
		c.Record(EvSlotOTPFailed, i, now, map[string]any{"reason": out.String(), "channel": sl.OTP.Channel})
	default:
		c.Record(EvSlotOTPFailed, i, now, map[string]any{"reason": "wrong_code", "attempt": sl.OTP.Attempts, "channel": sl.OTP.Channel})
		if out == otp.LockedNow || out == otp.BlockedNow {
			c.Record(EvSlotOTPLocked, i, now, map[string]any{"locks": sl.OTP.Locks})
		}
		if out == otp.BlockedNow {
			c.Record(EvSlotOTPBlocked, i, now, map[string]any{"locks": sl.OTP.Locks})
		}
	}
	return c, out, nil
}

// resetOTPBlock is what a resend-invite does to the slot's OTP record.
func resetOTPBlock(sl *Slot) { sl.OTP.Reset() }
