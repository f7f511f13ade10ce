package licensing

import (
	"strconv"
	"strings"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
)

// Queue is the queue of Usage records (declared in shared/queues as queues.LicenceUsage).
const Queue = "licence-usage"

// Kind is what a usage record meters.
type Kind string

// Kinds (DESIGN 19).
const (
	KindSessionSealed   Kind = "session.sealed"
	KindDeliveryCreated Kind = "delivery.created"
	KindBatchRecord     Kind = "batch.record"
	KindWorkflowSealed  Kind = "workflow.sealed"
)

// Kinds lists every kind, the allow-list Validate checks.
var Kinds = []Kind{KindSessionSealed, KindDeliveryCreated, KindBatchRecord, KindWorkflowSealed}

// Usage is one metering record: the queue message and the body of POST /v1/usage. ID is stable
// for the event (NewUsage), so a retried post or a second message for the same event is one
// record at the service.
// The members are left out when empty only so that a UsageMessage of a group carries none of
// them: a valid Usage, the only one posted, has them all.
type Usage struct {
	ID       string    `json:"id,omitempty"`
	TenantID string    `json:"tenantId,omitempty"`
	Kind     Kind      `json:"kind,omitempty"`
	At       time.Time `json:"at,omitzero"`
}

// MaxIDLen bounds a usage id.
const MaxIDLen = 512

// NewUsage is the record of kind for the object named by parts (a session's group id; a
// delivery session's id; a batch id and record index; a workflow id), at at (UTC). Its id is
// "<kind>:<parts joined by ':'>", the same every time the same event is metered.
func NewUsage(kind Kind, tenantID string, at time.Time, parts ...string) Usage {
	return Usage{ID: string(kind) + ":" + strings.Join(parts, ":"), TenantID: tenantID, Kind: kind, At: at.UTC()}
}

// Validate checks a usage record. Error: KindInvalid invalid_usage naming the field.
func (u Usage) Validate() error {
	if fields := u.fieldErrors(""); len(fields) > 0 {
		return apperr.Invalid(CodeInvalidUsage, fields...)
	}
	return nil
}

// fieldErrors are u's faults, each field named under prefix ("" or "records[3].").
func (u Usage) fieldErrors(prefix string) []apperr.FieldError {
	var fields []apperr.FieldError
	if u.ID == "" || len(u.ID) > MaxIDLen {
		fields = append(fields, apperr.Field(prefix+"id", "must be 1 to 512 bytes"))
	}
	if strings.TrimSpace(u.TenantID) == "" {
		fields = append(fields, apperr.Field(prefix+"tenantId", "is required"))
	}
	known := false
	for _, k := range Kinds {
		known = known || u.Kind == k
	}
	if !known {
		fields = append(fields, apperr.Field(prefix+"kind", "must be session.sealed, delivery.created, batch.record or workflow.sealed"))
	}
	if u.At.IsZero() {
		fields = append(fields, apperr.Field(prefix+"at", "is required"))
	}
	return fields
}

// MaxGroup bounds the records of one UsageMessage (a batch's record group has at most
// dispatch.RecordsPerMessage).
const MaxGroup = 100

// UsageMessage is a licence-usage queue message: one record, its members those of Usage (the
// only shape before issue 26, still what single events queue), or a group of records in Records
// with no other member (a batch's record group: one message where there was one per record).
// The operator's POST /v1/usage takes one record and has no quantity, so the job posts a
// group's records one by one; each keeps its own stable id.
type UsageMessage struct {
	Usage
	Records []Usage `json:"records,omitempty"`
}

// GroupMessage is the message of us: the single shape for one record, a group for more.
func GroupMessage(us []Usage) UsageMessage {
	if len(us) == 1 {
		return UsageMessage{Usage: us[0]}
	}
	return UsageMessage{Records: us}
}

// All is the message's records: Records, or the one record.
func (m UsageMessage) All() []Usage {
	if len(m.Records) > 0 {
		return m.Records
	}
	return []Usage{m.Usage}
}

// Validate checks a message: one valid record, or 1 to MaxGroup valid records in Records and
// no single-record member beside them. Error: KindInvalid invalid_usage naming each field
// ("kind", "records[2].at", "records").
func (m UsageMessage) Validate() error {
	if m.Records == nil {
		return m.Usage.Validate()
	}
	var fields []apperr.FieldError
	if m.Usage != (Usage{}) {
		fields = append(fields, apperr.Field("records", "a group carries no id, tenantId, kind or at beside its records"))
	}
	if len(m.Records) == 0 || len(m.Records) > MaxGroup {
		fields = append(fields, apperr.Field("records", "must hold 1 to "+strconv.Itoa(MaxGroup)+" records"))
	}
	for i, u := range m.Records {
		fields = append(fields, u.fieldErrors("records["+strconv.Itoa(i)+"].")...)
	}
	if len(fields) > 0 {
		return apperr.Invalid(CodeInvalidUsage, fields...)
	}
	return nil
}
