package deliveryapi

import (
	"html"
	"net/http"
	"regexp"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/otp"
	"github.com/esign-svc/esign/shared/pii"
	"github.com/esign-svc/esign/shared/web"
)

// ErrOTPSendFailed is the 503 when the e-mail provider did not take the code (nothing is kept:
// the recipient may ask again at once).
var ErrOTPSendFailed = &apperr.Error{Kind: apperr.KindUnavailable, Code: otp.CodeSendFailed, Detail: "the code could not be sent; try again"}

var reCode = regexp.MustCompile(`^[0-9]{6}$`)

// codeHash binds a code to its delivery: HMAC("otp", deliveryId|code).
func (a *API) codeHash(deliveryID, code string) string {
	return a.Hasher.Hash("otp", deliveryID+"|"+code)
}

type otpSendView struct {
	OK        bool   `json:"ok"`
	ExpiresAt string `json:"expiresAt"`
}

// otpSend is POST /api/delivery/{deliveryId}/otp/send?t=: a new 6-digit code (10 minutes) to the
// recipient's e-mail address. The code is stored only as its keyed hash and never logged.
// Errors: 400 otp_not_required, otp_already_verified; 429 otp_rate_limited (Retry-After) within
// 60 s of the last send; 403 otp_blocked; 401; 404; 410; 503 otp_send_failed.
func (a *API) otpSend(w http.ResponseWriter, r *http.Request) error {
	code, err := otp.NewCode()
	if err != nil {
		return apperr.Wrap(err, apperr.KindInternal, "otp_generate_failed", "could not make a code")
	}
	var to string
	s, err := a.act(r, func(s *delivery.Session) (delivery.Change, error) {
		if to == "" && s.RequireOTP {
			addr, err := a.Cipher.DecryptString(s.RecipientEnc, pii.AAD(s.DeliveryID, "recipient"))
			if err != nil {
				return delivery.Change{}, err
			}
			to = addr
		}
		return delivery.SendOTP(s, a.now(), a.codeHash(s.DeliveryID, code), pii.MaskEmail(to))
	})
	if err != nil {
		return err
	}
	msg := notify.Message{Channel: notify.Email, Kind: notify.KindOTP, To: to, CorrelationID: s.CorrelationID,
		Subject: "Your access code for " + s.DocumentName,
		Text:    "Your one-time access code for the document \"" + s.DocumentName + "\" is " + code + ".\n\nIt is valid for 10 minutes. If you did not ask for it, ignore this e-mail.\n",
		HTML: "<!doctype html><html><body style=\"font-family:sans-serif\"><p>Your one-time access code for the document <strong>" +
			html.EscapeString(s.DocumentName) + "</strong> is</p><p style=\"font-size:1.6em;letter-spacing:0.2em\"><strong>" + code +
			"</strong></p><p>It is valid for 10 minutes. If you did not ask for it, ignore this e-mail.</p></body></html>\n"}
	if sendErr := a.Email.Send(r.Context(), msg); sendErr != nil {
		who := recipientActor(r, s)
		_, _, _ = a.Store.Update(r.Context(), s.DeliveryID, func(s *delivery.Session) (delivery.Change, error) {
			ch := delivery.UndoOTPSend(s, a.now(), errCode(sendErr))
			ch.By(who)
			return ch, nil
		})
		return &apperr.Error{Kind: ErrOTPSendFailed.Kind, Code: ErrOTPSendFailed.Code, Detail: ErrOTPSendFailed.Detail, Err: sendErr}
	}
	return web.JSON(w, http.StatusOK, otpSendView{OK: true, ExpiresAt: stamp(s.OTP.ExpiresAt)})
}

type otpVerifyRequest struct {
	OTP string `json:"otp"`
}

// otpVerify is POST /api/delivery/{deliveryId}/otp/verify?t= {otp}: 200 {ok, verified} when the
// code is right. Every attempt is recorded. Errors: 400 otp (not 6 digits), otp_invalid (with
// attemptsLeft), otp_expired, otp_locked (after 5 wrong tries), otp_not_required,
// otp_already_verified; 403 otp_blocked; 401; 404; 410.
func (a *API) otpVerify(w http.ResponseWriter, r *http.Request) error {
	var req otpVerifyRequest
	if err := web.DecodeJSON(r, 4<<10, &req); err != nil {
		return err
	}
	if !reCode.MatchString(req.OTP) {
		return apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field("otp", "the 6-digit code from the e-mail"))
	}
	var out otp.Outcome
	s, err := a.act(r, func(s *delivery.Session) (delivery.Change, error) {
		ch, o, err := delivery.VerifyOTP(s, a.now(), func(stored string) bool {
			return a.Hasher.Matches("otp", s.DeliveryID+"|"+req.OTP, stored)
		})
		out = o
		return ch, err
	})
	if err != nil {
		return err
	}
	if err := out.Err(&s.OTP); err != nil {
		return err
	}
	return web.JSON(w, http.StatusOK, map[string]bool{"ok": true, "verified": true})
}

func errCode(err error) string {
	if e, ok := apperr.As(err); ok {
		return e.Code
	}
	return "send_failed"
}
