// Package guard is the one check every requester route makes, in this order: a valid Entra ID
// JWT (401), the licence's feature for the route's area and the licence's tenant (403), and one
// of the route's roles (403).
package guard

import (
	"net/http"

	"github.com/esign-svc/esign/shared/auth"
	"github.com/esign-svc/esign/shared/licence"
)

// Gate holds what the check needs.
type Gate struct {
	Verifier *auth.Verifier
	Licence  *licence.Licence
	Feature  licence.Feature
}

// Caller authenticates r and checks licence and roles. Errors: auth's 401s; licence_* and
// role_required 403s.
func (g Gate) Caller(r *http.Request, roles ...string) (auth.Principal, error) {
	p, err := g.Verifier.Authenticate(r)
	if err != nil {
		return p, err
	}
	if err := g.Licence.Require(g.Feature); err != nil {
		return p, err
	}
	if err := g.Licence.CheckTenant(p.TenantID); err != nil {
		return p, err
	}
	return p, auth.RequireAny(p, roles...)
}
