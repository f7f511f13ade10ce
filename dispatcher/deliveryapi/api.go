// Package deliveryapi serves the secure-delivery routes (spec "Delivery"):
//
//   - requester routes, Entra ID JWT + licence feature `delivery`: POST /api/delivery (create,
//     role Esign.Initiator), GET /api/delivery-sessions?correlationId= and
//     POST /api/delivery/{deliveryId}/revoke (role Esign.Initiator or Service.Admin, the
//     caller's tenant only);
//   - recipient routes, delivery access token `t` (the portalUrl's): GET /api/delivery/{id},
//     GET .../sas, POST .../download, POST .../access, POST .../otp/send, POST .../otp/verify.
//
// Decisions where the spec is silent:
//   - Create requires the role Esign.Initiator: the spec says "initiator" and the service has
//     one initiator role; list and revoke also accept Service.Admin.
//   - Another tenant's session is 404 delivery_not_found on revoke (as on every requester route
//     of the service): a 404 does not reveal that the id exists elsewhere.
//   - Recipient routes are anonymous functions (the portal calls them from the recipient's
//     browser, CORS for the portal origin only); the token protects them. They do not check the
//     licence: a link issued under a valid licence works until it expires or is revoked.
//   - 410 Gone on every recipient route once the session expired or was revoked, also when the
//     token itself lapsed with the session (checked with a codec that accepts lapsed tokens
//     only to tell "gone" from "invalid").
//   - GET metadata changes nothing and writes no audit event; opened/downloaded are recorded
//     only through POST .../access. POST .../download hands out the same short-lived URL as
//     GET .../sas (both audited as delivery.sas_issued with "via").
//   - The SAS URL lives 15 minutes, never beyond the session's expiry. It points at the
//     session's own copy of the document (deliveries/<deliveryId>.pdf, made by the first
//     issue); revoke deletes the copy, so URLs issued before it fail at once (404) while the
//     other deliveries of the document keep working.
package deliveryapi

import (
	"net/http"
	"time"

	"github.com/esign-svc/esign/dispatcher/guard"
	"github.com/esign-svc/esign/shared/auth"
	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/licence"
	"github.com/esign-svc/esign/shared/licensing"
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/pii"
	"github.com/esign-svc/esign/shared/tokens"
	"github.com/esign-svc/esign/shared/web"
)

// API holds what the routes need.
type API struct {
	Creator    *delivery.Creator    // the create use case
	Deliveries *delivery.Deliveries // the use cases on a stored session (its OTPBlock is the code flow's)
	Tokens     *tokens.Codec
	Lapsed     *tokens.Codec // see LapsedCodec; nil: a lapsed token is 401
	Hasher     *pii.Hasher
	Verifier   *auth.Verifier
	Licence    *licence.Licence
	Meter      licensing.Meter // delivery.created per new delivery (DESIGN 19)
	Email      notify.Sender   // OTP codes
	// PortalURL is the portal's base: portalUrl = {PortalURL}/deliver/{deliveryId}?t=<token>.
	PortalURL    string
	PortalOrigin string // the one CORS origin of the recipient routes
	Now          func() time.Time
}

// LapsedCodec verifies delivery tokens whose own expiry passed, only to answer 410 for a
// session that ended: same keys, a leeway as long as the longest session plus an hour.
func LapsedCodec(ring *tokens.KeyRing) *tokens.Codec {
	return tokens.NewCodec(ring, tokens.WithLeeway(delivery.MaxExpiresInHours*time.Hour+time.Hour))
}

// Routes registers the routes. Create queues invitations and uploads, so its function is
// invoked; the others are forwarded.
func (a *API) Routes(mux *http.ServeMux) {
	c := recipientCORS(a.PortalOrigin)
	mux.Handle("POST /api/delivery", web.Handle(a.create))
	mux.Handle("GET /api/delivery-sessions", web.Handle(a.list))
	mux.Handle("POST /api/delivery/{deliveryId}/revoke", web.Handle(a.revoke))

	mux.Handle("OPTIONS /api/delivery/{deliveryId}/", c.Preflight("GET, POST, OPTIONS"))
	mux.Handle("OPTIONS /api/delivery/{deliveryId}", c.Preflight("GET, OPTIONS"))
	mux.Handle("GET /api/delivery/{deliveryId}", c.Wrap(web.Handle(a.metadata)))
	mux.Handle("GET /api/delivery/{deliveryId}/sas", c.Wrap(web.Handle(a.sas)))
	mux.Handle("POST /api/delivery/{deliveryId}/download", c.Wrap(web.Handle(a.download)))
	mux.Handle("POST /api/delivery/{deliveryId}/access", c.Wrap(web.Handle(a.access)))
	mux.Handle("POST /api/delivery/{deliveryId}/otp/send", c.Wrap(web.Handle(a.otpSend)))
	mux.Handle("POST /api/delivery/{deliveryId}/otp/verify", c.Wrap(web.Handle(a.otpVerify)))
}

func (a *API) now() time.Time { return a.Now().UTC() }

// caller is the requester routes' check (guard.Gate): 401, then licence and role 403s.
func (a *API) caller(r *http.Request, roles ...string) (auth.Principal, error) {
	return guard.Gate{Verifier: a.Verifier, Licence: a.Licence, Feature: licence.FeatureDelivery}.Caller(r, roles...)
}

func initiator(r *http.Request, p auth.Principal) delivery.Actor {
	return delivery.Actor{Kind: "initiator", ID: p.CallerID(), IP: web.ClientIP(r), UserAgent: web.UserAgent(r)}
}

func recipientActor(r *http.Request, deliveryID string) delivery.Actor {
	return delivery.Actor{Kind: "recipient", ID: deliveryID, IP: web.ClientIP(r), UserAgent: web.UserAgent(r)}
}
