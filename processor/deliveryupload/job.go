// Package deliveryupload is the processor's side of secure delivery (spec "Delivery"): the
// DeliveryUpload queue job uploads a delivery's PDF to the customer's SharePoint document
// library with shared/graph (modes sharepoint and both) and records delivery.uploaded
// {webUrl, itemId} or delivery.upload_failed {code} on the session (uploadState / uploadError
// in the requester's summary; a Graph 403 is graph_forbidden: the app registration lacks
// admin-consented write access). DeliveryInvite sends the recipient's invitation e-mail (modes
// secure-email and both) with the portal link, the document's name, the requester's
// organisation and message, and records delivery.invited. Each queue has a poison handler that
// records the final failure.
//
// Idempotency: an upload already recorded (uploadState uploaded) and an invitation already
// recorded (sentAt set) are acknowledged without work. An invitation is claimed before it is
// sent (row "sent-invite" of the delivery's partition, marked sent with delivery.invited in one
// transaction), so of two senders at once (a redelivered message, the invitation reconciler)
// one sends and the other retries later. A worker dying between Graph's answer (or the
// provider's acceptance) and the record repeats that work: the library then holds a renamed
// second copy (Graph's conflictBehavior rename), or, once the claim's lease has passed, the
// recipient gets the invitation twice (the provider gets a dedupe id to suppress it where it
// can).
//
// Nothing here logs an address, a token or a link.
package deliveryupload

import (
	"context"
	"errors"
	"time"

	"github.com/esign-svc/esign/processor/internal/jobkit"
	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/azure/blobstore"
	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/graph"
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/pii"
	"github.com/esign-svc/esign/shared/tokens"
)

// Function names (the folders under processor/functions).
const (
	FunctionName             = "DeliveryUpload"
	PoisonFunctionName       = "DeliveryUploadPoison"
	InviteFunctionName       = "DeliveryInvite"
	InvitePoisonFunctionName = "DeliveryInvitePoison"
)

// Deps are the job's dependencies. Deliveries, Tokens, Cipher, Email and PortalURL are
// required. Graph is the document-library client the app built from its GRAPH_* settings; nil
// when they are not set (uploads then fail with graph_not_configured).
type Deps struct {
	Deliveries *delivery.Deliveries // the use cases on a stored session
	Blobs      *blobstore.Store
	Graph      *graph.Client
	Tokens     *tokens.Codec
	Cipher     *pii.Cipher
	Email      notify.Sender
	PortalURL  string
	Now        func() time.Time // default time.Now
}

// Job handles the delivery queues.
type Job struct {
	deliveries *delivery.Deliveries
	blobs      *blobstore.Store
	graph      *graph.Client // nil: no GRAPH_* settings; uploads fail with graph_not_configured
	tokens     *tokens.Codec
	cipher     *pii.Cipher
	email      notify.Sender
	portalURL  string
	now        func() time.Time
}

// New makes the job. It does no I/O. Errors: a missing dependency.
func New(d Deps) (*Job, error) {
	if d.Deliveries == nil || d.Tokens == nil || d.Cipher == nil || d.Email == nil || d.PortalURL == "" {
		return nil, errors.New("deliveryupload: Deliveries, Tokens, Cipher, Email and PortalURL are required")
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Job{deliveries: d.Deliveries, blobs: d.Blobs, graph: d.Graph, tokens: d.Tokens, cipher: d.Cipher, email: d.Email,
		portalURL: d.PortalURL, now: d.Now}, nil
}

// Functions is the job's function table: the upload and invitation queues and their poison queues.
func (j *Job) Functions() []jobkit.Function {
	return []jobkit.Function{
		{Name: FunctionName, Handler: funcproto.QueueHandler(j.HandleUpload)},
		{Name: PoisonFunctionName, Handler: funcproto.QueueHandler(j.HandleUploadPoison)},
		{Name: InviteFunctionName, Handler: funcproto.QueueHandler(j.HandleInvite)},
		{Name: InvitePoisonFunctionName, Handler: funcproto.QueueHandler(j.HandleInvitePoison)},
	}
}

var system = delivery.Actor{Kind: "system", ID: "processor"}

// load reads the message's session: a missing session or another tenant's is permanent.
func (j *Job) load(ctx context.Context, id, tenant string) (*delivery.Session, error) {
	if id == "" {
		return nil, funcproto.Permanent(apperr.Invalid(funcproto.CodeInvalidMessage, apperr.Field("deliveryId", "is required")))
	}
	s, err := j.deliveries.ForMessage(ctx, tenant, id)
	switch {
	case errors.Is(err, delivery.ErrTenantMismatch):
		return nil, funcproto.TenantMismatch("delivery")
	case apperr.KindOf(err) == apperr.KindNotFound:
		return nil, funcproto.Permanent(err)
	}
	return s, err
}

func codeOf(err error) string {
	if e, ok := apperr.As(err); ok && e.Code != "" {
		return e.Code
	}
	return "upload_failed"
}

// detailOf is a failure's caller-safe detail (apperr details carry no personal data or secret).
func detailOf(err error) string {
	if e, ok := apperr.As(err); ok && e.Kind != apperr.KindInternal {
		return e.Detail
	}
	return "the upload failed"
}
