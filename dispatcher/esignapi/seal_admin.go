package esignapi

import (
	"net/http"

	"github.com/esign-svc/esign/shared/auth"
	"github.com/esign-svc/esign/shared/web"
)

// PathSealRetry is the admin route that re-queues a failed or stuck seal (function RetrySeal,
// invoked: queue output "seal").
const PathSealRetry = "/api/esign/session/{groupId}/seal/retry"

// SealAdminRoutes registers the admin seal routes on mux.
func (a *API) SealAdminRoutes(mux *http.ServeMux) {
	mux.Handle("POST "+PathSealRetry, web.Handle(a.retrySeal))
}

type sealRetryResponse struct {
	GroupID string `json:"groupId"`
	State   string `json:"state"`
	Attempt int    `json:"attempt"`
}

// retrySeal is POST /api/esign/session/{groupId}/seal/retry (role Service.Admin): for a session
// of the caller's tenant in sealing whose last seal failed or that is stuck (esign.RequeueSeal),
// it clears the seal error, records seal.requeued {attempt} in one transaction with the session
// ETag, and queues the seal message with that attempt on the "seal" output. The processor's seal
// job is idempotent, so a re-queue racing a late original message seals once. It takes no
// body: none, empty or {} (any member is 400 body_not_allowed). Answers 202 {groupId, state,
// attempt}. Errors: 400 invalid_request (groupId not a UUID); 401; 403 without the role or the
// esign licence; 404 unknown session or another tenant's; 409 session_already_complete,
// session_not_sealing, seal_not_stuck.
func (a *API) retrySeal(w http.ResponseWriter, r *http.Request) error {
	p, groupID, err := a.sessionCaller(r, auth.RoleAdmin)
	if err != nil {
		return err
	}
	who := actor(r, p)
	who.Kind = "admin"
	s, attempt, err := a.Sessions.RetrySeal(r.Context(), p.TenantID, groupID, who)
	if err != nil {
		return err
	}
	return web.JSON(w, http.StatusAccepted, sealRetryResponse{GroupID: s.GroupID, State: string(s.State), Attempt: attempt})
}
