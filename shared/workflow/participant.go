package workflow

import (
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/otp"
)

// Audit events of the participant's OTP and of resent invitations (data: channel, masked
// destination, reasons and counts; never a code or an address).
const (
	EvOTPSent       = "workflow.otp_sent"
	EvOTPSendFailed = "workflow.otp_send_failed"
	EvOTPVerified   = "workflow.otp_verified"
	EvOTPFailed     = "workflow.otp_failed"
	EvInviteResent  = "workflow.invite_resent"
)

// OTPChannel is the participant's code channel: e-mail to the first recipient.
const OTPChannel = "email"

// ResendInterval is the least time between two invitations (DESIGN 10: one per 60 s).
const ResendInterval = 60 * time.Second

var (
	// ErrOTPNotRequired: OTP send or verify on a workflow without requireOtp (400).
	ErrOTPNotRequired = apperr.New(apperr.KindInvalid, otp.CodeNotRequired, "this workflow uses no OTP")
	// ErrOTPRequired: a participant route before the OTP challenge was passed (403).
	ErrOTPRequired = apperr.New(apperr.KindForbidden, otp.CodeRequired, "pass the OTP challenge first")
)

// OTPGate is the participant routes' check: with requireOtp, the code must have been verified.
func (w *Workflow) OTPGate() error {
	st := w.OTP.State()
	if w.Setup.RequireOTP && !st.Verified(0) {
		return ErrOTPRequired
	}
	return nil
}

func (w *Workflow) otpUsable() error {
	switch {
	case !w.Setup.RequireOTP:
		return ErrOTPNotRequired
	case !w.Live():
		return ErrInvalidState
	}
	return nil
}

// SendOTP records a new code (its keyed hash) sent to maskedDest. Errors: 400
// otp_not_required, otp_already_verified, otp_blocked (within the block time); 429 otp_rate_limited within 60 s;
// ErrInvalidState once the workflow is sealing or ended.
func (w *Workflow) SendOTP(codeHash, maskedDest string, now time.Time, block time.Duration) (kernel.Change, error) {
	return w.commit(func(x *Workflow, c *kernel.Change) error {
		if err := x.otpUsable(); err != nil {
			return err
		}
		st := x.OTP.State()
		if err := st.CheckSend(now, 0, block); err != nil {
			return err
		}
		st.Record(now, OTPChannel, maskedDest, codeHash)
		x.OTP = st.Stored()
		c.Record(EvOTPSent, kernel.NoSlot, now, map[string]any{"channel": OTPChannel, "destination": maskedDest})
		return nil
	})
}

// UndoOTPSend forgets a code whose e-mail failed (reason: a short provider code).
func (w *Workflow) UndoOTPSend(reason string, now time.Time) (kernel.Change, error) {
	return w.commit(func(x *Workflow, c *kernel.Change) error {
		st := x.OTP.State()
		st.UndoSend()
		x.OTP = st.Stored()
		c.Record(EvOTPSendFailed, kernel.NoSlot, now, map[string]any{"channel": OTPChannel, "reason": reason})
		return nil
	})
}

// VerifyOTP checks a submitted code (matches compares keyed hashes in constant time). Every
// outcome is a change to store (attempts, locks and blocks survive); outcome.Err answers a
// failure. Errors (nothing to store): 400 otp_not_required, otp_already_verified, otp_blocked
// (within the block time); ErrInvalidState.
func (w *Workflow) VerifyOTP(matches func(string) bool, now time.Time, block time.Duration) (kernel.Change, otp.Outcome, error) {
	var out otp.Outcome
	ch, err := w.commit(func(x *Workflow, c *kernel.Change) error {
		if err := x.otpUsable(); err != nil {
			return err
		}
		st := x.OTP.State()
		o, err := st.Verify(now, 0, block, matches)
		if err != nil {
			return err
		}
		out, x.OTP = o, st.Stored()
		if o == otp.Passed {
			c.Record(EvOTPVerified, kernel.NoSlot, now, map[string]any{"channel": st.Channel, "destination": st.Destination})
			return nil
		}
		c.Record(EvOTPFailed, kernel.NoSlot, now, map[string]any{"reason": o.String(), "attempt": st.Attempts, "locks": st.Locks})
		return nil
	})
	return ch, out, err
}

// ResendInvite asks the invitation again: the current approver's e-mail in pending-approval,
// else the participant's. It never lifts an OTP block: the route is the participant's own link
// (issue 21), and a block lifts only when its time has run. One per ResendInterval (429
// invite_rate_limited with Retry-After). Errors: that; ErrInvalidState once sealing or ended,
// and in pending-approval without approval stages (no approver is named to e-mail).
func (w *Workflow) ResendInvite(now time.Time) (kernel.Change, error) {
	return w.commit(func(x *Workflow, c *kernel.Change) error {
		if !x.Live() || (x.State == StatePendingApproval && x.TotalStages == 0) {
			return ErrInvalidState
		}
		if since := now.Sub(x.InvitedAt); !x.InvitedAt.IsZero() && since < ResendInterval {
			return &apperr.Error{Kind: apperr.KindRateLimited, Code: "invite_rate_limited",
				Detail: "one invitation per 60 seconds; try again later", RetryAfter: ResendInterval - since}
		}
		x.UpdatedAt = now
		to := "participant"
		if x.State == StatePendingApproval {
			to = "approver"
			c.Ask(EffectNotifyApprovers, kernel.NoSlot)
		} else {
			x.LinkGen++ // the new invitation's link replaces the old one
			c.Ask(EffectInviteParticipant, kernel.NoSlot)
		}
		c.Record(EvInviteResent, kernel.NoSlot, now, map[string]any{"to": to})
		return nil
	})
}
