// Package document is the rendered-document aggregate (DESIGN 9): a PDF rendered once from a
// template package and a record, written create-only to documents/rendered/<correlationId>.pdf,
// with what auto-trigger started on it. Its id is the correlationId: a second render under the
// same correlationId finds it, and is the same render (an idempotent retry) only when its
// request hash matches.
package document

import (
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/kernel"
)

// Audit event kinds (DESIGN 5: dotted names).
const (
	EvRendered        = "document.rendered"
	EvESignStarted    = "document.esign_started"
	EvDeliveryStarted = "document.delivery_started"
)

// Document is one rendered document.
type Document struct {
	CorrelationID   string
	TenantID        string
	CreatedBy       string // the caller's id (JWT oid), not personal data
	DocumentID      string
	DocType         string
	Title           string
	TemplatePath    string
	TemplateName    string
	TemplateVersion int
	PDFBlobPath     string // documents/rendered/<correlationId>.pdf
	PDFHash         string // sha256:<hex>
	ManifestPath    string // documents/rendered/<correlationId>.pdf.manifest.json; a batch record's documents/<tid>/dispatch/<batchId>/manifest-<hash>.json
	Pages           int
	// RequestHash identifies the render: the template (path, name, version, PDF) and the
	// request's record, options and settings. Equal hashes are the same render.
	RequestHash  string
	GeneratedBy  string
	SourceSystem string
	// ReferenceID names the batch a record's document belongs to (the activity row's link to
	// its batch); empty for a one-record render.
	ReferenceID string
	CreatedAt   time.Time
	// What auto-trigger started: the signing session and the delivery sessions (ids only).
	ESignGroupID string
	DeliveryIDs  []string

	ETag string // the stored row's, for the conditional write
}

// ErrExists is a render of another request under a correlationId already rendered (409).
func ErrExists(correlationID string) error {
	return apperr.New(apperr.KindConflict, "document_exists",
		"correlationId %s was rendered already from another record or template; use a new correlationId", correlationID)
}

// Rendered is the change of a new document: the audit event document.rendered with the
// template's name and version, the hash, who generated it and from which system.
func Rendered(d *Document) kernel.Change {
	var c kernel.Change
	c.Record(EvRendered, kernel.NoSlot, d.CreatedAt, map[string]any{
		"templatePath": d.TemplatePath, "templateName": d.TemplateName, "templateVersion": d.TemplateVersion,
		"pdfBlobPath": d.PDFBlobPath, "pdfHash": d.PDFHash, "pages": d.Pages, "documentId": d.DocumentID,
		"generatedBy": d.GeneratedBy, "sourceSystem": d.SourceSystem, "referenceId": d.ReferenceID,
	})
	return c
}

// StartESign records the signing session auto-trigger created; an empty change when it is
// recorded already.
func StartESign(d *Document, groupID string, now time.Time) kernel.Change {
	var c kernel.Change
	if d.ESignGroupID == groupID {
		return c
	}
	d.ESignGroupID = groupID
	c.Record(EvESignStarted, kernel.NoSlot, now, map[string]any{"groupId": groupID})
	return c
}

// StartDelivery records the delivery sessions auto-trigger created; an empty change when they
// are recorded already.
func StartDelivery(d *Document, ids []string, now time.Time) kernel.Change {
	var c kernel.Change
	if len(d.DeliveryIDs) > 0 || len(ids) == 0 {
		return c
	}
	d.DeliveryIDs = append([]string(nil), ids...)
	c.Record(EvDeliveryStarted, kernel.NoSlot, now, map[string]any{"deliveryIds": d.DeliveryIDs})
	return c
}
