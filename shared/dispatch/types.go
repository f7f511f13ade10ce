// Package dispatch is governed batch dispatch (spec "Batch dispatch", DESIGN 9): a batch of
// records submitted in one render call, validated record by record, held for approval, then
// rendered per record by the processor, each record with its own correlationId, PDF, audit trail
// and delivery sessions; one failed record never blocks the others.
//
// A batch is a root (this package's Batch) and one child per record (Record). They live in one
// table partition (dispatch/batchstore): the root row changes under its ETag, each record row
// under its own, and a record's outcome is written together with a counter shard of the batch
// in one transaction (never the root row), so the counters stay exact under redelivered
// messages and concurrent jobs; reads sum the shards, the finish writes the sums on the root.
package dispatch

import (
	"time"

	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/licence"
)

// Aliases of the kernel's types.
type (
	Actor      = kernel.Actor
	Event      = kernel.Event
	Change     = kernel.Change
	Effect     = kernel.Effect
	EffectKind = kernel.EffectKind
)

// State is a batch state (spec "Batch states").
type State string

// Batch states.
const (
	StatePendingApproval  State = "pending-approval"
	StateInvalid          State = "invalid"
	StateChangesRequested State = "changes-requested"
	StateApproved         State = "approved"
	StateQueued           State = "queued"
	StateProcessing       State = "processing"
	StateCompleted        State = "completed"
	StatePartiallyFailed  State = "partially-failed"
	StateRejected         State = "rejected"
	StateCancelled        State = "cancelled"
)

// States lists every batch state (the list filter's allowed values).
var States = []State{StatePendingApproval, StateInvalid, StateChangesRequested, StateApproved, StateQueued,
	StateProcessing, StateCompleted, StatePartiallyFailed, StateRejected, StateCancelled}

// Decidable reports whether a decide or cancel may act on the state.
func (s State) Decidable() bool { return s == StatePendingApproval || s == StateChangesRequested }

// Terminal reports whether nothing moves the batch any more.
func (s State) Terminal() bool {
	switch s {
	case StateInvalid, StateCompleted, StatePartiallyFailed, StateRejected, StateCancelled:
		return true
	}
	return false
}

// Readiness is the batch's dispatch readiness.
type Readiness string

// Readiness values (DESIGN 9).
const (
	ReadyAll     Readiness = "READY"   // every record valid, no warnings
	ReadyPartial Readiness = "PARTIAL" // every record dispatchable, some with warnings
	ReadyInvalid Readiness = "INVALID" // at least one record with an error
)

// Record statuses at intake.
const (
	RecordReady   = "DISPATCH_READY"
	RecordInvalid = "INVALID"
)

// Validation result statuses (the batch's validationResults[].status).
const (
	ResultValid   = "valid"
	ResultWarning = "warning"
	ResultInvalid = "invalid"
)

// RecordState is where a record is in processing.
type RecordState string

// Record states.
const (
	RecordPending   RecordState = "pending"    // not yet processed (or never: invalid at intake)
	RecordDone      RecordState = "done"       // rendered, stored, delivered
	RecordFailed    RecordState = "failed"     // processing failed; Error says why
	RecordNotQueued RecordState = "not-queued" // invalid at intake, or the batch never ran
)

// Distribution modes and delivery config modes (spec "Distribution settings").
const (
	ModeIndividual        = "individual"
	ModeCombined          = "combined"
	DeliverySecureEmail   = "secure-email"
	DeliveryNone          = "none"
	DefaultExpiresInHours = 168
)

// Limits (DESIGN 9).
const (
	MaxRecords  = 10000
	MaxBodySize = 32 << 20
	// MaxRecordBytes bounds one record's JSON: it is kept, encrypted, in a property of its
	// record row (a table property holds at most 64 KiB).
	MaxRecordBytes = 24 << 10
)

// Decision is a decide call's decision.
type Decision string

// Decisions.
const (
	DecisionApprove        Decision = "approve"
	DecisionReject         Decision = "reject"
	DecisionRequestChanges Decision = "request-changes"
)

// Settings are what the batch's processing needs from its request: the distribution block and
// the render options, fixed at intake.
type Settings struct {
	Mode               string `json:"mode"`
	FileNameTemplate   string `json:"fileNameTemplate,omitempty"`
	ZipBundle          bool   `json:"zipBundle,omitempty"`
	DeliveryMode       string `json:"deliveryMode,omitempty"` // secure-email | none
	ExpiresInHours     int    `json:"expiresInHours,omitempty"`
	DocumentIDTemplate string `json:"documentIdTemplate,omitempty"`
	DocType            string `json:"docType,omitempty"`
	GeneratedBy        string `json:"generatedBy,omitempty"`
	SourceSystem       string `json:"sourceSystem,omitempty"`
}

// Plan is what a batch of these settings makes, for the licence: the batch (dispatch) and, with
// secure-email delivery, its records' deliveries.
func (s Settings) Plan() licence.Plan {
	return licence.Plan{Batch: true, Delivery: s.DeliveryMode == DeliverySecureEmail}
}

// Batch is the root of a batch.
type Batch struct {
	BatchID         string
	TenantID        string
	CorrelationID   string // the batch activity record's correlationId
	Title           string
	TemplatePath    string
	TemplateName    string
	TemplateVersion int
	SubmittedBy     string // the submitter's caller id (JWT oid)
	// SubmitterEmailEnc and ApproversEnc are AES-GCM encrypted addresses (the completion
	// e-mail's recipient, the approvers named by approversEmail), bound to the batch.
	SubmitterEmailEnc string
	ApproversEnc      string
	State             State
	Readiness         Readiness
	Settings          Settings
	Supersedes        string

	// Counters (DESIGN 9). DocumentCount: records submitted; ReadyCount: DISPATCH_READY at
	// intake; FailedCount: INVALID at intake; WarningCount: ready records with warnings;
	// ProcessedCount: ready records processed (done or failed); ErrorCount: processed records
	// that failed.
	DocumentCount, ReadyCount, FailedCount, WarningCount, ProcessedCount, ErrorCount int

	ApprovedBy       string // the decider's caller id
	DecisionComments string
	CreatedAt        time.Time
	UpdatedAt        time.Time
	DecidedAt        time.Time
	QueuedAt         time.Time
	CompletedAt      time.Time

	// RecordsPerMessage is the size of the batch's record groups (Group), fixed when it is stored.
	RecordsPerMessage int

	RecordsPath  string // dispatch/<batchId>/records.jsonl
	ReceiptPath  string // receipts/<batchId>.pdf
	CombinedPath string // documents/<tid>/dispatch/<batchId>/combined.pdf (mode combined)
	BundlePath   string // bundles/<batchId>.zip (zipBundle)

	ETag string
}

// ActivityItemID is the batch activity record's id (its correlationId).
func (b *Batch) ActivityItemID() string { return b.CorrelationID }

// Group is how many consecutive records one record message names (index / Group() is a
// record's group, which also picks its counter shard): the batch's own, else, for a batch not
// yet stored, RecordsPerMessage.
func (b *Batch) Group() int {
	if b.RecordsPerMessage > 0 {
		return b.RecordsPerMessage
	}
	return RecordsPerMessage
}

// Done reports whether every ready record has been processed.
func (b *Batch) Done() bool { return b.ProcessedCount >= b.ReadyCount }

// Record is one record of a batch.
type Record struct {
	BatchID  string
	Index    int
	Status   string   // DISPATCH_READY or INVALID
	Messages []string // validation messages (errors, warnings, infos), no personal data beyond the record's own
	Warning  bool     // a ready record with warnings
	State    RecordState
	// DataEnc is the record (JSON), AES-GCM encrypted (it names people and addresses).
	DataEnc string
	// NameSeq, set at intake, is the record's place among the ready records of its batch whose
	// file names are equal (FileName): 0 for the first, 2 for the second (" (2)"), and so on. A
	// number, so that the row holds no name made of the record's data before its PDF exists.
	NameSeq int
	// Set when processed.
	CorrelationID string
	DocumentID    string
	PDFBlobPath   string
	PDFHash       string
	DeliveryIDs   []string
	Error         string
	ProcessedAt   time.Time

	ETag string
	// Counter is the store's: the record's counter shard as read with the record (opaque; ""
	// when not read), so that writing its outcome needs no other read.
	Counter string
}
