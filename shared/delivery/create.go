package delivery

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/blobpath"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/pdf/pdfdoc"
	"github.com/esign-svc/esign/shared/pii"
	"github.com/esign-svc/esign/shared/tokens"
)

// ContainerDocuments is the one container pdfBlobPath may name.
const ContainerDocuments = "documents"

// ErrNoLibraryUpload is the 400 of modes sharepoint and both on a deployment without a
// document-library connection (the GRAPH_* settings).
var ErrNoLibraryUpload = apperr.Invalid("sharepoint_not_configured",
	apperr.Field("mode", "this service has no document-library connection: use secure-email"))

// SessionCreator stores a new delivery session (deliverystore.Store).
type SessionCreator interface {
	Create(ctx context.Context, s *Session, ch Change) error
}

// Documents tells whether a document blob exists (blobstore.Store).
type Documents interface {
	Exists(ctx context.Context, container, name string) (bool, error)
}

// Creator is the create-delivery use case (spec "Delivery"): the dispatcher's route and the
// render and batch jobs create delivery sessions through it, one per recipient.
type Creator struct {
	Store SessionCreator
	Docs  Documents
	// CheckTarget validates a sharePointTarget for a file name (the Graph client's rules); nil:
	// this deployment has no library upload and modes sharepoint and both are refused.
	CheckTarget func(t Target, fileName string) error
	Tokens      *tokens.Codec
	Hasher      *pii.Hasher
	Cipher      *pii.Cipher
	PortalURL   string
	Now         func() time.Time
}

// Requester is who creates the deliveries: the tenant, the caller's id, the audit actor.
type Requester struct {
	TenantID string
	CallerID string
	Actor    kernel.Actor
}

// Created is the stored sessions in recipient order with each one's link. The app queues each
// session's invitation (Mode.Emails) and upload (Mode.Uploads).
type Created struct {
	Sessions  []*Session
	Links     []string
	ExpiresAt time.Time
}

// Create validates the request and stores one session per recipient. Errors: 400 naming the
// field at fault (validation, pdf_not_found, invalid_sharepoint_target,
// sharepoint_not_configured); the store's (sessions created before a storage failure stay).
func (c *Creator) Create(ctx context.Context, by Requester, req CreateRequest) (Created, error) {
	src, err := blobpath.Accept(&req, ContainerDocuments)
	if err != nil {
		return Created{}, err
	}
	if req.Mode.Uploads() {
		if c.CheckTarget == nil {
			return Created{}, ErrNoLibraryUpload
		}
		if err := c.CheckTarget(*req.SharePointTarget, req.DocumentName); err != nil {
			return Created{}, err
		}
	}
	ok, err := c.Docs.Exists(ctx, src.Container, src.Name)
	if err != nil {
		return Created{}, err
	}
	if !ok {
		return Created{}, apperr.Invalid(pdfdoc.CodeNotFound, apperr.Field("pdfBlobPath", "no blob at this path"))
	}
	now := c.Now().UTC()
	out := Created{ExpiresAt: now.Add(time.Duration(*req.ExpiresInHours) * time.Hour)}
	for _, rc := range req.Recipients {
		s, err := c.newSession(&req, rc, by, out.ExpiresAt)
		if err != nil {
			return out, err
		}
		ch := Start(s, now)
		ch.By(by.Actor)
		if err := c.Store.Create(ctx, s, ch); err != nil {
			return out, err
		}
		link, err := c.link(s)
		if err != nil {
			return out, err
		}
		out.Sessions, out.Links = append(out.Sessions, s), append(out.Links, link)
	}
	return out, nil
}

func (c *Creator) newSession(req *CreateRequest, rc Recipient, by Requester, expires time.Time) (*Session, error) {
	id := uuid.NewString()
	enc, err := c.Cipher.EncryptString(rc.Email, pii.AAD(id, "recipient"))
	if err != nil {
		return nil, apperr.Wrap(err, apperr.KindInternal, pii.CodeEncrypt, "could not protect a recipient's address")
	}
	s := &Session{
		DeliveryID: id, TenantID: by.TenantID, CreatedBy: by.CallerID, CorrelationID: req.CorrelationID,
		DocumentID: req.DocumentID, DocumentName: req.DocumentName, PDFBlobPath: req.PDFBlobPath, Mode: req.Mode,
		RecipientHash: c.Hasher.Email(rc.Email), RecipientEnc: enc, RecipientName: rc.Name, RecipientRole: rc.Role,
		RequesterOrg: req.RequesterOrg, Message: req.Message, RequireOTP: *req.RequireOTP, ExpiresAt: expires,
	}
	if req.Mode.Uploads() {
		t := *req.SharePointTarget
		s.SharePoint = &t
	}
	return s, nil
}

// link is {PortalURL}/deliver/{deliveryId}?t=<delivery access token expiring with the session>.
func (c *Creator) link(s *Session) (string, error) {
	tok, err := c.Tokens.IssueDelivery(tokens.Delivery{DeliveryID: s.DeliveryID, ExpiresAt: s.ExpiresAt})
	if err != nil {
		return "", apperr.Wrap(err, apperr.KindInternal, tokens.CodeIssueFailed, "could not issue the delivery link")
	}
	return PortalLink(c.PortalURL, s.DeliveryID, tok), nil
}
