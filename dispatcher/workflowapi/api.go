// Package workflowapi serves the workflow routes (spec "Workflow", DESIGN 10):
//
//   - initiator routes, Entra ID JWT + licence feature `workflow`, role Esign.Initiator, the
//     creator's tenant only (another tenant's workflow is 404): POST /api/workflow (create),
//     POST .../escalate, POST .../cancel, POST .../seal (also Service.Admin), GET .../status
//     (also the portal token), GET .../export (any of the workflow roles);
//   - approver routes, JWT role Workflow.Approver: POST .../approve, POST .../reject,
//     POST .../request-changes (without a `token`);
//   - participant routes, the participant's portal token (`token`, the portalUrl's `pt`):
//     GET /api/workflow/{id}, PATCH .../step/{stepIndex}, POST .../advance,
//     POST .../fix-validation, POST .../resend-invite;
//   - reviewer routes, a reviewer token (issued per approver with the approval e-mail):
//     POST .../request-changes, POST .../governance-decision, POST .../reject.
//
// Every valid call with a portal token answers a fresh one (4 h) in X-Portal-Token. A reviewer
// token acts only while its approver's turn is current (workflow.ReviewerLive): it dies once that
// approver decided, was escalated past, or the workflow left pending-approval.
//
// Transitions queue their effects as messages (see emit): invitations and approval e-mails on
// workflow-notify, the seal on workflow-seal, the terminal callback on workflow-callback.
package workflowapi

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/esign-svc/esign/dispatcher/guard"
	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/auth"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/licence"
	"github.com/esign-svc/esign/shared/licensing"
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/pii"
	"github.com/esign-svc/esign/shared/template"
	"github.com/esign-svc/esign/shared/tokens"
	"github.com/esign-svc/esign/shared/web"
	"github.com/esign-svc/esign/shared/webhook"
	"github.com/esign-svc/esign/shared/workflow"
)

// HeaderPortalToken carries the fresh portal token of every valid token call.
const HeaderPortalToken = "X-Portal-Token"

// API holds what the routes need.
type API struct {
	OTPBlock time.Duration // how long three locked codes block the participant (OTP_BLOCK_MINUTES; 0: otp.DefaultBlock)
	// Workflows is the workflow's use cases: every route calls one of its methods.
	Workflows *workflow.Workflows
	Templates *template.Loader
	Blobs     workflow.SchemaBlobs // schemaPath reads (blobstore.Store)
	Tokens    *tokens.Codec
	Hasher    *pii.Hasher
	Verifier  *auth.Verifier
	Email     notify.Sender // the participant's OTP codes
	Licence   *licence.Licence
	// Licensing is asked at create after the offline licence (DESIGN 19); nil: the offline
	// licence alone.
	Licensing licensing.Validator
	Callbacks webhook.Policy // the callbackUrl check
	// PortalURL is the portal's base: portalUrl = {PortalURL}/workflow/{workflowId}?pt=<token>.
	PortalURL    string
	PortalOrigin string // the one CORS origin of the token routes
	Now          func() time.Time
	NewID        func() string
}

// Routes registers the routes. The functions whose transitions queue messages are invoked;
// the others are forwarded.
func (a *API) Routes(mux *http.ServeMux) {
	c := web.CORS{Origin: a.PortalOrigin, AllowHeaders: "Content-Type", ExposeHeaders: HeaderPortalToken}
	mux.Handle("POST /api/workflow", web.Handle(a.create))
	mux.Handle("OPTIONS /api/workflow/{workflowId}/", c.Preflight("GET, POST, PATCH, OPTIONS"))
	mux.Handle("OPTIONS /api/workflow/{workflowId}", c.Preflight("GET, OPTIONS"))
	mux.Handle("GET /api/workflow/{workflowId}", c.Wrap(web.Handle(a.get)))
	mux.Handle("PATCH /api/workflow/{workflowId}/step/{stepIndex}", c.Wrap(web.Handle(a.saveStep)))
	mux.Handle("POST /api/workflow/{workflowId}/advance", c.Wrap(web.Handle(a.advance)))
	mux.Handle("POST /api/workflow/{workflowId}/fix-validation", c.Wrap(web.Handle(a.fixValidation)))
	mux.Handle("POST /api/workflow/{workflowId}/request-changes", c.Wrap(web.Handle(a.requestChanges)))
	mux.Handle("POST /api/workflow/{workflowId}/governance-decision", c.Wrap(web.Handle(a.governance)))
	mux.Handle("POST /api/workflow/{workflowId}/approve", web.Handle(a.approve))
	mux.Handle("POST /api/workflow/{workflowId}/reject", c.Wrap(web.Handle(a.reject)))
	mux.Handle("POST /api/workflow/{workflowId}/escalate", web.Handle(a.escalate))
	mux.Handle("POST /api/workflow/{workflowId}/cancel", web.Handle(a.cancel))
	mux.Handle("POST /api/workflow/{workflowId}/seal", web.Handle(a.seal))
	mux.Handle("GET /api/workflow/{workflowId}/status", c.Wrap(web.Handle(a.status)))
	mux.Handle("GET /api/workflow/{workflowId}/export", web.Handle(a.export))
	mux.Handle("POST /api/workflow/{workflowId}/resend-invite", c.Wrap(web.Handle(a.resendInvite)))
	mux.Handle("POST /api/workflow/{workflowId}/otp/send", c.Wrap(web.Handle(a.otpSend)))
	mux.Handle("POST /api/workflow/{workflowId}/otp/verify", c.Wrap(web.Handle(a.otpVerify)))
}

func (a *API) now() time.Time { return a.Now().UTC() }

// gate is the JWT routes' check (guard.Gate): 401, then licence and role 403s.
func (a *API) gate(r *http.Request, roles ...string) (auth.Principal, error) {
	return guard.Gate{Verifier: a.Verifier, Licence: a.Licence, Feature: licence.FeatureWorkflow}.Caller(r, roles...)
}

var (
	errTokenWorkflow = apperr.New(apperr.KindUnauthenticated, tokens.CodeInvalid, "the token is not for this workflow")
	errNeedsReviewer = apperr.New(apperr.KindForbidden, "reviewer_token_required", "this route needs a reviewer token")
	errNeedsPart     = apperr.New(apperr.KindForbidden, "participant_token_required", "this route needs the participant's token")
	errNoToken       = apperr.New(apperr.KindUnauthenticated, tokens.CodeMissing, "the portal token (query parameter token) is required")
)

// portal verifies the `token` query parameter for the route's workflow and sets a fresh token
// in X-Portal-Token. Errors: 401 token_missing, token_invalid, token_expired,
// token_wrong_kind.
func (a *API) portal(w http.ResponseWriter, r *http.Request) (tokens.WorkflowPortal, error) {
	raw := r.URL.Query().Get("token")
	if raw == "" {
		return tokens.WorkflowPortal{}, errNoToken
	}
	t, err := a.Tokens.VerifyWorkflowPortal(raw)
	if err != nil {
		return t, err
	}
	if t.WorkflowID != r.PathValue("workflowId") {
		return t, errTokenWorkflow
	}
	fresh, _, err := a.Tokens.IssueWorkflowPortal(tokens.WorkflowPortal{WorkflowID: t.WorkflowID, Participant: t.Participant, Role: t.Role, Gen: t.Gen})
	if err != nil {
		return t, err
	}
	w.Header().Set(HeaderPortalToken, fresh)
	return t, nil
}

// participant is portal for the participant's routes: a reviewer token is 403. The OTP gate is
// the workflow's (gated).
func (a *API) participant(w http.ResponseWriter, r *http.Request) (tokens.WorkflowPortal, error) {
	t, err := a.portal(w, r)
	if err != nil {
		return t, err
	}
	if t.Role != tokens.RoleParticipant {
		w.Header().Del(HeaderPortalToken)
		return t, errNeedsPart
	}
	return t, nil
}

// reviewer is portal for the reviewer routes: the participant's token is 403; the returned id
// names the approver's turn, checked against the workflow in turn.
func (a *API) reviewer(w http.ResponseWriter, r *http.Request) (string, error) {
	t, err := a.portal(w, r)
	if err != nil {
		return "", err
	}
	if t.Role != tokens.RoleReviewer {
		w.Header().Del(HeaderPortalToken)
		return "", errNeedsReviewer
	}
	return t.Participant, nil
}

// link is a verified portal token's claim on the workflow (workflow.Workflow.Usable).
func link(t tokens.WorkflowPortal) workflow.Link {
	return workflow.Link{Reviewer: t.Role == tokens.RoleReviewer, Turn: t.Participant, Gen: t.Gen}
}

// spent is err with the fresh portal token withdrawn when err says the token can no longer
// act: a reviewer turn that is over, a participant link replaced or ended.
func spent(w http.ResponseWriter, err error) error {
	if errors.Is(err, workflow.ErrTurnOver) || errors.Is(err, workflow.ErrLinkReplaced) || errors.Is(err, workflow.ErrLinkEnded) {
		w.Header().Del(HeaderPortalToken)
	}
	return err
}

// actor is who acts: kind participant, reviewer (id: the reviewer turn), approver or initiator
// (id: the JWT caller), with the request's address and user agent.
func actor(r *http.Request, kind, id string) kernel.Actor {
	return kernel.Actor{Kind: kind, ID: id, IP: web.ClientIP(r), UserAgent: web.UserAgent(r)}
}

// stepIndex is the route's {stepIndex}: 400 invalid_step unless a non-negative integer.
func stepIndex(r *http.Request) (int, error) {
	i, err := strconv.Atoi(r.PathValue("stepIndex"))
	if err != nil || i < 0 {
		return 0, apperr.Invalid(workflow.CodeInvalidStep, apperr.Field("stepIndex", "must be a step index (an integer from 0)"))
	}
	return i, nil
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
