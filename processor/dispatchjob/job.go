// Package dispatchjob is the processor's half of governed batch dispatch (DESIGN 9): the
// low-priority dispatch queue moves a queued batch to processing and fans its ready records out
// in pages; a record job renders one record into documents/<tid>/dispatch/<batchId>/<fileName>.pdf
// (its own correlationId, a document row whose referenceId is the batch) and, with
// deliveryConfig.mode secure-email, makes one delivery session per recipientEmail; the last
// record's change asks for the finish, which merges (combined) or bundles (zipBundle) the PDFs
// and ends the batch completed or partially-failed; the notice job e-mails the approvers and the
// submitter, each notice once.
//
// Every read and transition of a batch is a method of the batch use cases (dispatch.Batches):
// the job never reaches the store itself. Counters are the batch store's: a record's outcome
// and the batch's counters are written in one transaction, so a redelivered record message
// changes nothing and concurrent record jobs never lose a count.
package dispatchjob

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/esign-svc/esign/processor/internal/jobkit"
	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/azure/blobstore"
	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/dispatch"
	"github.com/esign-svc/esign/shared/document"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/licence"
	"github.com/esign-svc/esign/shared/licensing"
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/pii"
	"github.com/esign-svc/esign/shared/render"
	"github.com/esign-svc/esign/shared/template"
)

// Function names (processor/functions/<Name>/function.json).
const (
	FunctionDispatch = "Dispatch"
	// FunctionDispatchPoison and FunctionNotifyPoison give a fan-out or a notice the host gave
	// up on one more run of the same (idempotent) handler: a fan-out sends only records still
	// pending, a notice is claimed once.
	FunctionDispatchPoison = "DispatchPoison"
	FunctionNotifyPoison   = "DispatchNotifyPoison"
	FunctionRecord         = "DispatchRecord"
	FunctionRecordPoison   = "DispatchRecordPoison"
	FunctionFinish         = "DispatchFinish"
	FunctionFinishPoison   = "DispatchFinishPoison"
	FunctionNotify         = "DispatchNotify"
)

// The functions' outputs are declared in shared/queues: Dispatch writes queues.DispatchRecord,
// queues.Dispatch (the next fan-out page) and queues.DispatchFinish; DispatchRecord(Poison)
// queues.DispatchFinish and DispatchRecord queues.DeliveryInvite; DispatchFinish(Poison)
// queues.DispatchNotify.
const (
	ContainerBundle = "bundles"             // the ZIP bundles (bundles/<batchId>.zip)
	PageSize        = 500                   // records fanned out by one Dispatch invocation
	combinedName    = dispatch.CombinedName // documents/<tid>/dispatch/<batchId>/combined.pdf
)

// Blobs reads the record PDFs and writes the combined PDF and the bundle (blobstore.Store).
type Blobs interface {
	Open(ctx context.Context, container, name string) (io.ReadCloser, blobstore.Props, error)
	Put(ctx context.Context, container, name string, r io.Reader, contentType string, metadata map[string]string) (string, error)
	EnsureContainer(ctx context.Context, name string) error
}

// Producer renders a record into its document (render.Renderer).
type Producer interface {
	Produce(ctx context.Context, pkg *template.Package, record map[string]any, d *document.Document) (*document.Document, bool, error)
}

// Creator makes delivery sessions (delivery.Creator).
type Creator interface {
	Create(ctx context.Context, by delivery.Requester, key string, req delivery.CreateRequest) (delivery.Created, error)
}

// Deps are the batch processor's dependencies.
type Deps struct {
	// Batches is the batch store (batchstore.Store), reached only through the use cases.
	Batches   dispatch.BatchStore
	Templates render.Templates
	Producer  Producer
	Creator   Creator
	Blobs     Blobs
	Cipher    *pii.Cipher
	Email     notify.Sender
	// Approvers are DISPATCH_APPROVERS: the approvers of a batch that names none.
	Approvers []string
	// Licence is the deployment's: a record is made only while it allows the batch (dispatch,
	// and delivery for secure e-mail). Required.
	Licence *licence.Licence
	// Meter queues batch.record for each record made (DESIGN 19), at the batch's finish;
	// off without LICENSING_URL.
	Meter licensing.Meter
	// MeterPage is how many records one licence-usage message of the finish carries; 0:
	// meterPage.
	MeterPage int
	Now       func() time.Time
	// Page is how many records one fan-out invocation queues and one listing reads (0:
	// PageSize).
	Page int
}

// Job is the batch processor. Safe for concurrent use (New builds it).
type Job struct {
	Deps
	cache cache
}

// New makes the job. It does no I/O. Errors: a missing dependency.
func New(d Deps) (*Job, error) {
	if d.Batches == nil || d.Templates == nil || d.Producer == nil || d.Creator == nil || d.Blobs == nil || d.Cipher == nil || d.Email == nil || d.Licence == nil {
		return nil, errors.New("dispatchjob: Batches, Templates, Producer, Creator, Blobs, Cipher, Email and Licence are required")
	}
	return &Job{Deps: d}, nil
}

// batches is the batch use-case service every read and transition of the job calls.
func (j *Job) batches() *dispatch.Batches {
	return &dispatch.Batches{Store: j.Batches, Now: j.Now}
}

// Functions is the job's function table: the batch queues and their poison queues (a dispatch or notice poison message is handled as the message itself: both are idempotent and record their own failure).
func (j *Job) Functions() []jobkit.Function {
	return []jobkit.Function{
		{Name: FunctionDispatch, Handler: funcproto.QueueHandler(j.HandleDispatch)},
		{Name: FunctionDispatchPoison, Handler: funcproto.QueueHandler(j.HandleDispatch)},
		{Name: FunctionRecord, Handler: funcproto.QueueHandler(j.HandleRecord)},
		{Name: FunctionRecordPoison, Handler: funcproto.QueueHandler(j.HandleRecordPoison)},
		{Name: FunctionFinish, Handler: funcproto.QueueHandler(j.HandleFinish)},
		{Name: FunctionFinishPoison, Handler: funcproto.QueueHandler(j.HandleFinishPoison)},
		{Name: FunctionNotify, Handler: funcproto.QueueHandler(j.HandleNotify)},
		{Name: FunctionNotifyPoison, Handler: funcproto.QueueHandler(j.HandleNotify)},
	}
}

func (j *Job) page() int {
	if j.Page > 0 {
		return j.Page
	}
	return PageSize
}

var systemActor = kernel.Actor{Kind: "system", ID: "dispatch"}

// load reads the batch a message names: nil when it is gone (acknowledged). Errors: Permanent
// for a message without ids or of another tenant; the store's.
func (j *Job) load(ctx context.Context, batchID, tenantID string) (*dispatch.Batch, error) {
	if batchID == "" || tenantID == "" {
		return nil, funcproto.Permanent(apperr.Invalid(funcproto.CodeInvalidMessage, apperr.Field("batchId", "batchId and tenantId are required")))
	}
	b, err := j.batches().Load(ctx, batchID)
	if apperr.KindOf(err) == apperr.KindNotFound {
		funcproto.Logf(ctx, "dispatch: no batch %s; message acknowledged", batchID)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if b.TenantID != tenantID {
		return nil, funcproto.TenantMismatch("batch")
	}
	return b, nil
}

// loadBatch decodes a dispatch.BatchMessage and loads its batch (nil: gone, acknowledged).
func (j *Job) loadBatch(ctx context.Context, qm funcproto.QueueMessage) (dispatch.BatchMessage, *dispatch.Batch, error) {
	var m dispatch.BatchMessage
	if err := qm.Decode(&m); err != nil {
		return m, nil, err
	}
	b, err := j.load(ctx, m.BatchID, m.TenantID)
	return m, b, err
}
