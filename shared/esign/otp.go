package esign

import (
	"time"

	"github.com/esign-svc/esign/shared/apperr"
)

// OTP limits (spec "Limits" of the second document; the same rules for signers).
const (
	OTPTTL          = 10 * time.Minute
	OTPSendInterval = 60 * time.Second
	OTPMaxAttempts  = 5 // wrong tries before a code is locked
	OTPMaxLocks     = 3 // locked codes before the slot's OTP is blocked until a resend-invite
)

// Audit event kinds of the OTP and cross-device flows.
const (
	EvSlotOTPSent       = "slot.otp_sent"
	EvSlotOTPVerified   = "slot.otp_verified"
	EvSlotOTPFailed     = "slot.otp_failed"
	EvSlotOTPLocked     = "slot.otp_locked"
	EvSlotOTPBlocked    = "slot.otp_blocked"
	EvSlotOTPSendFailed = "slot.otp_send_failed"
)

// OTPState is a slot's one-time-passcode record. The code itself is never stored: only its keyed
// hash, and only until it is used or replaced.
type OTPState struct {
	Channel     OTPChannel // channel of the current code (email or sms)
	Destination string     // masked destination of the current code, for evidence
	CodeHash    string
	SentAt      time.Time
	ExpiresAt   time.Time
	Attempts    int // wrong tries on the current code
	Locks       int // codes locked since the last resend-invite
	Blocked     bool
	VerifiedAt  time.Time
	VerifiedGen int // device generation the verification is for
}

// EffectiveOTPChannel is the slot's OTP channel: its configured one, or e-mail on a device that
// took the session over by cross-device transfer when the slot had none (the spec's full OTP
// challenge on the new device).
func (sl *Slot) EffectiveOTPChannel() OTPChannel {
	if sl.RequiresOTPConfigured() {
		return sl.OTPChannel
	}
	if sl.Generation > 0 {
		return OTPEmail
	}
	return OTPNone
}

// RequiresOTPConfigured reports whether the create request asked for OTP on this slot.
func (sl *Slot) RequiresOTPConfigured() bool { return sl.OTPChannel != "" && sl.OTPChannel != OTPNone }

// OTPVerified reports whether the slot's current device generation has passed OTP.
func (sl *Slot) OTPVerified() bool {
	return !sl.OTP.VerifiedAt.IsZero() && sl.OTP.VerifiedGen == sl.Generation
}

// NeedsOTP reports whether the document and signing are still closed to this slot.
func (sl *Slot) NeedsOTP() bool { return sl.EffectiveOTPChannel() != OTPNone && !sl.OTPVerified() }

// ErrOTPRequired is the 403 of the document proxy, viewed and the callback before OTP passed.
var ErrOTPRequired = &apperr.Error{Kind: apperr.KindForbidden, Code: "otp_required", Detail: "the signer has not passed the OTP challenge"}

// SendOTP records a new code for slot i on the chosen channel (for signer-choice the portal's
// pick, email or sms; sms needs a phone number), replacing any earlier one. hasPhone says whether
// the slot has a phone number. The caller generates the code, stores only codeHash through this
// change, and delivers the code after persisting it.
func SendOTP(s *Session, slots []Slot, i int, now time.Time, pick OTPChannel, hasPhone bool, codeHash, maskedDest string) (Change, error) {
	var c Change
	sl, err := openSlot(s, slots, i, now)
	if err != nil {
		return c, err
	}
	channel, err := otpChannel(sl, pick, hasPhone)
	if err != nil {
		return c, err
	}
	switch {
	case sl.State == SlotPending:
		return c, ErrSlotWrongState
	case sl.OTPVerified():
		return c, apperr.New(apperr.KindInvalid, "otp_already_verified", "this signer has already passed the OTP challenge")
	case sl.OTP.Blocked:
		return c, otpBlocked()
	case !sl.OTP.SentAt.IsZero() && now.Sub(sl.OTP.SentAt) < OTPSendInterval:
		wait := OTPSendInterval - now.Sub(sl.OTP.SentAt)
		return c, &apperr.Error{Kind: apperr.KindRateLimited, Code: "otp_rate_limited",
			Detail: "one code per 60 seconds; try again later", RetryAfter: wait}
	}
	sl.OTP.Channel, sl.OTP.Destination, sl.OTP.CodeHash = channel, maskedDest, codeHash
	sl.OTP.SentAt, sl.OTP.ExpiresAt, sl.OTP.Attempts = now, now.Add(OTPTTL), 0
	c.touch(i)
	c.event(EvSlotOTPSent, i, now, map[string]any{"channel": string(channel), "destination": maskedDest,
		"expiresAt": sl.OTP.ExpiresAt.UTC().Format(time.RFC3339Nano), "generation": sl.Generation})
	return c, nil
}

func otpChannel(sl *Slot, pick OTPChannel, hasPhone bool) (OTPChannel, error) {
	want := sl.EffectiveOTPChannel()
	switch want {
	case OTPNone:
		return "", apperr.New(apperr.KindInvalid, "otp_not_required", "this signer's slot does not use OTP")
	case OTPSignerChoice:
		switch pick {
		case OTPEmail:
			return OTPEmail, nil
		case OTPSMS:
			if !hasPhone {
				return "", apperr.Invalid("invalid_request", apperr.Field("channel", "no phone number is set for this signer"))
			}
			return OTPSMS, nil
		}
		return "", apperr.Invalid("invalid_request", apperr.Field("channel", "choose email or sms"))
	}
	if pick != "" && pick != want {
		return "", apperr.Invalid("invalid_request", apperr.Field("channel", "this signer's codes go by "+string(want)))
	}
	return want, nil
}

func otpBlocked() error {
	return apperr.New(apperr.KindForbidden, "otp_blocked",
		"too many wrong codes: ask the sender of the document to send the invitation again")
}

// UndoOTPSend clears the send time of a code whose delivery failed, so the signer may ask again
// at once; the code stays unusable (its hash is removed).
func UndoOTPSend(s *Session, slots []Slot, i int, now time.Time) Change {
	var c Change
	sl := &slots[i]
	sl.OTP.CodeHash, sl.OTP.SentAt, sl.OTP.ExpiresAt = "", time.Time{}, time.Time{}
	c.touch(i)
	c.event(EvSlotOTPSendFailed, i, now, map[string]any{"channel": string(sl.OTP.Channel)})
	return c
}

// OTPOutcome is what a verification attempt came to.
type OTPOutcome int

const (
	OTPPassed     OTPOutcome = iota
	OTPWrong                 // wrong code; attempts left
	OTPLockedNow             // wrong code and this code is now locked
	OTPBlockedNow            // wrong code, code locked, and the slot is now blocked
	OTPExpired               // no live code
	OTPLocked                // the code was already locked
)

// Err is the 4xx a failed outcome is answered with (nil for OTPPassed).
func (o OTPOutcome) Err(attemptsLeft int) error {
	switch o {
	case OTPWrong:
		return &apperr.Error{Kind: apperr.KindInvalid, Code: "otp_invalid", Detail: "the code is not right",
			Extra: map[string]any{"attemptsLeft": attemptsLeft}}
	case OTPLockedNow, OTPLocked:
		return apperr.New(apperr.KindInvalid, "otp_locked", "too many wrong tries: this code is locked; ask for a new one")
	case OTPBlockedNow:
		return otpBlocked()
	case OTPExpired:
		return apperr.New(apperr.KindInvalid, "otp_expired", "no valid code: the code expired or none was sent; ask for a new one")
	}
	return nil
}

// VerifyOTP checks a code for slot i: matches tells whether the submitted code's keyed hash equals
// the stored one (the caller compares in constant time). Every outcome, pass or failure, is a
// change to persist (attempt counts, locks and blocks must survive); the outcome says how to
// answer.
func VerifyOTP(s *Session, slots []Slot, i int, now time.Time, matches func(storedHash string) bool) (Change, OTPOutcome, error) {
	var c Change
	sl, err := openSlot(s, slots, i, now)
	if err != nil {
		return c, 0, err
	}
	switch {
	case sl.EffectiveOTPChannel() == OTPNone:
		return c, 0, apperr.New(apperr.KindInvalid, "otp_not_required", "this signer's slot does not use OTP")
	case sl.OTPVerified():
		return c, 0, apperr.New(apperr.KindInvalid, "otp_already_verified", "this signer has already passed the OTP challenge")
	case sl.OTP.Blocked:
		return c, 0, otpBlocked()
	case sl.OTP.CodeHash == "" || !now.Before(sl.OTP.ExpiresAt):
		c.touch(i)
		c.event(EvSlotOTPFailed, i, now, map[string]any{"reason": "expired", "channel": string(sl.OTP.Channel)})
		return c, OTPExpired, nil
	case sl.OTP.Attempts >= OTPMaxAttempts:
		return c, OTPLocked, nil
	}
	c.touch(i)
	if matches(sl.OTP.CodeHash) {
		sl.OTP.CodeHash, sl.OTP.VerifiedAt, sl.OTP.VerifiedGen = "", now, sl.Generation
		if sl.State == SlotActivated {
			sl.enter(SlotOTPVerified, now)
		} else if sl.Timeline != nil {
			if _, seen := sl.Timeline[SlotOTPVerified]; !seen {
				sl.Timeline[SlotOTPVerified] = now
			}
		}
		c.event(EvSlotOTPVerified, i, now, map[string]any{"channel": string(sl.OTP.Channel), "destination": sl.OTP.Destination,
			"sentAt": sl.OTP.SentAt.UTC().Format(time.RFC3339Nano), "generation": sl.Generation})
		return c, OTPPassed, nil
	}
	sl.OTP.Attempts++
	c.event(EvSlotOTPFailed, i, now, map[string]any{"reason": "wrong_code", "attempt": sl.OTP.Attempts, "channel": string(sl.OTP.Channel)})
	if sl.OTP.Attempts < OTPMaxAttempts {
		return c, OTPWrong, nil
	}
	sl.OTP.Locks++
	sl.OTP.CodeHash = ""
	c.event(EvSlotOTPLocked, i, now, map[string]any{"locks": sl.OTP.Locks})
	if sl.OTP.Locks < OTPMaxLocks {
		return c, OTPLockedNow, nil
	}
	sl.OTP.Blocked = true
	c.event(EvSlotOTPBlocked, i, now, map[string]any{"locks": sl.OTP.Locks})
	return c, OTPBlockedNow, nil
}

// resetOTPBlock is what a resend-invite does to the slot's OTP record: the block and lock count
// are lifted, the current code is dropped.
func resetOTPBlock(sl *Slot) {
	sl.OTP.Blocked, sl.OTP.Locks, sl.OTP.Attempts, sl.OTP.CodeHash = false, 0, 0, ""
}
