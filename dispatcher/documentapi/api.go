// Package documentapi serves POST /api/documents (DESIGN section 12): an API caller without
// storage access uploads a PDF and gets the pdfBlobPath and pdfHash the create requests take.
//
// Decisions where DESIGN is silent:
//   - The caller needs an Entra ID JWT with the role Esign.Initiator, and the licence must hold
//     the esign or the delivery feature: an upload serves either (without both, the problem
//     names esign).
//   - The body follows the service's body rules (web.StreamBody): a Content-Type that is set
//     and is not application/pdf is 400 unsupported_media_type, as on the JSON routes; a body
//     over 50 MiB is 413 body_too_large, refused unread when its length is declared.
//   - The route is forwarded, not invoked: the Functions host would pass an invoked
//     function's body as a JSON string, which cannot carry a PDF's bytes unchanged.
package documentapi

import (
	"net/http"

	"github.com/esign-svc/esign/dispatcher/guard"
	"github.com/esign-svc/esign/shared/auth"
	"github.com/esign-svc/esign/shared/document"
	"github.com/esign-svc/esign/shared/licence"
	"github.com/esign-svc/esign/shared/web"
)

// API holds what the route needs.
type API struct {
	Uploader *document.Uploader
	Verifier *auth.Verifier
	Licence  *licence.Licence
}

// Routes registers the route on mux.
func (a *API) Routes(mux *http.ServeMux) {
	mux.Handle("POST /api/documents", web.Handle(a.upload))
}

type uploadResponse struct {
	PDFBlobPath string `json:"pdfBlobPath"`
	PDFHash     string `json:"pdfHash"`
	Pages       int    `json:"pages"`
	Size        int64  `json:"size"`
}

// upload is POST /api/documents: authorise, read the body under its rule, document.Uploader,
// answer 201.
func (a *API) upload(w http.ResponseWriter, r *http.Request) error {
	feature := licence.FeatureEsign
	if !a.Licence.Has(feature) && a.Licence.Has(licence.FeatureDelivery) {
		feature = licence.FeatureDelivery
	}
	p, err := guard.Gate{Verifier: a.Verifier, Licence: a.Licence, Feature: feature}.Caller(r, auth.RoleInitiator)
	if err != nil {
		return err
	}
	body, err := web.StreamBody(r, document.MediaType, document.MaxBytes)
	if err != nil {
		return err
	}
	doc, err := a.Uploader.Upload(r.Context(), p.TenantID, body, r.ContentLength)
	if err != nil {
		return err
	}
	return web.JSON(w, http.StatusCreated, uploadResponse{PDFBlobPath: doc.PDFBlobPath, PDFHash: doc.PDFHash,
		Pages: doc.Pages, Size: doc.Size})
}
