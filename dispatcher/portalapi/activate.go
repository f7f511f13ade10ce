package portalapi

import (
	"net/http"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/tokens"
	"github.com/esign-svc/esign/shared/web"
)

// Errors of activation (esign.Sessions.Activate's).
var (
	ErrLinkUsed     = esign.ErrLinkUsed
	ErrLinkReplaced = esign.ErrLinkReplaced
)

type activateRequest struct {
	Token string `json:"token"`
}

// activate is POST /api/esign/portal/activate: it consumes the portalUrl's single-use slot
// token, records the activation (the session goes from pending to in_progress) and answers
// what the portal shows with a fresh access token. Errors: 400 without a token; 401 for a
// bad, expired, used (link_used) or replaced (link_replaced) link; 410 once the session has
// expired or was cancelled; 409 once it is sealing or complete, or when the slot is closed or
// (sequential) not yet invited.
func (a *API) activate(w http.ResponseWriter, r *http.Request) error {
	var req activateRequest
	if err := web.DecodeJSON(r, web.MaxJSONBody, &req); err != nil {
		return err
	}
	if req.Token == "" || len(req.Token) > tokens.MaxTokenLen {
		return apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field("token", "the token of the signing link is required"))
	}
	claims, err := a.Tokens.VerifySlot(req.Token)
	if e, ok := apperr.As(err); ok && e.Code == tokens.CodeExpired && a.Lapsed != nil {
		if old, lerr := a.Lapsed.VerifySlot(req.Token); lerr == nil {
			if gone := a.goneErr(r.Context(), old.GroupID); gone != nil {
				return gone
			}
		}
	}
	if err != nil {
		return err
	}
	s, sl, err := a.Sessions.Activate(r.Context(), claims, device(r))
	if err != nil {
		return err
	}
	tok, issued, err := a.Tokens.IssuePortalAccess(tokens.PortalAccess{GroupID: s.GroupID, SlotIndex: sl.Index,
		SessionID: sl.SessionID, Generation: sl.Generation, SessionExpiresAt: s.ExpiresAt})
	if err != nil {
		return apperr.Wrap(err, apperr.KindInternal, tokens.CodeIssueFailed, "could not issue the access token")
	}
	return web.JSON(w, http.StatusOK, viewOf(s, sl, tok, issued, false, viewLanguage(r, sl)))
}

// session is GET /api/esign/portal/session: what activate answers, consuming nothing, with a
// refreshed access token. A view-only (secondary) token may read it. Errors: 401 without a
// valid token; 410 ended; 409 sealing or complete.
func (a *API) session(w http.ResponseWriter, r *http.Request) error {
	if err := web.NoBody(r); err != nil {
		return err
	}
	tok, err := bearer(r)
	if err != nil {
		return err
	}
	acc, err := a.authorize(r.Context(), tok)
	if err != nil {
		return err
	}
	next, issued, err := a.refresh(acc.Claims)
	if err != nil {
		return err
	}
	return web.JSON(w, http.StatusOK, viewOf(acc.Session, acc.Slot, next, issued, acc.Secondary, viewLanguage(r, acc.Slot)))
}
