package esignapi

import (
	"net/http"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/auth"
	"github.com/esign-svc/esign/shared/effects"
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
	p, err := a.caller(r, auth.RoleInitiator)
	if err != nil {
		return err
	}
	if err := web.NoBody(r); err != nil {
		return err
	}
	groupID, err := groupIDParam(r)
	if err != nil {
		return err
	}
	who := actor(r, p)
	s, slots, ch, err := a.apply(r.Context(), p.TenantID, groupID, func(s *esign.Session, slots []esign.Slot) (esign.Change, error) {
		ch, err := esign.Cancel(s, a.Now().UTC(), reason, who.ID)
		ch.By(who)
		return ch, err
	})
	if err != nil {
		return err
	}
	if err := effects.Emit(r.Context(), s, slots, ch, false); err != nil {
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
	groupID, err := a.Store.GroupByCorrelation(r.Context(), p.TenantID, r.PathValue("correlationId"))
	if err != nil {
		return err
	}
	who := actor(r, p)
	s, slots, ch, err := a.apply(r.Context(), p.TenantID, groupID, func(s *esign.Session, slots []esign.Slot) (esign.Change, error) {
		now := a.Now().UTC()
		if err := esign.CheckLive(s, now); err != nil {
			return esign.Change{}, err
		}
		var all esign.Change
		for i := range slots {
			if req.SlotIndex != nil && *req.SlotIndex != i {
				continue
			}
			ch, err := esign.Reinvite(s, slots, i, now)
			if err != nil {
				if req.SlotIndex != nil {
					return esign.Change{}, err
				}
				continue // not eligible: skipped when resending to all
			}
			slots[i].LinkJTI, slots[i].LinkUsed = uuid.NewString(), false
			all.Slots = append(all.Slots, ch.Slots...)
			all.Events = append(all.Events, ch.Events...)
			all.Effects = append(all.Effects, ch.Effects...)
		}
		if req.SlotIndex != nil && (*req.SlotIndex < 0 || *req.SlotIndex >= len(slots)) {
			return esign.Change{}, apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field("slotIndex", "no such slot"))
		}
		if len(all.Effects) == 0 {
			return all, apperr.New(apperr.KindConflict, "nothing_to_resend",
				"no slot is activated, viewed or otp_verified; pending slots still hold their unused link")
		}
		all.By(who)
		return all, nil
	})
	if err != nil {
		return err
	}
	if err := effects.Emit(r.Context(), s, slots, ch, true); err != nil {
		return err
	}
	resp := resendResponse{GroupID: s.GroupID}
	for _, i := range ch.Slots {
		link, err := a.portalLink(s, &slots[i])
		if err != nil {
			return err
		}
		resp.Resent = append(resp.Resent, SlotAnswer{SlotIndex: i, SessionID: slots[i].SessionID, PortalURL: link})
	}
	return web.JSON(w, http.StatusOK, resp)
}
