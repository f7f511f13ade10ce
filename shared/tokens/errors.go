package tokens

import "github.com/esign-svc/esign/shared/apperr"

// Stable error codes. Every verification failure is an *apperr.Error of KindUnauthenticated
// with one of these codes; the detail never contains the token.
const (
	CodeMissing     = "token_missing"      // a route that needs a token got none
	CodeIssueFailed = "token_issue_failed" // internal: a token could not be issued
	CodeInvalid     = "token_invalid"      // malformed, bad signature, unknown kid, wrong alg, not yet valid
	CodeExpired     = "token_expired"      // exp (plus leeway) has passed
	CodeWrongKind   = "token_wrong_kind"   // a valid token of another kind (a slot token used as a delivery token, ...)
)

func invalid(detail string) error {
	return apperr.New(apperr.KindUnauthenticated, CodeInvalid, "%s", detail)
}

func expired() error {
	return apperr.New(apperr.KindUnauthenticated, CodeExpired, "the token has expired")
}

func wrongKind() error {
	return apperr.New(apperr.KindUnauthenticated, CodeWrongKind, "the token is not valid for this use")
}
