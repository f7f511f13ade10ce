package delivery

import (
	"time"

	"github.com/esign-svc/esign/shared/otp"
)

// OTPChannel is the only channel of delivery codes: the recipient's e-mail address.
const OTPChannel = "email"

// SendOTP records a new code (only its keyed hash) for the recipient, replacing any earlier
// one. The caller generates the code (otp.NewCode), persists this change, and then sends the
// code. Errors: 410; 400 otp_not_required when the session does not use OTP;
// 400 otp_already_verified; 400 otp_blocked (blockedUntil); 429 otp_rate_limited with RetryAfter.
func SendOTP(s *Session, now time.Time, codeHash, maskedDest string, block time.Duration) (Change, error) {
	var c Change
	if err := CheckLive(s, now); err != nil {
		return c, err
	}
	if !s.RequireOTP {
		return c, ErrOTPNotUsed
	}
	if err := s.OTP.CheckSend(now, 0, block); err != nil {
		return c, err
	}
	s.OTP.Record(now, OTPChannel, maskedDest, codeHash)
	record(&c, EvOTPSent, now, map[string]any{"channel": OTPChannel, "destination": maskedDest, "expiresAt": stamp(s.OTP.ExpiresAt)})
	return c, nil
}

// UndoOTPSend forgets a code whose delivery failed, so the recipient may ask again at once.
func UndoOTPSend(s *Session, now time.Time, code string) Change {
	var c Change
	s.OTP.UndoSend()
	record(&c, EvOTPSendFailed, now, map[string]any{"channel": OTPChannel, "code": code})
	return c
}

// VerifyOTP checks a submitted code: matches compares its keyed hash with the stored one in
// constant time. Every outcome is a change to persist (attempts, locks and blocks must
// survive); the outcome's Err(&s.OTP) is how to answer a failure. Errors (nothing to persist):
// 410; 400 otp_not_required; 400 otp_already_verified; 400 otp_blocked (blockedUntil).
func VerifyOTP(s *Session, now time.Time, matches func(storedHash string) bool, block time.Duration) (Change, otp.Outcome, error) {
	var c Change
	if err := CheckLive(s, now); err != nil {
		return c, 0, err
	}
	if !s.RequireOTP {
		return c, 0, ErrOTPNotUsed
	}
	out, err := s.OTP.Verify(now, 0, block, matches)
	if err != nil {
		return c, 0, err
	}
	switch out {
	case otp.Passed:
		record(&c, EvOTPVerified, now, map[string]any{"channel": s.OTP.Channel, "destination": s.OTP.Destination,
			"sentAt": stamp(s.OTP.SentAt)})
	case otp.Expired, otp.Locked:
		record(&c, EvOTPFailed, now, map[string]any{"reason": out.String()})
	default:
		record(&c, EvOTPFailed, now, map[string]any{"reason": "wrong_code", "attempt": s.OTP.Attempts})
		if out == otp.LockedNow || out == otp.BlockedNow {
			record(&c, EvOTPLocked, now, map[string]any{"locks": s.OTP.Locks})
		}
		if out == otp.BlockedNow {
			record(&c, EvOTPBlocked, now, map[string]any{"locks": s.OTP.Locks})
		}
	}
	return c, out, nil
}
