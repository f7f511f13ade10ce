package portalapi

import (
	"context"
	"net/http"
	"unicode/utf8"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/text"
	"github.com/esign-svc/esign/shared/tokens"
	"github.com/esign-svc/esign/shared/web"
)

// MaxDeclineReason bounds the optional decline reason, in characters.
const MaxDeclineReason = 500

// ErrConsentVersion means the portal showed statements of another wording than the current one.
var ErrConsentVersion = &apperr.Error{Kind: apperr.KindConflict, Code: "consent_version_changed",
	Detail: "the consent statements changed; reload them and accept the current version " + esign.ConsentVersion}

// transition is a use case on the slot the token names (esign.Sessions: Viewed, Consent,
// Decline).
type transition func(ctx context.Context, c tokens.PortalAccess, d esign.Device) (*esign.Session, *esign.Slot, error)

// act verifies the bearer token, runs t and answers the slot's state with a refreshed token. t
// checks the token on the session it loads, in authorize's order: 410/409 for an ended session
// first, then 401 for a token not the slot's current one, then (for a write) 409
// device_secondary for a view-only token.
func (a *API) act(w http.ResponseWriter, r *http.Request, t transition) error {
	claims, err := a.bearerClaims(r)
	if err != nil {
		return err
	}
	s, sl, err := t(r.Context(), claims, device(r))
	if err != nil {
		return err
	}
	next, issued, err := a.refresh(claims)
	if err != nil {
		return err
	}
	return web.JSON(w, http.StatusOK, stateView{tokenFields: newTokenFields(next, issued),
		SlotState: string(sl.State), SessionState: string(s.State), ConsentsAccepted: accepted(sl)})
}

// viewed is POST /api/esign/portal/viewed: the signer opened and scrolled through the document.
// A view-only token may report it. Errors: 401; 410; 409 for a closed slot.
func (a *API) viewed(w http.ResponseWriter, r *http.Request) error {
	if err := web.NoBody(r); err != nil {
		return err
	}
	return a.act(w, r, a.Sessions.Viewed)
}

type consentRequest struct {
	Statements []string `json:"statements"`
	Version    string   `json:"version"`
	Language   string   `json:"language,omitempty"` // of the statements shown; "": the slot's locale, else English
}

// consent is POST /api/esign/portal/consent {"statements": [...], "version": "..."}: records the
// acceptance of the named statements of the current wording. Errors: 400 for a missing or
// unknown statement or a missing version; 409 consent_version_changed for another version,
// device_secondary for a view-only token, not_viewed before the document was viewed (with or
// without OTP);
// 401; 410.
func (a *API) consent(w http.ResponseWriter, r *http.Request) error {
	var req consentRequest
	if err := web.DecodeJSON(r, web.MaxJSONBody, &req); err != nil {
		return err
	}
	var bad []apperr.FieldError
	if len(req.Statements) == 0 || len(req.Statements) > len(esign.ConsentStatements) {
		bad = append(bad, apperr.Field("statements", "name one to three consent statement ids"))
	}
	if req.Version == "" {
		bad = append(bad, apperr.Field("version", "the version of the statements shown is required"))
	}
	bad = append(bad, checkLanguage(req.Language)...)
	if len(bad) > 0 {
		return apperr.Invalid(apperr.CodeInvalidRequest, bad...)
	}
	if req.Version != esign.ConsentVersion {
		return ErrConsentVersion
	}
	return a.act(w, r, func(ctx context.Context, c tokens.PortalAccess, d esign.Device) (*esign.Session, *esign.Slot, error) {
		return a.Sessions.ConsentIn(ctx, c, d, req.Statements, req.Language)
	})
}

type declineRequest struct {
	Reason string `json:"reason,omitempty"`
}

// decline is POST /api/esign/portal/decline {"reason": "..."} (body optional): the signer
// declines. The reason is evidence: the slot.declined audit event records it (and whether one
// was given), and the evidence certificate prints it. A declined required slot ends the session (cancelled, reason declined); the
// requester's decline notice is queued on the notify output. Errors: 400 reason longer than
// 500 characters or not text (shared/text: lines broken by \n or \r\n, no other control,
// separator or bidi control); 409 device_secondary or a closed slot; 401; 410.
func (a *API) decline(w http.ResponseWriter, r *http.Request) error {
	var req declineRequest
	if err := web.DecodeOptionalJSON(r, web.MaxJSONBody, &req); err != nil {
		return err
	}
	if msg := text.Problem(req.Reason, text.Lines); msg != "" {
		return apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field("reason", msg))
	}
	if utf8.RuneCountInString(req.Reason) > MaxDeclineReason {
		return apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field("reason", "at most 500 characters of text"))
	}
	return a.act(w, r, func(ctx context.Context, c tokens.PortalAccess, d esign.Device) (*esign.Session, *esign.Slot, error) {
		return a.Sessions.Decline(ctx, c, d, req.Reason)
	})
}
