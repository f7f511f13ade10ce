package deliveryapi

import (
	"net/http"
	"net/url"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/auth"
	"github.com/esign-svc/esign/shared/azure/blobstore"
	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/graph"
	"github.com/esign-svc/esign/shared/pdf/pdfdoc"
	"github.com/esign-svc/esign/shared/pii"
	"github.com/esign-svc/esign/shared/tokens"
	"github.com/esign-svc/esign/shared/web"
)

// ErrNoLibraryUpload is the 400 of modes sharepoint and both on a deployment without the
// GRAPH_* settings.
var ErrNoLibraryUpload = apperr.Invalid("sharepoint_not_configured",
	apperr.Field("mode", "this service has no document-library connection: use secure-email"))

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

// create is POST /api/delivery: one session per recipient, each with its own link; the
// invitation e-mails (secure-email, both) and library uploads (sharepoint, both) are queued.
// Errors: 401; 403 licence or role; 400 naming the field at fault (pdf_not_found when the
// blob is missing, invalid_sharepoint_target, sharepoint_not_configured); 413 body.
func (a *API) create(w http.ResponseWriter, r *http.Request) error {
	p, err := a.caller(r, auth.RoleInitiator)
	if err != nil {
		return err
	}
	var req delivery.CreateRequest
	if err := web.DecodeJSON(r, web.MaxJSONBody, &req); err != nil {
		return err
	}
	if err := req.Validate(); err != nil {
		return err
	}
	req.Normalize()
	src, err := blobstore.ParseFieldPath("pdfBlobPath", req.PDFBlobPath)
	if err != nil {
		return err
	}
	if err := src.RequireContainer("pdfBlobPath", ContainerDocuments); err != nil {
		return err
	}
	if req.Mode.Uploads() {
		if a.Graph == nil {
			return ErrNoLibraryUpload
		}
		t := req.SharePointTarget
		if err := a.Graph.Validate(graph.Target{SiteURL: t.SiteURL, LibraryPath: t.LibraryPath, FolderPath: t.FolderPath}, req.DocumentName); err != nil {
			return err
		}
	}
	if _, err := a.Blobs.Properties(r.Context(), src.Container, src.Name); err != nil {
		if apperr.KindOf(err) == apperr.KindNotFound {
			return apperr.Invalid(pdfdoc.CodeNotFound, apperr.Field("pdfBlobPath", "no blob at this path"))
		}
		return err
	}

	now := a.now()
	expires := now.Add(time.Duration(*req.ExpiresInHours) * time.Hour)
	resp := createResponse{CorrelationID: req.CorrelationID, ExpiresAt: expires.Format(time.RFC3339Nano)}
	who := initiator(r, p)
	for _, rc := range req.Recipients {
		s, err := a.newSession(&req, rc, p, now, expires)
		if err != nil {
			return err
		}
		ch := delivery.Start(s, now)
		ch.By(who)
		if err := a.Store.Create(r.Context(), s, ch); err != nil {
			return err
		}
		link, err := a.link(s)
		if err != nil {
			return err
		}
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
		resp.Sessions = append(resp.Sessions, createdSession{DeliveryID: s.DeliveryID, Recipient: rc.Email, PortalURL: link})
	}
	w.Header().Set("Location", "/api/delivery-sessions?correlationId="+url.QueryEscape(req.CorrelationID))
	return web.JSON(w, http.StatusCreated, resp)
}

func (a *API) newSession(req *delivery.CreateRequest, rc delivery.Recipient, p auth.Principal, now, expires time.Time) (*delivery.Session, error) {
	id := uuid.NewString()
	enc, err := a.Cipher.EncryptString(rc.Email, pii.AAD(id, "recipient"))
	if err != nil {
		return nil, apperr.Wrap(err, apperr.KindInternal, pii.CodeEncrypt, "could not protect a recipient's address")
	}
	s := &delivery.Session{
		DeliveryID: id, TenantID: p.TenantID, CreatedBy: p.CallerID(), CorrelationID: req.CorrelationID,
		DocumentID: req.DocumentID, DocumentName: req.DocumentName, PDFBlobPath: req.PDFBlobPath, Mode: req.Mode,
		RecipientHash: a.Hasher.Email(rc.Email), RecipientEnc: enc, RecipientName: rc.Name, RecipientRole: rc.Role,
		RequesterOrg: req.RequesterOrg, Message: req.Message, RequireOTP: *req.RequireOTP, ExpiresAt: expires,
	}
	if req.Mode.Uploads() {
		t := *req.SharePointTarget
		s.SharePoint = &t
	}
	return s, nil
}

// link is {PortalURL}/deliver/{deliveryId}?t=<delivery access token expiring with the session>.
func (a *API) link(s *delivery.Session) (string, error) {
	tok, err := a.Tokens.IssueDelivery(tokens.Delivery{DeliveryID: s.DeliveryID, ExpiresAt: s.ExpiresAt})
	if err != nil {
		return "", apperr.Wrap(err, apperr.KindInternal, tokens.CodeIssueFailed, "could not issue the delivery link")
	}
	return delivery.PortalLink(a.PortalURL, s.DeliveryID, tok), nil
}
