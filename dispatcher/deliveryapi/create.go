package deliveryapi

import (
	"net/http"
	"net/url"
	"time"

	"github.com/esign-svc/esign/shared/auth"
	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/effects"
	"github.com/esign-svc/esign/shared/web"
)

// SessionLink is one session of a DeliveryAnswer.
type SessionLink struct {
	DeliveryID string `json:"deliveryId"`
	Recipient  string `json:"recipient"`
	PortalURL  string `json:"portalUrl"`
}

// DeliveryAnswer is the create answer (also inside the render answer).
type DeliveryAnswer struct {
	CorrelationID string        `json:"correlationId"`
	ExpiresAt     string        `json:"expiresAt"`
	Sessions      []SessionLink `json:"sessions"`
}

// Idempotency headers of POST /api/delivery: the caller's key, and the mark of a replayed answer.
const (
	HeaderIdempotencyKey = "Idempotency-Key"
	HeaderReplayed       = "Idempotent-Replayed"
)

// Answer is the create answer of c, whose sessions are for recipients in order.
func Answer(correlationID string, c delivery.Created, recipients []string) DeliveryAnswer {
	resp := DeliveryAnswer{CorrelationID: correlationID, ExpiresAt: c.ExpiresAt.Format(time.RFC3339Nano)}
	for i, id := range c.DeliveryIDs {
		resp.Sessions = append(resp.Sessions, SessionLink{DeliveryID: id, Recipient: recipients[i], PortalURL: c.Links[i]})
	}
	return resp
}

// create is POST /api/delivery: delivery.Creator makes one session per recipient, each with its
// own link, all or nothing under the request's idempotency key (the Idempotency-Key header, or
// one derived from the correlationId and the body); the invitation e-mails (secure-email, both)
// and library uploads (sharepoint, both) are queued. 201 when this request completed the
// create; 200 with Idempotent-Replayed: true and the same body when an earlier one did (nothing
// is queued again). Errors: 401; 403 licence or role; 400 naming the field at fault
// (pdf_not_found when the blob is missing, invalid_sharepoint_target, sharepoint_not_configured,
// a bad Idempotency-Key); 409 idempotency_key_reused, request_in_progress; 413 body.
func (a *API) create(w http.ResponseWriter, r *http.Request) error {
	p, err := a.caller(r, auth.RoleInitiator)
	if err != nil {
		return err
	}
	var req delivery.CreateRequest
	if err := web.DecodeJSON(r, web.MaxJSONBody, &req); err != nil {
		return err
	}
	who := initiator(r, p)
	by := delivery.Requester{TenantID: p.TenantID, CallerID: who.ID, Actor: who}
	c, err := a.Creator.Create(r.Context(), by, r.Header.Get(HeaderIdempotencyKey), req)
	if err != nil {
		return err
	}
	if err := effects.EmitDeliveries(r.Context(), c, req.Mode, p.TenantID, a.Meter); err != nil {
		return err
	}
	recipients := make([]string, len(req.Recipients))
	for i, rc := range req.Recipients {
		recipients[i] = rc.Email
	}
	resp := Answer(req.CorrelationID, c, recipients)
	w.Header().Set("Location", "/api/delivery-sessions?correlationId="+url.QueryEscape(req.CorrelationID))
	status := http.StatusCreated
	if c.Replayed {
		status = http.StatusOK
		w.Header().Set(HeaderReplayed, "true")
	}
	return web.JSON(w, status, resp)
}
