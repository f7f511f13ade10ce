// Package webhookapi serves the webhook subscription routes of DESIGN 17: a tenant's
// subscriptions (create, list, get, delete), secret rotation, the deliveries log and a ping.
// Every route needs an Entra ID JWT with the role Service.Admin and a current licence
// (dispatcher/guard); another tenant's subscription is the same 404 as a missing one. The use
// cases are shared/event's; this package decodes, authorises, calls one and encodes. A secret
// is in an answer only when it is made (create, rotate-secret), never in a log.
package webhookapi

import (
	"net/http"
	"strconv"
	"time"

	"github.com/esign-svc/esign/dispatcher/guard"
	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/auth"
	"github.com/esign-svc/esign/shared/event"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/licence"
	"github.com/esign-svc/esign/shared/web"
)

// maxBody bounds a create body.
const maxBody = 16 << 10

// API holds what the routes need.
type API struct {
	Webhooks *event.Webhooks
	Verifier *auth.Verifier
	Licence  *licence.Licence
}

// Routes registers the webhook routes.
func (a *API) Routes(mux *http.ServeMux) {
	mux.Handle("POST /api/webhooks", web.Handle(a.create))
	mux.Handle("GET /api/webhooks", web.Handle(a.list))
	mux.Handle("GET /api/webhooks/{id}", web.Handle(a.get))
	mux.Handle("DELETE /api/webhooks/{id}", web.Handle(a.delete))
	mux.Handle("POST /api/webhooks/{id}/rotate-secret", web.Handle(a.rotate))
	mux.Handle("GET /api/webhooks/{id}/deliveries", web.Handle(a.deliveries))
	mux.Handle("POST /api/webhooks/{id}/ping", web.Handle(a.ping))
}

// caller is an admin of a tenant with a current licence.
func (a *API) caller(r *http.Request) (auth.Principal, kernel.Actor, error) {
	p, err := guard.Gate{Verifier: a.Verifier, Licence: a.Licence}.Caller(r, auth.RoleAdmin)
	return p, kernel.Actor{Kind: "admin", ID: p.CallerID(), IP: web.ClientIP(r), UserAgent: web.UserAgent(r)}, err
}

// bodiless is caller for a route that takes no body.
func (a *API) bodiless(r *http.Request) (auth.Principal, kernel.Actor, error) {
	p, by, err := a.caller(r)
	if err != nil {
		return p, by, err
	}
	return p, by, web.NoBody(r)
}

// Subscription is a subscription as the API shows it (no secret).
type Subscription struct {
	ID             string   `json:"id"`
	URL            string   `json:"url"`
	Events         []string `json:"events"`
	Description    string   `json:"description,omitempty"`
	State          string   `json:"state"`
	DisabledReason string   `json:"disabledReason,omitempty"`
	DisabledAt     string   `json:"disabledAt,omitempty"`
	CreatedAt      string   `json:"createdAt"`
}

// Created is the answer of create: the subscription with its secret, shown this once.
type Created struct {
	Subscription
	Secret string `json:"secret"`
}

// Rotated is the answer of rotate-secret.
type Rotated struct {
	ID     string `json:"id"`
	Secret string `json:"secret"`
	// PreviousSecretExpiresAt is when the previous secret stops signing.
	PreviousSecretExpiresAt string `json:"previousSecretExpiresAt"`
}

// Deliveries is a page of the deliveries log.
type Deliveries struct {
	Items      []event.Attempt `json:"items"`
	NextCursor string          `json:"nextCursor,omitempty"`
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func view(s *event.Subscription) Subscription {
	return Subscription{ID: s.ID, URL: s.URL, Events: s.Events, Description: s.Description, State: s.State,
		DisabledReason: s.DisabledReason, DisabledAt: stamp(s.DisabledAt), CreatedAt: stamp(s.CreatedAt)}
}

func (a *API) create(w http.ResponseWriter, r *http.Request) error {
	p, by, err := a.caller(r)
	if err != nil {
		return err
	}
	var req event.CreateRequest
	if err := web.DecodeJSON(r, maxBody, &req); err != nil {
		return err
	}
	c, err := a.Webhooks.Create(r.Context(), p.TenantID, by, req)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/api/webhooks/"+c.Sub.ID)
	return web.JSON(w, http.StatusCreated, Created{Subscription: view(c.Sub), Secret: c.Secret})
}

func (a *API) list(w http.ResponseWriter, r *http.Request) error {
	p, _, err := a.bodiless(r)
	if err != nil {
		return err
	}
	subs, err := a.Webhooks.List(r.Context(), p.TenantID)
	if err != nil {
		return err
	}
	out := struct {
		Items []Subscription `json:"items"`
	}{Items: []Subscription{}}
	for _, s := range subs {
		out.Items = append(out.Items, view(s))
	}
	return web.JSON(w, http.StatusOK, out)
}

func (a *API) get(w http.ResponseWriter, r *http.Request) error {
	p, _, err := a.bodiless(r)
	if err != nil {
		return err
	}
	s, err := a.Webhooks.Get(r.Context(), p.TenantID, r.PathValue("id"))
	if err != nil {
		return err
	}
	return web.JSON(w, http.StatusOK, view(s))
}

func (a *API) delete(w http.ResponseWriter, r *http.Request) error {
	p, by, err := a.bodiless(r)
	if err != nil {
		return err
	}
	if err := a.Webhooks.Delete(r.Context(), p.TenantID, r.PathValue("id"), by); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (a *API) rotate(w http.ResponseWriter, r *http.Request) error {
	p, by, err := a.bodiless(r)
	if err != nil {
		return err
	}
	c, err := a.Webhooks.Rotate(r.Context(), p.TenantID, r.PathValue("id"), by)
	if err != nil {
		return err
	}
	return web.JSON(w, http.StatusOK, Rotated{ID: c.Sub.ID, Secret: c.Secret, PreviousSecretExpiresAt: stamp(c.Sub.PrevUntil)})
}

func (a *API) deliveries(w http.ResponseWriter, r *http.Request) error {
	p, _, err := a.bodiless(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	limit := event.DefaultPage
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > event.MaxPage {
			return apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field("limit", "must be 1 to 200"))
		}
		limit = n
	}
	page, err := a.Webhooks.Deliveries(r.Context(), p.TenantID, r.PathValue("id"), q.Get("cursor"), limit)
	if err != nil {
		return err
	}
	out := Deliveries{Items: page.Items, NextCursor: page.Next}
	if out.Items == nil {
		out.Items = []event.Attempt{}
	}
	return web.JSON(w, http.StatusOK, out)
}

func (a *API) ping(w http.ResponseWriter, r *http.Request) error {
	p, _, err := a.bodiless(r)
	if err != nil {
		return err
	}
	at, err := a.Webhooks.Ping(r.Context(), p.TenantID, r.PathValue("id"))
	if err != nil {
		return err
	}
	return web.JSON(w, http.StatusOK, at)
}
