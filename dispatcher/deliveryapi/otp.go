package deliveryapi

import (
	"context"
	"net/http"

	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/otp"
	"github.com/esign-svc/esign/shared/otp/otpflow"
	"github.com/esign-svc/esign/shared/web"
)

// ErrOTPSendFailed is the 503 when the e-mail provider did not take the code (nothing is kept:
// the recipient may ask again at once).
var ErrOTPSendFailed = otpflow.ErrSendFailed

type otpSendView struct {
	OK        bool   `json:"ok"`
	ExpiresAt string `json:"expiresAt"`
}

// otpSend is POST /api/delivery/{deliveryId}/otp/send?t=: a new 6-digit code (10 minutes) to the
// recipient's e-mail address. The code is stored only as its keyed hash, bound to the delivery,
// and never logged; a failed send is recorded with the provider's error code (shared/otp/otpflow).
// Errors: 400 otp_not_required, otp_already_verified; 429 otp_rate_limited (Retry-After) within
// 60 s of the last send; 400 otp_blocked (blockedUntil); 401; 404; 410; 503 otp_send_failed.
func (a *API) otpSend(w http.ResponseWriter, r *http.Request) error {
	if err := web.NoBody(r); err != nil {
		return err
	}
	var s *delivery.Session
	record := func(code otpflow.Code) (otpflow.Target, error) {
		id, err := a.token(r)
		if err != nil {
			return otpflow.Target{}, err
		}
		to, stored, err := a.Deliveries.RecordOTP(r.Context(), id, code, recipientActor(r, id))
		s = stored
		return to, err
	}
	undo := func(ctx context.Context, reason string) error {
		return a.Deliveries.UndoOTP(ctx, s.DeliveryID, reason, recipientActor(r, s.DeliveryID))
	}
	if err := a.otpFlow().Send(r.Context(), record, undo); err != nil {
		return err
	}
	return web.JSON(w, http.StatusOK, otpSendView{OK: true, ExpiresAt: stamp(s.OTP.ExpiresAt)})
}

type otpVerifyRequest struct {
	OTP string `json:"otp"`
}

// otpVerify is POST /api/delivery/{deliveryId}/otp/verify?t= {otp}: 200 {ok, verified} when the
// code is right. Every attempt is recorded. Errors: 400 otp (not 6 digits), otp_invalid (with
// attemptsLeft), otp_expired, otp_locked (after 5 wrong tries), otp_not_required,
// otp_already_verified; 400 otp_blocked (blockedUntil); 401; 404; 410; 413 over 4 KiB.
func (a *API) otpVerify(w http.ResponseWriter, r *http.Request) error {
	var req otpVerifyRequest
	if err := web.DecodeJSON(r, otpflow.MaxBody, &req); err != nil {
		return err
	}
	err := a.otpFlow().Verify(req.OTP, func(code otpflow.Code) (otp.Outcome, *otp.State, error) {
		id, err := a.token(r)
		if err != nil {
			return 0, nil, err
		}
		return a.Deliveries.VerifyOTP(r.Context(), id, code, recipientActor(r, id))
	})
	if err != nil {
		return err
	}
	return web.JSON(w, http.StatusOK, map[string]bool{"ok": true, "verified": true})
}

// otpFlow is the recipients' code flow: access codes by e-mail, the verify field "otp".
func (a *API) otpFlow() *otpflow.Flow {
	return &otpflow.Flow{Hasher: a.Hasher, Senders: notify.Providers{Email: a.Email}, Purpose: otpflow.Access,
		SendFailed: ErrOTPSendFailed, Field: otpflow.CodeField{Path: "otp", Hint: "the 6-digit code from the e-mail"}, Block: a.Deliveries.OTPBlock}
}
