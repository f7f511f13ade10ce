// Package event is DESIGN 17's events for integrators: the event types, the table that maps an
// aggregate's audit kinds to them (the kernel writes an outbox row for each mapped audit event
// in the change's own transaction, kernel/aggstore), the envelope POSTed to a subscription
// (`{id, type, timestamp, tenantId, data}`, data holding ids, states and times only), and the
// use cases of a tenant's webhook subscriptions (webhooks.go) and of delivering events to them
// (deliver.go). It reads no environment and imports no Azure SDK.
package event

import (
	"encoding/json"
	"slices"
	"time"
)

// The event types of DESIGN 17.
const (
	SessionCreated          = "session.created"
	SessionCompleted        = "session.completed"
	SessionCancelled        = "session.cancelled"
	SessionExpired          = "session.expired"
	SessionSealFailed       = "session.seal_failed"
	SlotActivated           = "slot.activated"
	SlotSigned              = "slot.signed"
	SlotDeclined            = "slot.declined"
	DeliveryOpened          = "delivery.opened"
	DeliveryDownloaded      = "delivery.downloaded"
	DeliveryRevoked         = "delivery.revoked"
	DeliveryExpired         = "delivery.expired"
	BatchPendingApproval    = "batch.pending_approval"
	BatchCompleted          = "batch.completed"
	BatchPartiallyFailed    = "batch.partially_failed"
	BatchRejected           = "batch.rejected"
	WorkflowPendingApproval = "workflow.pending_approval"
	WorkflowCompleted       = "workflow.completed"
	WorkflowRejected        = "workflow.rejected"
	WorkflowCancelled       = "workflow.cancelled"
	// All subscribes to every type.
	All = "*"
	// Ping is the type of the test event of POST /api/webhooks/{id}/ping (never from an
	// aggregate).
	Ping = "webhook.ping"
)

// Types are the event types a subscription may name (besides All), in DESIGN 17's order.
var Types = []string{SessionCreated, SessionCompleted, SessionCancelled, SessionExpired, SessionSealFailed,
	SlotActivated, SlotSigned, SlotDeclined, DeliveryOpened, DeliveryDownloaded, DeliveryRevoked, DeliveryExpired,
	BatchPendingApproval, BatchCompleted, BatchPartiallyFailed, BatchRejected,
	WorkflowPendingApproval, WorkflowCompleted, WorkflowRejected, WorkflowCancelled}

// auditKinds maps the audit kinds of the aggregates to the event types they publish. An audit
// kind not listed publishes nothing. delivery.expired is recorded by the expiry timer once a
// live delivery is past its expiry (delivery.Expire, issue 27).
var auditKinds = map[string]string{
	"session.created":           SessionCreated,
	"session.completed":         SessionCompleted,
	"session.cancelled":         SessionCancelled,
	"session.expired":           SessionExpired,
	"seal.failed":               SessionSealFailed,
	"slot.activated":            SlotActivated,
	"slot.signed":               SlotSigned,
	"slot.declined":             SlotDeclined,
	"delivery.opened":           DeliveryOpened,
	"delivery.downloaded":       DeliveryDownloaded,
	"delivery.revoked":          DeliveryRevoked,
	"delivery.expired":          DeliveryExpired,
	"batch.pending_approval":    BatchPendingApproval,
	"batch.completed":           BatchCompleted,
	"batch.partially_failed":    BatchPartiallyFailed,
	"batch.rejected":            BatchRejected,
	"workflow.pending_approval": WorkflowPendingApproval,
	"workflow.completed":        WorkflowCompleted,
	"workflow.rejected":         WorkflowRejected,
	"workflow.cancelled":        WorkflowCancelled,
}

// Map is the event type an audit kind publishes (the kernel's Kind.Publish).
func Map(auditKind string) (string, bool) {
	t, ok := auditKinds[auditKind]
	return t, ok
}

// KnownType reports whether t may be subscribed to.
func KnownType(t string) bool { return t == All || slices.Contains(Types, t) }

// Matches reports whether a subscription to events receives an event of type t.
func Matches(events []string, t string) bool {
	return slices.Contains(events, All) || slices.Contains(events, t)
}

// Data is an event's data: ids, states and times only. Object is the aggregate kind ("session",
// "delivery", "batch", "workflow"), ID its id, Slot the child (signer, recipient) when the
// event is about one (-1 otherwise, left out), State the aggregate's state after the change.
type Data struct {
	Object     string    `json:"object"`
	ID         string    `json:"id"`
	Slot       *int      `json:"slot,omitempty"`
	State      string    `json:"state,omitempty"`
	OccurredAt time.Time `json:"occurredAt"`
}

// Envelope is the body POSTed to a subscription.
type Envelope struct {
	ID        string    `json:"id"`
	Type      string    `json:"type"`
	Timestamp time.Time `json:"timestamp"`
	TenantID  string    `json:"tenantId"`
	Data      Data      `json:"data"`
}

// Body is the JSON of e (times in UTC, RFC 3339).
func (e Envelope) Body() ([]byte, error) {
	e.Timestamp = e.Timestamp.UTC()
	e.Data.OccurredAt = e.Data.OccurredAt.UTC()
	return json.Marshal(e)
}
