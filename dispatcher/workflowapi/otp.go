package workflowapi

import (
	"context"
	"net/http"

	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/otp"
	"github.com/esign-svc/esign/shared/otp/otpflow"
	"github.com/esign-svc/esign/shared/tokens"
	"github.com/esign-svc/esign/shared/web"
	"github.com/esign-svc/esign/shared/workflow"
)

// otpFlow is the participant's code flow: e-mail to the first recipient, the verify field "otp".
func (a *API) otpFlow() *otpflow.Flow {
	return &otpflow.Flow{Hasher: a.Hasher, Senders: notify.Providers{Email: a.Email}, Purpose: otpflow.Signing,
		SendFailed: otpflow.ErrSendFailed, Field: otpflow.CodeField{Path: "otp", Hint: "the 6-digit code from the e-mail"}, Block: a.OTPBlock}
}

type otpSendView struct {
	OK        bool   `json:"ok"`
	ExpiresAt string `json:"expiresAt"`
}

// otpSend is POST /api/workflow/{workflowId}/otp/send?token= (participant): a new 6-digit code
// (10 minutes) to the first recipient, stored only as its keyed hash bound to the workflow.
// Errors: 400 otp_not_required, otp_already_verified; 401; 400 otp_blocked (blockedUntil); 404; 409
// invalid_state; 429 otp_rate_limited (Retry-After); 503 otp_send_failed.
func (a *API) otpSend(w http.ResponseWriter, r *http.Request) error {
	if err := web.NoBody(r); err != nil {
		return err
	}
	t, err := a.participant(w, r)
	if err != nil {
		return err
	}
	id := r.PathValue("workflowId")
	who := actor(r, "participant", workflow.ParticipantID)
	var x *workflow.Workflow
	record := func(code otpflow.Code) (otpflow.Target, error) {
		var to string
		var err error
		x, to, err = a.Workflows.SendOTP(r.Context(), id, link(t), who, func(id string) string { return code.Hash("workflow", id) }, a.OTPBlock)
		if err != nil {
			return otpflow.Target{}, spent(w, err)
		}
		return otpflow.Target{Channel: notify.Email, To: to, CorrelationID: x.CorrelationID}, nil
	}
	undo := func(ctx context.Context, reason string) error {
		return a.Workflows.UndoOTPSend(ctx, id, who, reason)
	}
	if err := a.otpFlow().Send(r.Context(), record, undo); err != nil {
		return err
	}
	st := x.OTP.State()
	return web.JSON(w, http.StatusOK, otpSendView{OK: true, ExpiresAt: stamp(st.ExpiresAt)})
}

type otpVerifyRequest struct {
	OTP string `json:"otp"`
}

// otpVerify is POST /api/workflow/{workflowId}/otp/verify?token= {otp} (participant): 200 {ok,
// verified} for the right code; every attempt is stored. Errors: 400 otp (not 6 digits),
// otp_invalid (attemptsLeft), otp_expired, otp_locked, otp_not_required, otp_already_verified;
// 401; 400 otp_blocked (blockedUntil); 404; 409; 413.
func (a *API) otpVerify(w http.ResponseWriter, r *http.Request) error {
	var req otpVerifyRequest
	if err := web.DecodeJSON(r, otpflow.MaxBody, &req); err != nil {
		return err
	}
	t, err := a.participant(w, r)
	if err != nil {
		return err
	}
	who := actor(r, "participant", workflow.ParticipantID)
	err = a.otpFlow().Verify(req.OTP, func(code otpflow.Code) (otp.Outcome, *otp.State, error) {
		x, out, err := a.Workflows.VerifyOTP(r.Context(), r.PathValue("workflowId"), link(t), who, func(id string) func(string) bool {
			return code.Matches("workflow", id)
		}, a.OTPBlock)
		if err != nil {
			return 0, nil, spent(w, err)
		}
		st := x.OTP.State()
		return out, &st, nil
	})
	if err != nil {
		return err
	}
	return web.JSON(w, http.StatusOK, map[string]bool{"ok": true, "verified": true})
}

// resendInvite is POST /api/workflow/{workflowId}/resend-invite?token= (participant or
// reviewer): the current approver's e-mail again in pending-approval, else the participant's
// invitation, whose new link replaces the participant's tokens (it never lifts an OTP block).
// Errors: 401 (link_replaced for a replaced link); 404; 409 invalid_state; 410 workflow_ended; 429
// invite_rate_limited within 60 s of the last e-mail.
func (a *API) resendInvite(w http.ResponseWriter, r *http.Request) error {
	if err := web.NoBody(r); err != nil {
		return err
	}
	t, err := a.portal(w, r)
	if err != nil {
		return err
	}
	x, err := a.Workflows.ResendInvite(r.Context(), r.PathValue("workflowId"), link(t), actor(r, t.Role, t.Participant))
	if err != nil {
		return spent(w, err)
	}
	if t.Role == tokens.RoleParticipant && x.LinkGen != t.Gen {
		w.Header().Del(HeaderPortalToken) // the new link is in the invitation; this one is replaced
	}
	return web.JSON(w, http.StatusOK, statusOf(x))
}
