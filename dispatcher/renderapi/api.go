// Package renderapi serves POST /api/render (DESIGN 9): one record rendered from a template
// package, with the auto-trigger of templateSettings. It authenticates an Entra ID JWT with the
// initiator role and the licence's esign feature; the render and its auto-trigger are the
// domain's (shared/render); this package decodes, authorises, calls it, queues what auto-trigger
// asks for (signer invitations, delivery invitations and uploads) and encodes.
package renderapi

import (
	"net/http"

	"github.com/esign-svc/esign/dispatcher/deliveryapi"
	"github.com/esign-svc/esign/dispatcher/effects"
	"github.com/esign-svc/esign/dispatcher/esignapi"
	"github.com/esign-svc/esign/dispatcher/guard"
	"github.com/esign-svc/esign/shared/auth"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/licence"
	"github.com/esign-svc/esign/shared/render"
	"github.com/esign-svc/esign/shared/template"
	"github.com/esign-svc/esign/shared/web"
)

// MaxRenderBody bounds a render request of one record (DESIGN 5: render requests are larger
// than the 1 MiB of other JSON routes).
const MaxRenderBody = 4 << 20

// API holds what the route needs.
type API struct {
	Renderer *render.Renderer
	Verifier *auth.Verifier
	Licence  *licence.Licence
}

// Routes registers POST /api/render. Its function is invoked (queue outputs notify, invite and
// upload).
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

// render is POST /api/render with one record: 201 with the document (and what auto-trigger
// started), or 200 with the same answer for an idempotent retry. Errors: 401; 403 licence or
// role; 400 naming the field at fault (record_invalid with ruleId per failed rule,
// template_invalid, template_not_found, invalid_blob_path, batch_not_available for an array);
// 409 document_exists; 413 body.
func (a *API) render(w http.ResponseWriter, r *http.Request) error {
	p, err := guard.Gate{Verifier: a.Verifier, Licence: a.Licence, Feature: licence.FeatureEsign}.Caller(r, auth.RoleInitiator)
	if err != nil {
		return err
	}
	var req render.Request
	if err := web.DecodeJSON(r, MaxRenderBody, &req); err != nil {
		return err
	}
	who := kernel.Actor{Kind: "initiator", ID: p.CallerID(), IP: web.ClientIP(r), UserAgent: web.UserAgent(r)}
	res, err := a.Renderer.Render(r.Context(), render.Caller{TenantID: p.TenantID, CallerID: who.ID, Actor: who}, req)
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
		if err := deliveryapi.Queue(r.Context(), *c, res.DeliveryMode, p.TenantID); err != nil {
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
