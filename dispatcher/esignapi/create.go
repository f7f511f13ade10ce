package esignapi

import (
	"net/http"
	"time"

	"github.com/esign-svc/esign/shared/auth"
	"github.com/esign-svc/esign/shared/effects"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/web"
)

// SlotAnswer is one slot of a SessionAnswer.
type SlotAnswer struct {
	SlotIndex int    `json:"slotIndex"`
	SessionID string `json:"sessionId"`
	PortalURL string `json:"portalUrl"`
}

// SessionAnswer is the create-session answer (also inside the render answer).
type SessionAnswer struct {
	GroupID       string       `json:"groupId"`
	CorrelationID string       `json:"correlationId"`
	State         string       `json:"state"`
	ExpiresAt     string       `json:"expiresAt"`
	Slots         []SlotAnswer `json:"slots"`
}

// create is POST /api/esign/session: decode, authorise, esign.Creator, queue the invitations,
// answer 201.
func (a *API) create(w http.ResponseWriter, r *http.Request) error {
	p, err := a.caller(r, auth.RoleInitiator)
	if err != nil {
		return err
	}
	var req esign.CreateRequest
	if err := web.DecodeJSON(r, web.MaxJSONBody, &req); err != nil {
		return err
	}
	c, err := a.Creator.Create(r.Context(), p.TenantID, actor(r, p), req)
	if err != nil {
		return err
	}
	if err := effects.Emit(r.Context(), c.Session, c.Slots, c.Change, false); err != nil {
		return err
	}
	w.Header().Set("Location", "/api/esign/session/"+c.Session.CorrelationID+"/status")
	return web.JSON(w, http.StatusCreated, Answer(c))
}

// Answer is the create answer of c (also inside the render answer).
func Answer(c esign.Created) SessionAnswer {
	s := c.Session
	resp := SessionAnswer{GroupID: s.GroupID, CorrelationID: s.CorrelationID, State: string(s.State),
		ExpiresAt: s.ExpiresAt.Format(time.RFC3339Nano)}
	for i := range c.Slots {
		resp.Slots = append(resp.Slots, SlotAnswer{SlotIndex: i, SessionID: c.Slots[i].SessionID, PortalURL: c.Links[i]})
	}
	return resp
}
