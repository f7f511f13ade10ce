package portalapi

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/otp"
	"github.com/esign-svc/esign/shared/tokens"
	"github.com/esign-svc/esign/shared/web"
)

// Errors of the portal routes besides the state machine's and the tokens'.
var (
	ErrNoBearer        = &apperr.Error{Kind: apperr.KindUnauthenticated, Code: tokens.CodeMissing, Detail: "send the portal access token as Authorization: Bearer <token>"}
	ErrTokenNotCurrent = esign.ErrAccessNotCurrent
	ErrSecondary       = esign.ErrSecondary
	ErrOTPRequired     = &apperr.Error{Kind: apperr.KindForbidden, Code: otp.CodeRequired, Detail: "pass the one-time passcode challenge first"}
)

// access is a verified portal access token with the session it belongs to, as loaded
// (esign.SessionReads.Signer).
type access struct {
	Claims tokens.PortalAccess
	esign.SignerView
}

func bearer(r *http.Request) (string, error) {
	h := r.Header.Get("Authorization")
	const p = "bearer "
	if len(h) <= len(p) || !strings.EqualFold(h[:len(p)], p) {
		return "", ErrNoBearer
	}
	return strings.TrimSpace(h[len(p):]), nil
}

// verifyAccess checks a portal access token. An expired token of a session that has ended is
// answered as the session's end (410) rather than 401.
func (a *API) verifyAccess(ctx context.Context, tok string) (tokens.PortalAccess, error) {
	claims, err := a.Tokens.VerifyPortalAccess(tok)
	if err == nil {
		return claims, nil
	}
	if e, ok := apperr.As(err); ok && e.Code == tokens.CodeExpired && a.Lapsed != nil {
		if old, lerr := a.Lapsed.VerifyPortalAccess(tok); lerr == nil {
			if gone := a.goneErr(ctx, old.GroupID); gone != nil {
				return claims, gone
			}
		}
	}
	return claims, err
}

// bearerClaims verifies the request's bearer token (verifyAccess): the claims a use case checks
// on the session it loads, for a route that makes no read before its one call.
func (a *API) bearerClaims(r *http.Request) (tokens.PortalAccess, error) {
	tok, err := bearer(r)
	if err != nil {
		return tokens.PortalAccess{}, err
	}
	return a.verifyAccess(r.Context(), tok)
}

// goneErr is the session's 410 when it has ended (expired or cancelled), else nil.
func (a *API) goneErr(ctx context.Context, groupID string) error {
	return a.Sessions.Ended(ctx, groupID)
}

// authorize verifies tok, loads its session and answers 410/409 when the session has ended or
// no longer takes signer actions, before anything else. The token must name the slot's
// current portal session id and a generation not newer than the slot's.
func (a *API) authorize(ctx context.Context, tok string) (*access, error) {
	claims, err := a.verifyAccess(ctx, tok)
	if err != nil {
		return nil, err
	}
	v, err := a.Reads.Signer(ctx, claims)
	if err != nil {
		return nil, err
	}
	return &access{Claims: claims, SignerView: v}, nil
}

// refresh issues the sliding successor of a verified token: 30 minutes from now, never beyond
// the session's expiry, same slot, portal session and generation.
func (a *API) refresh(c tokens.PortalAccess) (string, tokens.PortalAccess, error) {
	tok, issued, err := a.Tokens.IssuePortalAccess(tokens.PortalAccess{GroupID: c.GroupID, SlotIndex: c.SlotIndex,
		SessionID: c.SessionID, DeviceID: c.DeviceID, Generation: c.Generation, SessionExpiresAt: c.SessionExpiresAt})
	if err != nil {
		return "", issued, apperr.Wrap(err, apperr.KindInternal, tokens.CodeIssueFailed, "could not issue the access token")
	}
	return tok, issued, nil
}

// device is the signer's browser as r shows it, for the use cases' audit actor.
func device(r *http.Request) esign.Device {
	return esign.Device{IP: web.ClientIP(r), UserAgent: web.UserAgent(r)}
}

// CheckDocumentOTP is the OTP gate of the document: nil for a slot without OTP, or once the
// slot's current device has passed OTP; 403 otp_required otherwise (a device that took the
// session over by cross-device transfer must pass OTP again).
func CheckDocumentOTP(sl *esign.Slot) error {
	if sl.NeedsOTP() {
		return ErrOTPRequired
	}
	return nil
}

func ts(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
