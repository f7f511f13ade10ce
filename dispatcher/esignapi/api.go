// Package esignapi serves the requester-facing signing-session routes: create, status (by
// correlationId or by groupId), resend-invite, cancel, revoke and the erasure of a signer's
// e-mail. Every route authenticates an Entra ID JWT, checks the licence's esign feature and the
// caller's role, and sees only its own tenant's sessions (another tenant's session is a 404).
package esignapi

import (
	"net/http"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/dispatcher/guard"
	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/auth"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/licence"
	"github.com/esign-svc/esign/shared/tokens"
	"github.com/esign-svc/esign/shared/web"
)

// API holds what the routes need.
type API struct {
	Creator   *esign.Creator      // the create use case
	Sessions  *esign.Sessions     // the use cases on a stored session (cancel, revoke, resend, seal retry, erasure)
	Reads     *esign.SessionReads // the status reads
	Tokens    *tokens.Codec
	Verifier  *auth.Verifier
	Licence   *licence.Licence
	PortalURL string // portal base; links are {PortalURL}/sign?token=...
}

// Routes registers the routes on mux. Create, resend-invite and revoke queue notifications, so
// their functions are invoked (queue output "notify"); the others are forwarded.
func (a *API) Routes(mux *http.ServeMux) {
	mux.Handle("POST /api/esign/session", web.Handle(a.create))
	mux.Handle("GET /api/esign/session/{correlationId}/status", web.Handle(a.status))
	mux.Handle("GET /api/esign/session/by-group/{groupId}/status", web.Handle(a.statusByGroup))
	mux.Handle("POST /api/esign/session/{correlationId}/resend-invite", web.Handle(a.resend))
	mux.Handle("POST /api/esign/session/{groupId}/cancel", web.Handle(a.cancel))
	mux.Handle("POST /api/esign/session/{groupId}/revoke", web.Handle(a.revoke))
	mux.Handle("DELETE /api/esign/session/{groupId}/slots/{slotIndex}/email", web.Handle(a.eraseEmail))
}

// caller is the requester routes' check (guard.Gate): 401, then licence and role 403s.
func (a *API) caller(r *http.Request, roles ...string) (auth.Principal, error) {
	return guard.Gate{Verifier: a.Verifier, Licence: a.Licence, Feature: licence.FeatureEsign}.Caller(r, roles...)
}

// sessionCaller is the caller of a route on one session, /{groupId}/…, that takes no body: the
// JWT with one of roles and the esign licence, no body, and the path's groupId.
func (a *API) sessionCaller(r *http.Request, roles ...string) (auth.Principal, string, error) {
	p, err := a.caller(r, roles...)
	if err != nil {
		return auth.Principal{}, "", err
	}
	if err := web.NoBody(r); err != nil {
		return auth.Principal{}, "", err
	}
	groupID, err := groupIDParam(r)
	if err != nil {
		return auth.Principal{}, "", err
	}
	return p, groupID, nil
}

func actor(r *http.Request, p auth.Principal) esign.Actor {
	return esign.Actor{Kind: "initiator", ID: p.CallerID(), IP: web.ClientIP(r), UserAgent: web.UserAgent(r)}
}

// groupIDParam is the {groupId} of the path: a session's groupId is a UUID, so anything else is
// 400 naming groupId before any storage read (not a table-key error naming PartitionKey).
func groupIDParam(r *http.Request) (string, error) {
	groupID := r.PathValue("groupId")
	if _, err := uuid.Parse(groupID); err != nil || len(groupID) != 36 {
		return "", apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field("groupId", "must be the session's groupId (a UUID)"))
	}
	return groupID, nil
}

func (a *API) portalLink(s *esign.Session, sl *esign.Slot) (string, error) {
	return esign.PortalLink(a.Tokens, a.PortalURL, s, sl)
}
