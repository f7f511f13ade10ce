package portalapi

import (
	"context"
	"net/http"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/otp"
	"github.com/esign-svc/esign/shared/otp/otpflow"
	"github.com/esign-svc/esign/shared/pii"
	"github.com/esign-svc/esign/shared/tokens"
	"github.com/esign-svc/esign/shared/web"
)

// Route patterns of the OTP challenge and the cross-device transfer.
const (
	PathOTPSend        = "/api/esign/portal/otp/send"
	PathOTPVerify      = "/api/esign/portal/otp/verify"
	PathTransfer       = "/api/esign/portal/transfer"
	PathTransferRedeem = "/api/esign/portal/transfer/redeem"
)

// Errors of the OTP routes besides shared/otp's and the state machine's.
var (
	ErrOTPSendFailed = &apperr.Error{Kind: apperr.KindUnavailable, Code: otp.CodeSendFailed,
		Detail: "the code could not be sent; nothing was recorded, ask for a new one"}
	ErrNoDestination = esign.ErrNoDestination
)

// Challenge serves the signer's OTP challenge (send, verify) and the cross-device transfer
// (create, redeem) under /api/esign/portal/ with the portal API's token rules. Register
// API.Routes too: it answers the CORS preflights of the whole prefix.
type Challenge struct {
	*API
	Senders   notify.Providers // e-mail and SMS senders of the codes
	Hasher    *pii.Hasher      // keyed hash of the codes (PII_HASH_KEY)
	PortalURL string           // base of the transfer link: {PortalURL}/transfer?token=...
}

// Routes registers the four routes (all forwarded: none has queue outputs).
func (x *Challenge) Routes(mux *http.ServeMux) {
	c := portalCORS(x.PortalOrigin)
	mux.Handle("POST "+PathOTPSend, c.Wrap(web.Handle(x.otpSend)))
	mux.Handle("POST "+PathOTPVerify, c.Wrap(web.Handle(x.otpVerify)))
	mux.Handle("POST "+PathTransfer, c.Wrap(web.Handle(x.transferCreate)))
	mux.Handle("POST "+PathTransferRedeem, c.Wrap(web.Handle(x.transferRedeem)))
}

type otpSendRequest struct {
	Channel string `json:"channel,omitempty"`
}

type otpSendResponse struct {
	tokenFields
	OK          bool   `json:"ok"`
	Channel     string `json:"channel"`
	Destination string `json:"destination"` // masked
	ExpiresAt   string `json:"expiresAt"`
	ResendAfter string `json:"resendAfter"`
}

// otpSend is POST /api/esign/portal/otp/send {"channel": "email"|"sms"} (the channel only for
// signer-choice; the body may be empty otherwise): a new 6-digit code replaces any earlier
// one. Only its keyed hash is stored, with the masked destination, before the code is sent
// (never logged); a failed send is undone (shared/otp/otpflow). Errors: 400 channel at fault,
// otp_not_required, otp_already_verified; 401; 400 otp_blocked (blockedUntil); 409 device_secondary,
// otp_destination_missing, slot_wrong_state; 410; 429 otp_rate_limited with Retry-After within
// 60 s of the last send; 503 otp_send_failed.
func (x *Challenge) otpSend(w http.ResponseWriter, r *http.Request) error {
	var req otpSendRequest
	if err := web.DecodeOptionalJSON(r, web.MaxJSONBody, &req); err != nil {
		return err
	}
	pick := esign.OTPChannel(req.Channel)
	if pick != "" && pick != esign.OTPEmail && pick != esign.OTPSMS {
		return apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field("channel", "choose email or sms"))
	}
	claims, err := x.bearerClaims(r) // RecordOTP checks it on the session it loads (current device only)
	if err != nil {
		return err
	}
	var sent esign.OTPSent
	record := func(code otpflow.Code) (otpflow.Target, error) {
		var err error
		if sent, err = x.Sessions.RecordOTP(r.Context(), claims, device(r), pick, code); err != nil {
			return otpflow.Target{}, err
		}
		return otpflow.Target{Channel: notify.Channel(sent.Channel), To: sent.To, DocumentName: sent.Session.DocumentID,
			CorrelationID: sent.Session.CorrelationID, Locale: viewLanguage(r, sent.Slot)}, nil
	}
	undo := func(ctx context.Context, _ string) error {
		return x.Sessions.UndoOTP(ctx, claims, device(r))
	}
	if err := x.otpFlow().Send(r.Context(), record, undo); err != nil {
		return err
	}
	next, issued, err := x.refresh(claims)
	if err != nil {
		return err
	}
	sl := sent.Slot
	return web.JSON(w, http.StatusOK, otpSendResponse{tokenFields: newTokenFields(next, issued), OK: true,
		Channel: string(sent.Channel), Destination: sl.OTP.Destination, ExpiresAt: ts(sl.OTP.ExpiresAt),
		ResendAfter: ts(sl.OTP.SentAt.Add(otp.SendInterval))})
}

type otpVerifyRequest struct {
	Code string `json:"code"`
}

type otpVerifyResponse struct {
	tokenFields
	Verified  bool   `json:"verified"`
	SlotState string `json:"slotState"`
}

// otpVerify is POST /api/esign/portal/otp/verify {"code": "123456"}: the code's keyed hash is
// compared in constant time with the stored one; every outcome (pass, wrong try, lock, block)
// is persisted with its audit event before the answer. Errors: 400 code at fault (not 6
// digits), otp_invalid (with attemptsLeft), otp_locked, otp_expired, otp_not_required,
// otp_already_verified; 401; 400 otp_blocked (blockedUntil); 409 device_secondary; 410; 413 over 4 KiB.
func (x *Challenge) otpVerify(w http.ResponseWriter, r *http.Request) error {
	var req otpVerifyRequest
	if err := web.DecodeJSON(r, otpflow.MaxBody, &req); err != nil {
		return err
	}
	var claims tokens.PortalAccess
	var sl *esign.Slot
	err := x.otpFlow().Verify(req.Code, func(code otpflow.Code) (otp.Outcome, *otp.State, error) {
		var err error
		if claims, err = x.bearerClaims(r); err != nil { // VerifyOTP checks it on the session it loads
			return 0, nil, err
		}
		var out otp.Outcome
		if out, sl, err = x.Sessions.VerifyOTP(r.Context(), claims, device(r), code); err != nil {
			return 0, nil, err
		}
		return out, &sl.OTP, nil
	})
	if err != nil {
		return err
	}
	next, issued, err := x.refresh(claims)
	if err != nil {
		return err
	}
	return web.JSON(w, http.StatusOK, otpVerifyResponse{tokenFields: newTokenFields(next, issued), Verified: true,
		SlotState: string(sl.State)})
}

// otpFlow is the signers' code flow: signing codes by e-mail or SMS, the verify field "code".
func (x *Challenge) otpFlow() *otpflow.Flow {
	return &otpflow.Flow{Hasher: x.Hasher, Senders: x.Senders, Purpose: otpflow.Signing, SendFailed: ErrOTPSendFailed,
		Field: otpflow.CodeField{Path: "code", Hint: "the code is 6 digits"}, Block: x.Sessions.OTPBlock} // the use case's block time: one setting for the machine and the answer
}
