// Package renderapi serves POST /api/render (DESIGN 9): one record rendered from a template
// package, with the auto-trigger of templateSettings, or, for an array of records, a batch
// submitted to dispatch (the intake receipt in answer). It authenticates an Entra ID JWT with the
// initiator role (for a batch the initiator or the dispatch approver role) and a current
// licence; the features the request needs are the domain's to ask for (DESIGN 14: esign for
// an auto-triggered signing session, delivery for auto-triggered or secure-email deliveries,
// dispatch for a batch; a render that only renders needs none). The
// render and its auto-trigger are the domain's (shared/render), the batch intake too
// (shared/dispatch); this package decodes, authorises, calls them, queues what they ask for
// (signer invitations, delivery invitations and uploads; the approvers' notice, the batch's
// dispatch) and encodes.
package renderapi

import (
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/esign-svc/esign/dispatcher/deliveryapi"
	"github.com/esign-svc/esign/dispatcher/esignapi"
	"github.com/esign-svc/esign/dispatcher/guard"
	"github.com/esign-svc/esign/shared/auth"
	"github.com/esign-svc/esign/shared/dispatch"
	"github.com/esign-svc/esign/shared/effects"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/licence"
	"github.com/esign-svc/esign/shared/licensing"
	"github.com/esign-svc/esign/shared/render"
	"github.com/esign-svc/esign/shared/template"
	"github.com/esign-svc/esign/shared/web"
)

// MaxRenderBody bounds a render request: a batch of up to 10,000 records (DESIGN 9).
const MaxRenderBody = dispatch.MaxBodySize

// Response headers of a batch submit (spec "Batch dispatch").
const (
	HeaderBatchID       = "X-Service-BatchId"
	HeaderCorrelationID = "X-Service-CorrelationId"
	HeaderReadiness     = "X-Service-DispatchReadiness"
)

// API holds what the route needs.
type API struct {
	Renderer *render.Renderer
	Intake   *dispatch.Intake
	Verifier *auth.Verifier
	Licence  *licence.Licence
	Meter    licensing.Meter // delivery.created per new delivery (DESIGN 19)
}

// Routes registers POST /api/render. Its function is invoked (queue outputs notify, invite,
// upload, dispatch and dispatchnotify).
func (a *API) Routes(mux *http.ServeMux) {
	mux.Handle("POST /api/render", web.Handle(a.render))
}

// Answer is the render answer (DESIGN 9).
type Answer struct {
	CorrelationID string                      `json:"correlationId"`
	DocumentID    string                      `json:"documentId"`
	Title         string                      `json:"title"`
	PDFBlobPath   string                      `json:"pdfBlobPath"`
	PDFHash       string                      `json:"pdfHash"`
	Pages         int                         `json:"pages"`
	Template      TemplateRef                 `json:"template"`
	Warnings      []template.Result           `json:"warnings"`
	ESign         *esignapi.SessionAnswer     `json:"esign,omitempty"`
	Delivery      *deliveryapi.DeliveryAnswer `json:"delivery,omitempty"`
	// DeliveryAfterSigning: the delivery is made on the signed PDF once the session completes.
	DeliveryAfterSigning bool `json:"deliveryAfterSigning,omitempty"`
}

// TemplateRef names the template a document was rendered from.
type TemplateRef struct {
	Path    string `json:"path"`
	Name    string `json:"name"`
	Version int    `json:"version"`
}

// batchRoles may submit a batch: the roles of the batch routes (dispatchapi), so that a
// dispatch user needs no signing role (DESIGN 9, spec "Every dispatch route requires a JWT and
// the dispatch feature"). A single render takes Esign.Initiator.
var batchRoles = []string{auth.RoleInitiator, auth.RoleDispatchApprover}

// render is POST /api/render with one record: 201 with the document (and what auto-trigger
// started), or 200 with the same answer for an idempotent retry. Errors: 401; 403 role
// (Esign.Initiator; Dispatch.Approver suffices only for a batch), the licence's
// (licence_feature_missing naming esign or delivery when templateSettings would
// auto-trigger a signing session or deliveries the licence lacks); 400 naming the field at
// fault (record_invalid with ruleId per failed rule, template_invalid, template_not_found,
// invalid_blob_path); 409 document_exists; 413 body. An array of records is a batch (see
// batch).
func (a *API) render(w http.ResponseWriter, r *http.Request) error {
	p, err := guard.Gate{Verifier: a.Verifier, Licence: a.Licence}.Caller(r, batchRoles...)
	if err != nil {
		return err
	}
	req, err := decodeRequest(r)
	if err != nil {
		return err
	}
	who := kernel.Actor{Kind: "initiator", ID: p.CallerID(), IP: web.ClientIP(r), UserAgent: web.UserAgent(r)}
	if req.Batch() {
		return a.batch(w, r, p, who, req)
	}
	if err := auth.Require(p, auth.RoleInitiator); err != nil { // a single render keeps its gate
		return err
	}
	res, err := a.Renderer.Render(r.Context(), render.Caller{TenantID: p.TenantID, CallerID: who.ID, Actor: who, Licence: a.Licence}, req)
	if err != nil {
		return err
	}
	d := res.Document
	out := Answer{CorrelationID: d.CorrelationID, DocumentID: d.DocumentID, Title: d.Title, PDFBlobPath: d.PDFBlobPath,
		PDFHash: d.PDFHash, Pages: d.Pages, Template: TemplateRef{Path: d.TemplatePath, Name: d.TemplateName, Version: d.TemplateVersion},
		Warnings: res.Warnings, DeliveryAfterSigning: res.DeliveryAfterSigning}
	if out.Warnings == nil {
		out.Warnings = []template.Result{}
	}
	if c := res.ESign; c != nil {
		if res.ESignNew {
			if err := effects.Emit(r.Context(), c.Session, c.Slots, c.Change, false); err != nil {
				return err
			}
		}
		ans := esignapi.Answer(*c)
		out.ESign = &ans
	}
	if c := res.Delivery; c != nil {
		if err := effects.EmitDeliveries(r.Context(), *c, res.DeliveryMode, p.TenantID, a.Meter); err != nil {
			return err
		}
		ans := deliveryapi.Answer(d.CorrelationID, *c, res.DeliveryRecipients)
		out.Delivery = &ans
	}
	status := http.StatusCreated
	if !res.Created {
		status = http.StatusOK
	}
	return web.JSON(w, status, out)
}

// decodeRequest reads a render request (a batch's of up to MaxRenderBody). Its dataSource is a
// slice of the body read once, not a copy of it (web.DecodeJSON): a batch body is held once
// while its records are stored. Errors: DecodeJSON's.
func decodeRequest(r *http.Request) (render.Request, error) {
	var req render.Request
	err := web.DecodeJSON(r, MaxRenderBody, &req)
	return req, err
}

// batch is POST /api/render with an array of records: the batch is validated and stored, and
// the intake receipt answers, 202 (422 when the batch is invalid), as a PDF or, for Accept:
// application/json, as JSON, with the batch's ids and readiness in the X-Service-* headers. The
// approvers' notice (pending-approval) or the dispatch message (queued) go out as queue outputs.
// The caller holds Esign.Initiator or Dispatch.Approver (batchRoles). Errors: 403
// licence_feature_missing without the dispatch feature, or without delivery for a batch
// delivered by secure e-mail (never esign); the intake's 400s (dispatch_required, the field at
// fault).
func (a *API) batch(w http.ResponseWriter, r *http.Request, p auth.Principal, who kernel.Actor, req render.Request) error {
	sub, err := a.Intake.Submit(r.Context(), dispatch.Submitter{TenantID: p.TenantID, CallerID: who.ID, Email: p.Email, Actor: who,
		Licence: a.Licence}, req)
	if err != nil {
		return err
	}
	if err := effects.EmitBatch(r.Context(), sub.Batch, sub.Change); err != nil {
		return err
	}
	status := http.StatusAccepted
	if sub.Batch.Readiness == dispatch.ReadyInvalid {
		status = http.StatusUnprocessableEntity
	}
	h := w.Header()
	h.Set(HeaderBatchID, sub.Batch.BatchID)
	h.Set(HeaderCorrelationID, sub.Batch.CorrelationID)
	h.Set(HeaderReadiness, string(sub.Batch.Readiness))
	if WantsJSON(r) {
		return web.JSON(w, status, sub.Receipt)
	}
	return WritePDF(w, status, sub.PDF)
}

// WantsJSON reports whether the request's Accept names application/json (the receipt as JSON
// instead of its PDF).
func WantsJSON(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		mt, _, _ := mime.ParseMediaType(strings.TrimSpace(part))
		if mt == "application/json" {
			return true
		}
	}
	return false
}

// WritePDF answers a PDF.
func WritePDF(w http.ResponseWriter, status int, pdf []byte) error {
	w.Header().Set("Content-Type", "application/pdf")
	w.Header().Set("Content-Length", strconv.Itoa(len(pdf)))
	w.WriteHeader(status)
	_, err := w.Write(pdf)
	return err
}
