package portal

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/azure/tablestore"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/otp"
	"github.com/esign-svc/esign/shared/otp/otpflow"
	"github.com/esign-svc/esign/shared/pii"
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
	ErrNoDestination = &apperr.Error{Kind: apperr.KindConflict, Code: "otp_destination_missing",
		Detail: "no address is on record for this signer's chosen channel"}
)

// Challenge serves the signer's OTP challenge (send, verify) and the cross-device transfer
// (create, redeem) under /api/esign/portal/ with the portal API's token rules. Register
// API.Routes too: it answers the CORS preflights of the whole prefix.
type Challenge struct {
	*API
	Senders   notify.Providers // e-mail and SMS senders of the codes
	Hasher    *pii.Hasher      // keyed hash of the codes (PII_HASH_KEY)
	Cipher    *pii.Cipher      // decrypts the signer's address and phone number
	PortalURL string           // base of the transfer link: {PortalURL}/transfer?token=...
	OTPBlock  time.Duration    // how long three locked codes block the slot (OTP_BLOCK_MINUTES; 0: otp.DefaultBlock)
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
	acc, err := x.current(r)
	if err != nil {
		return err
	}
	i := acc.Claims.SlotIndex
	var channel esign.OTPChannel
	var slots []esign.Slot
	record := func(code otpflow.Code) (otpflow.Target, error) {
		var to string
		s, stored, _, err := x.Store.Update(r.Context(), acc.Session.GroupID, func(s *esign.Session, slots []esign.Slot) (esign.Change, []tablestore.Op, error) {
			sl, err := x.rebind(acc, s, slots)
			if err != nil {
				return esign.Change{}, nil, err
			}
			hasPhone := sl.PhoneEnc != ""
			if channel, err = sl.OTPChannelFor(pick, hasPhone); err != nil {
				return esign.Change{}, nil, err
			}
			var masked string
			if to, masked, err = x.destination(s.GroupID, sl, channel); err != nil {
				return esign.Change{}, nil, err
			}
			hash := code.Hash(s.GroupID, strconv.Itoa(sl.Index))
			ch, err := esign.SendOTP(s, slots, sl.Index, x.now(), pick, hasPhone, hash, masked, x.OTPBlock)
			ch.By(signer(r, sl))
			return ch, nil, err
		})
		if err != nil {
			return otpflow.Target{}, err
		}
		slots = stored
		return otpflow.Target{Channel: notify.Channel(channel), To: to, DocumentName: s.DocumentID, CorrelationID: s.CorrelationID}, nil
	}
	undo := func(ctx context.Context, _ string) error {
		_, _, _, err := x.Store.Update(ctx, acc.Session.GroupID, func(s *esign.Session, slots []esign.Slot) (esign.Change, []tablestore.Op, error) {
			ch := esign.UndoOTPSend(s, slots, i, x.now())
			ch.By(signer(r, &slots[i]))
			return ch, nil, nil
		})
		return err
	}
	if err := x.otpFlow().Send(r.Context(), record, undo); err != nil {
		return err
	}
	next, issued, err := x.refresh(acc.Claims)
	if err != nil {
		return err
	}
	sl := &slots[i]
	return web.JSON(w, http.StatusOK, otpSendResponse{tokenFields: newTokenFields(next, issued), OK: true,
		Channel: string(channel), Destination: sl.OTP.Destination, ExpiresAt: ts(sl.OTP.ExpiresAt),
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
	var acc *access
	var slots []esign.Slot
	err := x.otpFlow().Verify(req.Code, func(code otpflow.Code) (otp.Outcome, *otp.State, error) {
		var err error
		if acc, err = x.current(r); err != nil {
			return 0, nil, err
		}
		var out otp.Outcome
		_, slots, _, err = x.Store.Update(r.Context(), acc.Session.GroupID, func(s *esign.Session, slots []esign.Slot) (esign.Change, []tablestore.Op, error) {
			sl, err := x.rebind(acc, s, slots)
			if err != nil {
				return esign.Change{}, nil, err
			}
			ch, o, err := esign.VerifyOTP(s, slots, sl.Index, x.now(), code.Matches(s.GroupID, strconv.Itoa(sl.Index)), x.OTPBlock)
			out = o
			ch.By(signer(r, sl))
			return ch, nil, err
		})
		if err != nil {
			return 0, nil, err
		}
		return out, &slots[acc.Claims.SlotIndex].OTP, nil
	})
	if err != nil {
		return err
	}
	next, issued, err := x.refresh(acc.Claims)
	if err != nil {
		return err
	}
	return web.JSON(w, http.StatusOK, otpVerifyResponse{tokenFields: newTokenFields(next, issued), Verified: true,
		SlotState: string(slots[acc.Claims.SlotIndex].State)})
}

// otpFlow is the signers' code flow: signing codes by e-mail or SMS, the verify field "code".
func (x *Challenge) otpFlow() *otpflow.Flow {
	return &otpflow.Flow{Hasher: x.Hasher, Senders: x.Senders, Purpose: otpflow.Signing, SendFailed: ErrOTPSendFailed,
		Field: otpflow.CodeField{Path: "code", Hint: "the code is 6 digits"}, Block: x.OTPBlock}
}

// current authorises the bearer token of a request that only the slot's current device may
// make (OTP and transfer creation): 409 device_secondary for an earlier generation's token.
func (x *Challenge) current(r *http.Request) (*access, error) {
	tok, err := bearer(r)
	if err != nil {
		return nil, err
	}
	acc, err := x.authorize(r.Context(), tok)
	if err != nil {
		return nil, err
	}
	if err := requireDevice(acc.Claims, acc.Slot); err != nil {
		return nil, err
	}
	return acc, nil
}

// rebind repeats the checks of current on a freshly loaded session inside a transaction.
func (x *Challenge) rebind(acc *access, s *esign.Session, slots []esign.Slot) (*esign.Slot, error) {
	if err := esign.CheckLive(s, x.now()); err != nil {
		return nil, err
	}
	cur, err := bind(acc.Claims, s, slots)
	if err != nil {
		return nil, err
	}
	if err := requireDevice(acc.Claims, cur.Slot); err != nil {
		return nil, err
	}
	return cur.Slot, nil
}

// destination decrypts the address of the channel (AAD bound to the slot row) and masks it.
func (x *Challenge) destination(groupID string, sl *esign.Slot, ch esign.OTPChannel) (to, masked string, err error) {
	idx := strconv.Itoa(sl.Index)
	enc, aad, mask := sl.EmailEnc, pii.AAD(groupID, "slot", idx), pii.MaskEmail
	if ch == esign.OTPSMS {
		enc, aad, mask = sl.PhoneEnc, pii.AAD(groupID, "phone", idx), pii.MaskPhone
	}
	if enc == "" {
		return "", "", ErrNoDestination
	}
	to, err = x.Cipher.DecryptString(enc, aad)
	if err != nil {
		return "", "", err
	}
	return to, mask(to), nil
}
