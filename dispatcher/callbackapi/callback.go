// Package callback serves POST /api/esign/callback, the signed callback the portal posts when a
// signer submits (DESIGN 4): the X-Esign-Signature HMAC is verified over the raw body before
// anything is parsed, each callback id is accepted once per session, and the signature, the
// completed fields and the consents are stored with the slot's transition to signed in one
// transaction. When the last required slot is signed the session goes to sealing and the seal
// message is queued.
//
// The function is invoked (it has queue outputs), so the body reaches the handler through the
// Functions invocation payload: the host passes a JSON request body as its text, and funcproto
// gives the handler exactly those bytes. The HMAC is computed over them: the portal must sign
// the exact bytes it sends, and the body must be sent as application/json text (a host that
// re-serialised a parsed object would break the signature, which then fails closed with 401).
package callbackapi

import (
	"context"
	"crypto/subtle"
	"net/http"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/callbacksig"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/tokens"
	"github.com/esign-svc/esign/shared/web"
)

// Path is the callback route.
const Path = "/api/esign/callback"

// Errors of the callback besides the state machine's, the tokens' and callbacksig's (the
// submission's, esign.Submit's).
var (
	ErrWrongSlot       = esign.ErrWrongSlot
	ErrSecondary       = esign.ErrSecondary
	ErrConsentMismatch = esign.ErrConsentMismatch
	ErrAlreadySigned   = esign.ErrAlreadySigned
)

// API holds what the callback needs.
type API struct {
	Sessions *esign.Sessions // the use cases: Submit
	Tokens   *tokens.Codec
	// Lapsed verifies access tokens past their own expiry, only to answer 410 for a session that
	// ended (portal.LapsedCodec); nil: an expired token is 401.
	Lapsed  *tokens.Codec
	Secrets []string // PORTAL_CALLBACK_SECRETS, current first
	Now     func() time.Time
}

// Routes registers the callback route on mux (an invoked function: queue outputs seal, notify).
func (a *API) Routes(mux *http.ServeMux) {
	mux.Handle("POST "+Path, web.Handle(a.callback))
}

type response struct {
	GroupID      string `json:"groupId"`
	SlotIndex    int    `json:"slotIndex"`
	SlotState    string `json:"slotState"`
	SessionState string `json:"sessionState"`
}

// callback is POST /api/esign/callback. Errors, each leaving everything unchanged: 413 body over
// 2 MiB or signature_too_large; 401 callback_signature_missing / _invalid / _stale (checked
// before the body is parsed), callback_replayed, token_invalid / token_expired; 400 after the
// HMAC for what web.DecodeJSONBody refuses (unsupported_media_type, a body that is not one JSON
// object) or a field at fault (named), fields not matching the manifest; 403
// token_wrong_slot; 404 unknown sessionId; 409 device_secondary, consent_mismatch,
// consent_required, not_viewed, slot_already_signed, slot_not_open, session_not_live; 410 expired or
// cancelled.
func (a *API) callback(w http.ResponseWriter, r *http.Request) error {
	raw, err := web.ReadBody(r, MaxBody) // the raw bytes: the HMAC is over them
	if err != nil {
		return err
	}
	now := a.Now().UTC()
	if err := callbacksig.Verify(r.Header.Get(callbacksig.Header), raw, now, a.Secrets); err != nil {
		if _, ok := apperr.As(err); ok {
			return err
		}
		return apperr.Wrap(err, apperr.KindInternal, "callback_secrets_missing", "the callback cannot be verified")
	}
	p, err := parseBody(r, raw)
	if err != nil {
		return err
	}
	claims, err := a.Tokens.VerifyPortalAccess(p.AccessToken)
	if err != nil {
		if e, ok := apperr.As(err); ok && e.Code == tokens.CodeExpired {
			if gone := a.goneErr(r.Context(), p); gone != nil {
				return gone
			}
		}
		return err
	}
	// The access token we signed names the session and the slot: no index row, no extra read.
	// The HMAC-signed body must name the same slot (checked on the loaded session).
	s, slots, err := a.Sessions.Submit(r.Context(), esign.Submission{Claims: claims, SessionID: p.SessionID,
		CallbackID: p.CallbackID, SignerName: p.SignerName, IP: p.IP, UserAgent: p.UserAgent, Fields: p.Fields,
		AcceptedAt: p.AcceptedAt, PNG: p.PNG, Width: p.Width, Height: p.Height})
	if err != nil {
		return err
	}
	idx := claims.SlotIndex
	return web.JSON(w, http.StatusOK, response{GroupID: s.GroupID, SlotIndex: idx,
		SlotState: string(slots[idx].State), SessionState: string(s.State)})
}

// goneErr is the 410 of the session the (HMAC-verified) body's access token names, when that
// session has ended (expired or cancelled), else nil. An access token never outlives its
// session, so a signer submitting after the session's end always holds an expired token; like
// the portal routes, the callback then answers the session's end (410, as the spec wants for a
// link used after expiry) rather than 401 token_expired. The token must still be ours (its
// signature is checked, only its expiry is lapsed) and name the body's slot; nothing else is
// done with it.
func (a *API) goneErr(ctx context.Context, p *parsed) error {
	if a.Lapsed == nil {
		return nil
	}
	old, err := a.Lapsed.VerifyPortalAccess(p.AccessToken)
	if err != nil || subtle.ConstantTimeCompare([]byte(old.SessionID), []byte(p.SessionID)) != 1 {
		return nil
	}
	return a.Sessions.Ended(ctx, old.GroupID)
}
