package workflow

import (
	"cmp"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/licence"
	"github.com/esign-svc/esign/shared/render"
	"github.com/esign-svc/esign/shared/template"
)

// Audit event kinds of the auto-trigger after the seal (DESIGN 10, section 9's auto-trigger).
// Their data carry ids and counts only.
const (
	EvESignStarted    = "workflow.esign_started"    // {groupId}
	EvDeliveryStarted = "workflow.delivery_started" // {deliveryIds}
	EvTriggerFailed   = "workflow.trigger_failed"   // {code}
)

// DocType is the docType of the signing session and the deliveries of a sealed workflow record
// whose create gave no options.docType.
const DocType = "workflow"

// Document is the documentId and docType of w's sealed record, of its signing session and of
// its deliveries: the create's options.documentId and .docType, else the workflow id and DocType.
func (w *Workflow) Document() (documentID, docType string) {
	return cmp.Or(w.Setup.DocumentID, w.ID), cmp.Or(w.Setup.DocType, DocType)
}

// SealedPath is the blob path ("<container>/<name>") of workflow id's sealed PDF:
// signed/<tenantId>/workflows/<id>.pdf. DESIGN 10 says signed/workflows/<id>.pdf; the tenant's
// folder is where esign and delivery, which confine signed/ to the caller's tenant, accept it.
func SealedPath(tenant, id string) string { return "signed/" + tenant + "/workflows/" + id + ".pdf" }

// EvidencePath is the blob path of workflow id's JSONL evidence bundle.
func EvidencePath(tenant, id string) string {
	return "evidence/" + tenant + "/workflows/" + id + ".jsonl"
}

// PlanTrigger is the auto-trigger of w's sealed PDF (Setup.ESign and .Delivery, as a render's
// templateSettings): the signing session under the workflow's correlationId, or the deliveries,
// or both (the delivery then of the signed PDF), checked by the create-session and
// create-delivery rules. The target's hash is w.SealedHash (empty before the seal: the create
// route checks the settings with it). Errors: 400 naming templateSettings.esign.* or
// .delivery.*, or correlationId when the signing session or the delivery cannot take it.
func PlanTrigger(w *Workflow) (render.Trigger, render.Target, error) {
	docID, docType := w.Document()
	t := render.Target{TenantID: w.Tenant, CorrelationID: w.CorrelationID, DocumentID: docID, DocType: docType,
		DocumentName: render.DocumentName(w.Setup.Title, w.CorrelationID), PDFBlobPath: SealedPath(w.Tenant, w.ID),
		PDFHash: w.SealedHash, Sealed: true}
	var es *template.ESignSettings
	var ds *template.DeliverySettings
	if len(w.Setup.ESign) > 0 {
		if err := json.Unmarshal(w.Setup.ESign, &es); err != nil {
			return render.Trigger{}, t, apperr.Invalid(CodeInvalidRequest, apperr.Field("templateSettings.esign", "cannot be read"))
		}
	}
	if len(w.Setup.Delivery) > 0 {
		if err := json.Unmarshal(w.Setup.Delivery, &ds); err != nil {
			return render.Trigger{}, t, apperr.Invalid(CodeInvalidRequest, apperr.Field("templateSettings.delivery", "cannot be read"))
		}
	}
	tr, err := render.PlanTrigger(es, ds, t)
	return tr, t, ownCorrelationID(err)
}

// LicencePlan is what w makes, for the licence (DESIGN 14): the workflow, and the signing
// session and deliveries its auto-trigger starts after the seal. Errors: PlanTrigger's.
func LicencePlan(w *Workflow) (licence.Plan, error) {
	tr, _, err := PlanTrigger(w)
	if err != nil {
		return licence.Plan{}, err
	}
	p := tr.Plan()
	p.Workflow = true
	return p, nil
}

// ownCorrelationID names the workflow's own correlationId, options.documentId or
// options.docType where a creator refused the one it was given (templateSettings.esign.
// correlationId is no setting of the request).
func ownCorrelationID(err error) error {
	e, ok := apperr.As(err)
	if !ok || e.Kind != apperr.KindInvalid {
		return err
	}
	fields := slices.Clone(e.Fields)
	for i, f := range fields {
		for suffix, own := range map[string]string{".correlationId": "correlationId", ".documentId": "options.documentId", ".docType": "options.docType"} {
			if strings.HasSuffix(f.Field, suffix) {
				fields[i].Field = own
				fields[i].Message += " (the signing session and the deliveries of the sealed record take the workflow's)"
			}
		}
	}
	return apperr.Invalid(e.Code, fields...)
}

// Triggered reports whether the auto-trigger after the seal has ended: started or failed.
func (w *Workflow) Triggered() bool {
	return w.ESignGroupID != "" || len(w.DeliveryIDs) > 0 || w.TriggerFailure != ""
}

// TriggerStarted records what the auto-trigger started on the sealed PDF: the signing session
// (workflow.esign_started) or the deliveries (workflow.delivery_started). Errors:
// ErrInvalidState unless complete or once recorded.
func (w *Workflow) TriggerStarted(groupID string, deliveryIDs []string, now time.Time) (kernel.Change, error) {
	return w.commit(func(x *Workflow, c *kernel.Change) error {
		if x.State != StateComplete || x.Triggered() || (groupID == "" && len(deliveryIDs) == 0) {
			return ErrInvalidState
		}
		if groupID != "" {
			x.ESignGroupID = groupID
			c.Record(EvESignStarted, kernel.NoSlot, now, map[string]any{"groupId": groupID})
		} else {
			x.DeliveryIDs = slices.Clone(deliveryIDs)
			c.Record(EvDeliveryStarted, kernel.NoSlot, now, map[string]any{"deliveryIds": x.DeliveryIDs})
		}
		x.UpdatedAt = now
		return nil
	})
}

// TriggerFailed records that the auto-trigger can never start (code: the creators' error code
// or retries_exhausted; never personal data). Errors: ErrInvalidState unless complete or once
// the trigger ended.
func (w *Workflow) TriggerFailed(code string, now time.Time) (kernel.Change, error) {
	return w.commit(func(x *Workflow, c *kernel.Change) error {
		if x.State != StateComplete || x.Triggered() {
			return ErrInvalidState
		}
		x.TriggerFailure = code
		c.Record(EvTriggerFailed, kernel.NoSlot, now, map[string]any{"code": code})
		x.UpdatedAt = now
		return nil
	})
}
