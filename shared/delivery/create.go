package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/blobpath"
	"github.com/esign-svc/esign/shared/i18n"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/licence"
	"github.com/esign-svc/esign/shared/licensing"
	"github.com/esign-svc/esign/shared/pdf/pdfdoc"
	"github.com/esign-svc/esign/shared/pii"
	"github.com/esign-svc/esign/shared/tokens"
)

// ErrNoLibraryUpload is the 400 of modes sharepoint and both on a deployment without a
// document-library connection (the GRAPH_* settings).
var ErrNoLibraryUpload = apperr.Invalid("sharepoint_not_configured",
	apperr.Field("mode", "this service has no document-library connection: use secure-email"))

// CreateStore stores new delivery sessions and the plans of creates (deliverystore.Store).
type CreateStore interface {
	// Create stores a new session with its Start change. Errors: ErrExists when the deliveryId
	// is stored already; the store's.
	Create(ctx context.Context, s *Session, ch Change) error
	// BeginCreate claims key (unique in tenant) for one run of a create and returns the plan to
	// carry out and the run's id: want for a free key, the plan of an earlier run that did not
	// finish, or a Done plan to answer as it is. Errors: ErrKeyReused (the key's plan has
	// another Hash), ErrCreateInProgress (another run holds the key); the store's.
	BeginCreate(ctx context.Context, tenant, key string, want Plan, now time.Time) (Plan, string, error)
	// FinishCreate records how run ended: p.Done, or failed (a retry takes the plan over at
	// once instead of waiting out the run's lease).
	FinishCreate(ctx context.Context, tenant, key, run string, p Plan) error
}

// Documents tells whether a document blob exists (blobstore.Store).
type Documents interface {
	Exists(ctx context.Context, container, name string) (bool, error)
}

// Creator is the create-delivery use case (spec "Delivery"): the dispatcher's route and the
// render and batch jobs create delivery sessions through it, one per recipient.
type Creator struct {
	Store CreateStore
	Docs  Documents
	// CheckTarget validates a sharePointTarget for a file name (the Graph client's rules); nil:
	// this deployment has no library upload and modes sharepoint and both are refused.
	CheckTarget func(t Target, fileName string) error
	Tokens      *tokens.Codec
	Hasher      *pii.Hasher
	Cipher      *pii.Cipher
	PortalURL   string
	Now         func() time.Time
	// Licensing is asked after the request's checks, before the document is looked at
	// (DESIGN 19); nil: the offline licence alone.
	Licensing licensing.Validator
}

// Requester is who creates the deliveries: the tenant, the caller's id, the audit actor.
type Requester struct {
	TenantID string
	CallerID string
	Actor    kernel.Actor
}

// Created is the sessions of a create in recipient order, each with its link. The app queues
// each session's invitation (Mode.Emails) and upload (Mode.Uploads), except for a replay: the
// request that completed the create queued them with its answer, and queuing them again while
// its jobs run could send an invitation twice.
type Created struct {
	DeliveryIDs []string
	Links       []string
	ExpiresAt   time.Time
	// Replayed: an earlier request under the same key made these sessions; nothing was stored.
	Replayed bool
}

// Create validates the request and stores one session per recipient, all or nothing for the
// caller: it runs under key (the Idempotency-Key; "" derives one from the correlationId and the
// request) so that a retry after a failure part-way stores only the missing sessions and
// answers the same deliveryIds and links, and a repeat after success answers them again
// (Replayed). Errors: 400 naming the field at fault (validation, Idempotency-Key,
// invalid_blob_path also for another tenant's signed document, pdf_not_found,
// invalid_sharepoint_target, sharepoint_not_configured); 409 idempotency_key_reused,
// request_in_progress; the store's.
func (c *Creator) Create(ctx context.Context, by Requester, key string, req CreateRequest) (Created, error) {
	src, err := blobpath.Accept(&req, ContainerDocuments, ContainerSigned)
	if err != nil {
		return Created{}, err
	}
	if src, err = Source(src, by.TenantID); err != nil {
		return Created{}, err
	}
	// A request names only its own tenant's documents (DESIGN 14); a stored session whose path
	// predates the tenant folders is read back through SourceOf, which does not confine them.
	if src, err = blobpath.Tenant("pdfBlobPath", src, ContainerDocuments, by.TenantID); err != nil {
		return Created{}, err
	}
	if err := checkKey(key); err != nil {
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
	if err := licensing.Check(ctx, c.Licensing, by.TenantID, licence.FeatureDelivery, req.CorrelationID); err != nil {
		return Created{}, err
	}
	ok, err := c.Docs.Exists(ctx, src.Container, src.Name)
	if err != nil {
		return Created{}, err
	}
	if !ok {
		return Created{}, apperr.Invalid(pdfdoc.CodeNotFound, apperr.Field("pdfBlobPath", "no blob at this path"))
	}
	now := c.Now().UTC()
	hash, err := c.requestHash(by, &req)
	if err != nil {
		return Created{}, err
	}
	key = idempotencyKey(key, req.CorrelationID, hash)
	want := Plan{ID: uuid.NewString(), Hash: hash, CreatedAt: now, ExpiresAt: now.Add(time.Duration(*req.ExpiresInHours) * time.Hour)}
	plan, run, err := c.Store.BeginCreate(ctx, by.TenantID, key, want, now)
	if err != nil {
		return Created{}, err
	}
	out := Created{ExpiresAt: plan.ExpiresAt, Replayed: plan.Done}
	if !plan.Done {
		if err := c.carryOut(ctx, by, &req, plan, now); err != nil {
			c.failed(ctx, by.TenantID, key, run, plan)
			return Created{}, err
		}
		plan.Done = true
		if err := c.Store.FinishCreate(ctx, by.TenantID, key, run, plan); err != nil {
			return Created{}, err
		}
	}
	for i := range req.Recipients {
		id := plan.DeliveryID(i)
		link, err := c.link(id, plan)
		if err != nil {
			return Created{}, err
		}
		out.DeliveryIDs, out.Links = append(out.DeliveryIDs, id), append(out.Links, link)
	}
	return out, nil
}

// carryOut stores the plan's sessions that are not stored yet.
func (c *Creator) carryOut(ctx context.Context, by Requester, req *CreateRequest, plan Plan, now time.Time) error {
	for i, rc := range req.Recipients {
		s, err := c.newSession(plan.DeliveryID(i), req, rc, by, plan.ExpiresAt)
		if err != nil {
			return err
		}
		ch := Start(s, now)
		ch.By(by.Actor)
		if err := c.Store.Create(ctx, s, ch); err != nil && !errors.Is(err, ErrExists) {
			return err
		}
	}
	return nil
}

// failTimeout bounds recording a failed run, on a context that outlives the caller's.
const failTimeout = 10 * time.Second

// failed records that run did not finish its plan, so that a retry takes it over at once. When
// that fails too the retry waits out the run's lease (409 request_in_progress until then).
func (c *Creator) failed(ctx context.Context, tenant, key, run string, plan Plan) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), failTimeout)
	defer cancel()
	_ = c.Store.FinishCreate(ctx, tenant, key, run, plan)
}

// requestHash is the keyed hash (PII_HASH_KEY) of the caller and the normalised request: two
// requests with the same hash make the same sessions. The addresses reach it only through the
// keyed hash, so the stored plan holds nothing an address could be guessed from.
func (c *Creator) requestHash(by Requester, req *CreateRequest) (string, error) {
	b, err := json.Marshal(struct {
		Caller string         `json:"caller"`
		Req    *CreateRequest `json:"req"`
	}{by.CallerID, req})
	if err != nil {
		return "", apperr.Wrap(err, apperr.KindInternal, "request_hash", "could not hash the request")
	}
	return c.Hasher.Hash("delivery-create", string(b)), nil
}

func (c *Creator) newSession(id string, req *CreateRequest, rc Recipient, by Requester, expires time.Time) (*Session, error) {
	enc, err := c.Cipher.EncryptString(rc.Email, pii.AAD(id, "recipient"))
	if err != nil {
		return nil, apperr.Wrap(err, apperr.KindInternal, pii.CodeEncrypt, "could not protect a recipient's address")
	}
	s := &Session{
		DeliveryID: id, TenantID: by.TenantID, CreatedBy: by.CallerID, CorrelationID: req.CorrelationID,
		DocumentID: req.DocumentID, DocumentName: req.DocumentName, PDFBlobPath: req.PDFBlobPath, Mode: req.Mode,
		RecipientHash: c.Hasher.Email(rc.Email), RecipientEnc: enc, RecipientName: rc.Name, RecipientRole: rc.Role, RecipientLocale: i18n.Normalize(rc.Locale),
		RequesterOrg: req.RequesterOrg, Message: req.Message, RequireOTP: *req.RequireOTP, ExpiresAt: expires,
		Reminders: req.Reminders,
	}
	if req.Mode.Uploads() {
		t := *req.SharePointTarget
		s.SharePoint = &t
	}
	return s, nil
}

// link is {PortalURL}/deliver/{deliveryId}?t=<delivery access token expiring with the session,
// issued at the plan's time: every answer of the plan carries the same links>.
func (c *Creator) link(id string, plan Plan) (string, error) {
	tok, err := c.Tokens.IssueDelivery(tokens.Delivery{DeliveryID: id, ExpiresAt: plan.ExpiresAt, IssuedAt: plan.CreatedAt})
	if err != nil {
		return "", apperr.Wrap(err, apperr.KindInternal, tokens.CodeIssueFailed, "could not issue the delivery link")
	}
	return PortalLink(c.PortalURL, id, tok), nil
}
