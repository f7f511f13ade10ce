package portalapi

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/uuid"
	qrcode "github.com/skip2/go-qrcode"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/tokens"
	"github.com/esign-svc/esign/shared/web"
)

// QRModule is the side of one QR module in the transfer PNG, in pixels. A whole number of
// pixels per module keeps every module the same size (a PNG squeezed to a fixed side resamples
// modules unevenly, which scanners misread now and then).
const QRModule = 8

type transferResponse struct {
	tokenFields
	QRPNG     string `json:"qrPng"` // base64 (standard, padded) PNG of URL
	URL       string `json:"url"`
	ExpiresAt string `json:"expiresAt"`
}

// transferCreate is POST /api/esign/portal/transfer (no body): the slot's current device asks
// for a one-time cross-device code. A 256-bit random token is made; only its SHA-256 is stored
// (in the session's partition, with an index row), with a 10-minute life (never beyond the
// session's); the audit trail records slot.transfer_created. The answer carries the link
// {PORTAL_URL}/transfer?token=<token>, the same link as a QR code PNG, and its expiry. Errors:
// 401; 409 device_secondary, slot_not_open, slot_wrong_state; 410.
func (x *Challenge) transferCreate(w http.ResponseWriter, r *http.Request) error {
	if err := web.NoBody(r); err != nil {
		return err
	}
	claims, err := x.bearerClaims(r) // CreateTransfer checks it on the session it loads
	if err != nil {
		return err
	}
	token, tr, err := x.Sessions.CreateTransfer(r.Context(), claims, device(r))
	if err != nil {
		return err
	}
	link := strings.TrimRight(x.PortalURL, "/") + "/transfer?token=" + url.QueryEscape(token)
	png, err := qrcode.Encode(link, qrcode.Medium, -QRModule)
	if err != nil {
		return apperr.Wrap(err, apperr.KindInternal, "qr_encode_failed", "could not draw the transfer QR code")
	}
	next, issued, err := x.refresh(claims)
	if err != nil {
		return err
	}
	return web.JSON(w, http.StatusOK, transferResponse{tokenFields: newTokenFields(next, issued),
		QRPNG: base64.StdEncoding.EncodeToString(png), URL: link, ExpiresAt: ts(tr.ExpiresAt)})
}

type redeemRequest struct {
	Token string `json:"token"`
}

// transferRedeem is POST /api/esign/portal/transfer/redeem {"token": "<token>"}, called by the
// new device (no bearer token). In one transaction with the session's ETag it deletes the
// stored token on its ETag (single use), raises the slot's device generation (the earlier
// device's tokens become view-only: completion is refused with 409 device_secondary), drops
// the OTP send time so the new device can ask for a code at once, and records
// slot.transfer_redeemed with the new device's IP and user agent. The answer is what activate
// answers, with an access token of the new generation; the new device must pass the full OTP
// challenge (e-mail when the slot had none) before the document or signing. Errors: 400
// without a token; 401 transfer_token_invalid for an unknown, used, expired or superseded
// token alike; 409 slot_not_open or the session no longer taking signer actions; 410 ended.
func (x *Challenge) transferRedeem(w http.ResponseWriter, r *http.Request) error {
	var req redeemRequest
	if err := web.DecodeJSON(r, web.MaxJSONBody, &req); err != nil {
		return err
	}
	if req.Token == "" {
		return apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field("token", "the token of the transfer link is required"))
	}
	s, sl, err := x.Sessions.RedeemTransfer(r.Context(), req.Token, device(r))
	if err != nil {
		return err
	}
	tok, issued, err := x.Tokens.IssuePortalAccess(tokens.PortalAccess{GroupID: s.GroupID, SlotIndex: sl.Index,
		SessionID: sl.SessionID, DeviceID: uuid.NewString(), Generation: sl.Generation, SessionExpiresAt: s.ExpiresAt})
	if err != nil {
		return apperr.Wrap(err, apperr.KindInternal, tokens.CodeIssueFailed, "could not issue the access token")
	}
	return web.JSON(w, http.StatusOK, viewOf(s, sl, tok, issued, false, viewLanguage(r, sl)))
}
