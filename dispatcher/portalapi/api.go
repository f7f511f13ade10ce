// Package portal serves the signing portal's routes (DESIGN 4 and 5): link activation, the
// session view, viewed, consent and decline under /api/esign/portal/, and the document proxy
// GET /api/esign/document/{token}. Signers' browsers call them across origins, so the functions
// are anonymous and the tokens protect them: the single-use slot token of the portalUrl for
// activation, then the portal access token (30 minutes sliding, never beyond the session's
// expiry), which every answer refreshes. CORS is answered for the configured portal origin only.
package portalapi

import (
	"net/http"
	"time"

	"github.com/esign-svc/esign/shared/azure/blobstore"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/tokens"
	"github.com/esign-svc/esign/shared/web"
)

// API holds what the portal routes need.
type API struct {
	Reads    *esign.SessionReads // the reads (the session view, the document)
	Sessions *esign.Sessions     // the transitions (activate, viewed, consent, decline, OTP, transfer)
	Blobs    *blobstore.Store
	Tokens   *tokens.Codec
	// Lapsed verifies tokens whose own expiry has passed, only to tell a signer whose session
	// has ended (410, as the spec wants for a link used after expiry) from one whose token
	// merely lapsed (401). Nothing else is ever done with such a token. Nil: every expired
	// token is 401. Build it with LapsedCodec.
	Lapsed       *tokens.Codec
	PortalOrigin string // the one origin CORS allows, e.g. https://sign.example.com
}

// LapsedCodec is the codec for API.Lapsed: the same keys, with a leeway as long as the longest
// session, so a token of any session that could still be on record verifies although expired.
func LapsedCodec(ring *tokens.KeyRing, opts ...tokens.Option) *tokens.Codec {
	opts = append([]tokens.Option{tokens.WithLeeway(esign.MaxExpiresInMinutes*time.Minute + time.Hour)}, opts...)
	return tokens.NewCodec(ring, opts...)
}

// Route patterns.
const (
	PathActivate = "/api/esign/portal/activate"
	PathSession  = "/api/esign/portal/session"
	PathViewed   = "/api/esign/portal/viewed"
	PathConsent  = "/api/esign/portal/consent"
	PathDecline  = "/api/esign/portal/decline"
	PathDocument = "/api/esign/document/"
)

// Routes registers the routes on mux. Decline queues notices (and, when an optional decline is
// the last open step, the seal), so its function is invoked; the others are forwarded.
// Preflight OPTIONS requests of both prefixes are answered by the CORS handler.
func (a *API) Routes(mux *http.ServeMux) {
	c := portalCORS(a.PortalOrigin)
	mux.Handle("OPTIONS /api/esign/portal/", c.Preflight("GET, POST, OPTIONS"))
	mux.Handle("OPTIONS "+PathDocument, c.Preflight("GET, HEAD, OPTIONS"))
	mux.Handle("POST "+PathActivate, c.Wrap(web.Handle(a.activate)))
	mux.Handle("GET "+PathSession, c.Wrap(web.Handle(a.session)))
	mux.Handle("POST "+PathViewed, c.Wrap(web.Handle(a.viewed)))
	mux.Handle("POST "+PathConsent, c.Wrap(web.Handle(a.consent)))
	mux.Handle("POST "+PathDecline, c.Wrap(web.Handle(a.decline)))
	mux.Handle("GET "+PathDocument+"{token}", c.Wrap(web.Handle(a.document)))
}
