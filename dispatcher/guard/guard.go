// Package guard is the one check every requester route makes, in this order: a valid Entra ID
// JWT (401), the licence's feature for the route's area (none for a route whose features
// depend on what the request makes: then a current licence; the use case asks for the rest)
// and the licence's tenant (403), and one of the route's roles (403).
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
	Feature  licence.Feature // "": none, the licence need only be current
}

// Caller authenticates r and checks licence and roles. Errors: auth's 401s; licence_* and
// role_required 403s.
func (g Gate) Caller(r *http.Request, roles ...string) (auth.Principal, error) {
	p, err := g.Verifier.Authenticate(r)
	if err != nil {
		return p, err
	}
	var area []licence.Feature
	if g.Feature != "" {
		area = append(area, g.Feature)
	}
	if err := g.Licence.Require(area...); err != nil {
		return p, err
	}
	if err := g.Licence.CheckTenant(p.TenantID); err != nil {
		return p, err
	}
	return p, auth.RequireAny(p, roles...)
}
