package deliveryapi

import (
	"net/http"
	"net/url"
	"time"

	"github.com/esign-svc/esign/shared/auth"
	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/web"
)

type createdSession struct {
	DeliveryID string `json:"deliveryId"`
	Recipient  string `json:"recipient"`
	PortalURL  string `json:"portalUrl"`
}

type createResponse struct {
	CorrelationID string           `json:"correlationId"`
	ExpiresAt     string           `json:"expiresAt"`
	Sessions      []createdSession `json:"sessions"`
}

// create is POST /api/delivery: delivery.Creator makes one session per recipient, each with its
// own link; the invitation e-mails (secure-email, both) and library uploads (sharepoint, both)
// are queued. Errors: 401; 403 licence or role; 400 naming the field at fault (pdf_not_found when
// the blob is missing, invalid_sharepoint_target, sharepoint_not_configured); 413 body.
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
	c, err := a.Creator.Create(r.Context(), delivery.Requester{TenantID: p.TenantID, CallerID: who.ID, Actor: who}, req)
	if err != nil {
		return err
	}
	resp := createResponse{CorrelationID: req.CorrelationID, ExpiresAt: c.ExpiresAt.Format(time.RFC3339Nano)}
	for i, s := range c.Sessions {
		if s.Mode.Emails() {
			if err := funcproto.AddOutput(r.Context(), BindingInvite, delivery.InviteMessage{DeliveryID: s.DeliveryID, TenantID: s.TenantID}); err != nil {
				return err
			}
		}
		if s.Mode.Uploads() {
			if err := funcproto.AddOutput(r.Context(), BindingUpload, delivery.UploadMessage{DeliveryID: s.DeliveryID, TenantID: s.TenantID}); err != nil {
				return err
			}
		}
		resp.Sessions = append(resp.Sessions, createdSession{DeliveryID: s.DeliveryID, Recipient: req.Recipients[i].Email, PortalURL: c.Links[i]})
	}
	w.Header().Set("Location", "/api/delivery-sessions?correlationId="+url.QueryEscape(req.CorrelationID))
	return web.JSON(w, http.StatusCreated, resp)
}
