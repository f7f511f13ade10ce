package esignapi

import (
	"net/http"

	"github.com/esign-svc/esign/shared/auth"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/web"
)

type lifecycleResponse struct {
	GroupID      string `json:"groupId"`
	State        string `json:"state"`
	CancelReason string `json:"cancelReason,omitempty"`
}

// cancel is POST /api/esign/session/{groupId}/cancel.
func (a *API) cancel(w http.ResponseWriter, r *http.Request) error {
	return a.end(w, r, esign.ReasonCancelled)
}

// revoke is POST /api/esign/session/{groupId}/revoke: like cancel, and every link and access
// token of the session stops working at once (each route checks the session's state), and the
// requester gets the revoke notice.
func (a *API) revoke(w http.ResponseWriter, r *http.Request) error {
	return a.end(w, r, esign.ReasonRevoked)
}

func (a *API) end(w http.ResponseWriter, r *http.Request, reason esign.CancelReason) error {
	p, groupID, err := a.sessionCaller(r, auth.RoleInitiator)
	if err != nil {
		return err
	}
	s, err := a.Sessions.End(r.Context(), p.TenantID, groupID, reason, actor(r, p))
	if err != nil {
		return err
	}
	return web.JSON(w, http.StatusOK, lifecycleResponse{GroupID: s.GroupID, State: string(s.State), CancelReason: string(s.CancelReason)})
}

type resendRequest struct {
	SlotIndex *int `json:"slotIndex,omitempty"`
}

type resendResponse struct {
	GroupID string       `json:"groupId"`
	Resent  []SlotAnswer `json:"resent"`
}

// resend is POST /api/esign/session/{correlationId}/resend-invite: a fresh single-use link for
// every slot (or the one named by slotIndex) that is activated, viewed or otp_verified in a live
// session; the earlier link of those slots stops working and the access tokens it gave become
// view-only (esign.Reinvite begins the slot's next device generation). An expired session is 410 and nothing
// is sent; a live session with no such slot is 409.
func (a *API) resend(w http.ResponseWriter, r *http.Request) error {
	p, err := a.caller(r, auth.RoleInitiator)
	if err != nil {
		return err
	}
	var req resendRequest
	if err := web.DecodeOptionalJSON(r, web.MaxJSONBody, &req); err != nil {
		return err
	}
	s, slots, resent, err := a.Sessions.Resend(r.Context(), p.TenantID, r.PathValue("correlationId"), req.SlotIndex, actor(r, p))
	if err != nil {
		return err
	}
	resp := resendResponse{GroupID: s.GroupID}
	for _, i := range resent {
		link, err := a.portalLink(s, &slots[i])
		if err != nil {
			return err
		}
		resp.Resent = append(resp.Resent, SlotAnswer{SlotIndex: i, SessionID: slots[i].SessionID, PortalURL: link})
	}
	return web.JSON(w, http.StatusOK, resp)
}
