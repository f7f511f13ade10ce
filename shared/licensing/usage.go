package licensing

import (
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
type Usage struct {
	ID       string    `json:"id"`
	TenantID string    `json:"tenantId"`
	Kind     Kind      `json:"kind"`
	At       time.Time `json:"at"`
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
	var fields []apperr.FieldError
	if u.ID == "" || len(u.ID) > MaxIDLen {
		fields = append(fields, apperr.Field("id", "must be 1 to 512 bytes"))
	}
	if strings.TrimSpace(u.TenantID) == "" {
		fields = append(fields, apperr.Field("tenantId", "is required"))
	}
	known := false
	for _, k := range Kinds {
		known = known || u.Kind == k
	}
	if !known {
		fields = append(fields, apperr.Field("kind", "must be session.sealed, delivery.created, batch.record or workflow.sealed"))
	}
	if u.At.IsZero() {
		fields = append(fields, apperr.Field("at", "is required"))
	}
	if len(fields) > 0 {
		return apperr.Invalid(CodeInvalidUsage, fields...)
	}
	return nil
}
