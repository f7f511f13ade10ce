// Package auth checks the identity provider's (Entra ID) JWTs on initiator, approver and admin
// routes: signature against the issuer's JWKS, an algorithm allow-list, iss, aud, exp and nbf.
// The result is a Principal whose tenant is the token's `tid` and whose roles are its `roles`.
package auth

import (
	"slices"

	"github.com/esign-svc/esign/shared/apperr"
)

// App roles (the `roles` claim, defined on the API's app registration).
const (
	RoleInitiator        = "Esign.Initiator"
	RoleDispatchApprover = "Dispatch.Approver"
	RoleWorkflowApprover = "Workflow.Approver"
	RoleAdmin            = "Service.Admin"
)

// Stable error codes.
const (
	CodeRequired        = "auth_required"         // 401: no bearer token
	CodeInvalid         = "auth_invalid"          // 401: any failed check
	CodeRoleRequired    = "role_required"         // 403: authenticated, missing role
	CodeKeysUnavailable = "auth_keys_unavailable" // 503: the JWKS could not be fetched at all
)

// Principal is the authenticated caller.
type Principal struct {
	TenantID string   // tid
	Subject  string   // sub
	ObjectID string   // oid
	Name     string   // name (may be empty for app-only tokens)
	Roles    []string // roles
	// Email is the caller's address: the `email` claim, else `preferred_username` or `upn`
	// when it is an address; empty for app-only tokens. Personal data: never logged.
	Email string
}

// CallerID is the caller's id as the audit trail records it: the object id (oid), else the
// subject (sub) for tokens without one.
func (p Principal) CallerID() string {
	if p.ObjectID != "" {
		return p.ObjectID
	}
	return p.Subject
}

// HasRole reports whether the principal holds role (exact, case-sensitive, as Entra emits it).
func (p Principal) HasRole(role string) bool { return slices.Contains(p.Roles, role) }

// Require returns nil when p holds role, else *apperr.Error KindForbidden role_required naming
// the role.
func Require(p Principal, role string) error {
	return RequireAny(p, role)
}

// RequireAny returns nil when p holds at least one of roles, else KindForbidden role_required.
func RequireAny(p Principal, roles ...string) error {
	for _, r := range roles {
		if p.HasRole(r) {
			return nil
		}
	}
	e := apperr.New(apperr.KindForbidden, CodeRoleRequired, "this operation requires the role %s", joinOr(roles))
	e.Extra = map[string]any{"requiredRoles": roles}
	return e
}

func joinOr(roles []string) string {
	switch len(roles) {
	case 0:
		return "(none configured)"
	case 1:
		return roles[0]
	}
	out := roles[0]
	for _, r := range roles[1 : len(roles)-1] {
		out += ", " + r
	}
	return out + " or " + roles[len(roles)-1]
}

func invalid(detail string) error {
	return apperr.New(apperr.KindUnauthenticated, CodeInvalid, "%s", detail)
}

func apperrNew(code, detail string) error {
	return apperr.New(apperr.KindUnauthenticated, code, "%s", detail)
}
