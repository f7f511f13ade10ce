package workflowapi

import (
	"net/http"
	"strings"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/auth"
	"github.com/esign-svc/esign/shared/kernel"
	sharedtext "github.com/esign-svc/esign/shared/text"
	"github.com/esign-svc/esign/shared/web"
	"github.com/esign-svc/esign/shared/workflow"
)

// jwtRoles may read a workflow of their tenant (status, export).
var jwtRoles = []string{auth.RoleInitiator, auth.RoleWorkflowApprover, auth.RoleAdmin}

// own authenticates the JWT with one of roles and loads the route's workflow of the caller's
// tenant (404 for another tenant's).
func (a *API) own(r *http.Request, roles ...string) (*workflow.Workflow, error) {
	p, err := a.gate(r, roles...)
	if err != nil {
		return nil, err
	}
	return a.loadOwn(r.Context(), p.TenantID, r.PathValue("workflowId"))
}

func requiredField(field, msg string) error {
	return apperr.Invalid(workflow.CodeInvalidRequest, apperr.Field(field, msg))
}

type decisionView struct {
	WorkflowID           string `json:"workflowId"`
	State                string `json:"state"`
	CurrentApprovalStage int    `json:"currentApprovalStage"`
	TotalApprovalStages  int    `json:"totalApprovalStages"`
}

func decisionOf(x *workflow.Workflow) decisionView {
	return decisionView{WorkflowID: x.ID, State: string(x.State), CurrentApprovalStage: statusOf(x).CurrentApprovalStage,
		TotalApprovalStages: x.TotalStages}
}

type commentRequest struct {
	Comment string `json:"comment"`
	// Reason is a Service.Admin's reason to decide for the stage's named approver (DESIGN 14).
	Reason string `json:"reason"`
}

// jwtApprover is the JWT approver of x's current stage: the position of the caller's e-mail in
// the stage's routing sequence (-1 when the stage does not name it: only an admin with a reason
// may then decide, the domain's rule), its keyed hash, the caller's oid and display name, and
// the admin's stand-in reason.
func (a *API) jwtApprover(p auth.Principal, s *workflow.Schema, x *workflow.Workflow, reason string) workflow.Approver {
	by := workflow.Approver{Index: -1, OID: p.CallerID(), Name: sharedtext.Clean(p.Name, maxApproverName), Admin: p.HasRole(auth.RoleAdmin),
		Reason: reason, AllowSelf: a.AllowSelfApproval}
	if p.Email != "" {
		by.Hash = a.Hasher.Email(p.Email)
	}
	if x.Stage < len(s.Stages) {
		for i, addr := range s.Stages[x.Stage].Approvers {
			if p.Email != "" && strings.EqualFold(addr, p.Email) {
				by.Index = i
				if i == x.Approver {
					break
				}
			}
		}
	}
	return by
}

// reviewerApprover is the current approver named by a live reviewer turn.
func (a *API) reviewerApprover(id string, s *workflow.Schema, x *workflow.Workflow) (workflow.Approver, error) {
	by, err := turn(x, id)
	if err != nil {
		return by, err
	}
	by.AllowSelf = a.AllowSelfApproval
	if x.Stage < len(s.Stages) && x.Approver < len(s.Stages[x.Stage].Approvers) {
		by.Hash = a.Hasher.Email(s.Stages[x.Stage].Approvers[x.Approver])
	}
	return by, nil
}

// maxApproverName bounds the JWT's display name kept in a decision (the sealed record's).
const maxApproverName = 200

// approve is POST /api/workflow/{workflowId}/approve {comment, reason} (JWT Workflow.Approver,
// or Service.Admin standing in for the named approver with a reason): the current stage passes;
// the next stage's approver is notified, or after the last the seal is queued. Errors: 400
// reason; 401; 403 role, not_current_approver, self_approval, stage_already_decided_by_you,
// approver_not_named, stand_in_reason_required; 404; 409 invalid_state, rules_failed.
func (a *API) approve(w http.ResponseWriter, r *http.Request) error {
	p, err := a.gate(r, auth.RoleWorkflowApprover, auth.RoleAdmin)
	if err != nil {
		return err
	}
	var req commentRequest
	if err := web.DecodeOptionalJSON(r, web.MaxJSONBody, &req); err != nil {
		return err
	}
	return a.jwtDecision(w, r, p, req.Reason, func(_ *workflow.Schema, x *workflow.Workflow, by workflow.Approver) (kernel.Change, error) {
		return x.Approve(by, req.Comment, a.now())
	})
}

// reject is POST /api/workflow/{workflowId}/reject {comment, reason}: with a `token`, the
// current reviewer's; else the JWT of a Workflow.Approver (or a Service.Admin standing in with a
// reason). The workflow ends as rejected. The body rule answers first (one route, two kinds of
// caller). The duties rules answer 403 as for approve.
func (a *API) reject(w http.ResponseWriter, r *http.Request) error {
	var req commentRequest
	if err := web.DecodeOptionalJSON(r, web.MaxJSONBody, &req); err != nil {
		return err
	}
	rej := func(x *workflow.Workflow, by workflow.Approver) (kernel.Change, error) {
		return x.Reject(by, req.Comment, a.now())
	}
	if !r.URL.Query().Has("token") {
		p, err := a.gate(r, auth.RoleWorkflowApprover, auth.RoleAdmin)
		if err != nil {
			return err
		}
		return a.jwtDecision(w, r, p, req.Reason, func(_ *workflow.Schema, x *workflow.Workflow, by workflow.Approver) (kernel.Change, error) {
			return rej(x, by)
		})
	}
	id, err := a.reviewer(w, r)
	if err != nil {
		return err
	}
	return a.reviewerDecision(w, r, id, func(_ *workflow.Schema, x *workflow.Workflow, by workflow.Approver) (kernel.Change, error) {
		return rej(x, by)
	})
}

func (a *API) jwtDecision(w http.ResponseWriter, r *http.Request, p auth.Principal, reason string, decide func(*workflow.Schema, *workflow.Workflow, workflow.Approver) (kernel.Change, error)) error {
	if _, err := a.loadOwn(r.Context(), p.TenantID, r.PathValue("workflowId")); err != nil {
		return err
	}
	_, s, err := a.loadSchema(r.Context(), r.PathValue("workflowId"))
	if err != nil {
		return err
	}
	x, err := a.update(w, r, actor(r, "approver", p.CallerID()), func(x *workflow.Workflow) (kernel.Change, error) {
		return decide(s, x, a.jwtApprover(p, s, x, reason))
	})
	if err != nil {
		return err
	}
	return web.JSON(w, http.StatusOK, decisionOf(x))
}

func (a *API) reviewerDecision(w http.ResponseWriter, r *http.Request, id string, decide func(*workflow.Schema, *workflow.Workflow, workflow.Approver) (kernel.Change, error)) error {
	_, s, err := a.loadSchema(r.Context(), r.PathValue("workflowId"))
	if err != nil {
		return err
	}
	x, err := a.update(w, r, actor(r, "reviewer", id), func(x *workflow.Workflow) (kernel.Change, error) {
		by, err := a.reviewerApprover(id, s, x)
		if err != nil {
			return kernel.Change{}, err
		}
		return decide(s, x, by)
	})
	if err != nil {
		return err
	}
	// The decision spent the turn: the fresh token answered would be dead at once.
	if !x.ReviewerLive(id) {
		w.Header().Del(HeaderPortalToken)
	}
	return web.JSON(w, http.StatusOK, decisionOf(x))
}

type changesRequest struct {
	Changes []workflow.ChangeRequest `json:"changes"`
	Reason  string                   `json:"reason"` // a Service.Admin's stand-in reason, JWT callers only
}

// requestChanges is POST /api/workflow/{workflowId}/request-changes {changes[], reason}: with a
// `token`, the current reviewer's; else, as for reject, the JWT of a Workflow.Approver (or a
// Service.Admin standing in with a reason), the only way to ask for changes on a workflow
// without approval stages (no reviewer link is sent there). changes-requested, the participant
// notified. Errors: 400 at changes[i].<key>; 401; 403 role, reviewer_token_required,
// reviewer_token_spent and the duties codes of approve; 404; 409.
func (a *API) requestChanges(w http.ResponseWriter, r *http.Request) error {
	move := func(req changesRequest, s *workflow.Schema, x *workflow.Workflow, by workflow.Approver) (kernel.Change, error) {
		return x.RequestChanges(s, by, req.Changes, a.now())
	}
	if r.URL.Query().Has("token") {
		return reviewerJSON(a, w, r, move)
	}
	var req changesRequest
	if err := web.DecodeJSON(r, web.MaxJSONBody, &req); err != nil {
		return err
	}
	p, err := a.gate(r, auth.RoleWorkflowApprover, auth.RoleAdmin)
	if err != nil {
		return err
	}
	return a.jwtDecision(w, r, p, req.Reason, func(s *workflow.Schema, x *workflow.Workflow, by workflow.Approver) (kernel.Change, error) {
		return move(req, s, x, by)
	})
}

// reviewerJSON is a reviewer route with a JSON body: the body rule, the reviewer token, then
// the decision on the workflow.
func reviewerJSON[T any](a *API, w http.ResponseWriter, r *http.Request, decide func(T, *workflow.Schema, *workflow.Workflow, workflow.Approver) (kernel.Change, error)) error {
	var req T
	if err := web.DecodeJSON(r, web.MaxJSONBody, &req); err != nil {
		return err
	}
	id, err := a.reviewer(w, r)
	if err != nil {
		return err
	}
	return a.reviewerDecision(w, r, id, func(s *workflow.Schema, x *workflow.Workflow, by workflow.Approver) (kernel.Change, error) {
		return decide(req, s, x, by)
	})
}

type governanceRequest struct {
	Decision      string `json:"decision"`
	Justification string `json:"justification"`
}

// governance is POST /api/workflow/{workflowId}/governance-decision?token= {decision,
// justification} (the current reviewer): approve, approve-with-exception (justification
// required, kept verbatim) or reject. Errors: 400 decision, justification; 401; 403; 404; 409
// invalid_state, rules_failed.
func (a *API) governance(w http.ResponseWriter, r *http.Request) error {
	return reviewerJSON(a, w, r, func(req governanceRequest, _ *workflow.Schema, x *workflow.Workflow, by workflow.Approver) (kernel.Change, error) {
		return x.GovernanceDecision(by, req.Decision, req.Justification, a.now())
	})
}

// escalate is POST /api/workflow/{workflowId}/escalate (JWT Esign.Initiator): the current
// stage's next approver is notified; the previous one's reviewer token dies. Errors: 401; 403;
// 404; 409 invalid_state, no_further_approver.
func (a *API) escalate(w http.ResponseWriter, r *http.Request) error {
	return a.initiatorMove(w, r, []string{auth.RoleInitiator}, web.NoBody, func(_ auth.Principal, s *workflow.Schema, x *workflow.Workflow) (kernel.Change, error) {
		return x.Escalate(s, a.now())
	})
}

// cancel is POST /api/workflow/{workflowId}/cancel (JWT Esign.Initiator): a live workflow ends
// as cancelled. Errors: 401; 403; 404; 409 invalid_state.
func (a *API) cancel(w http.ResponseWriter, r *http.Request) error {
	return a.initiatorMove(w, r, []string{auth.RoleInitiator}, web.NoBody, func(_ auth.Principal, _ *workflow.Schema, x *workflow.Workflow) (kernel.Change, error) {
		return x.Cancel(a.now())
	})
}

type sealRequest struct {
	Reason string `json:"reason"` // optional: audited and printed on the sealed record
}

// seal is POST /api/workflow/{workflowId}/seal {reason} (JWT Esign.Initiator or Service.Admin;
// the body is optional): a retry in sealing, or sealing without the approval gate from any state
// that has not ended, data that fail the rules included (the failed rules are printed on the
// sealed record); around approval stages still pending of a template that locks
// workflow.schemaPath, Service.Admin only. The workflow-seal message is queued. Errors: 400
// reason; 401; 403 role, seal_admin_only; 404; 409 invalid_state.
func (a *API) seal(w http.ResponseWriter, r *http.Request) error {
	var req sealRequest
	decode := func(r *http.Request) error { return web.DecodeOptionalJSON(r, web.MaxJSONBody, &req) }
	return a.initiatorMove(w, r, []string{auth.RoleInitiator, auth.RoleAdmin}, decode, func(p auth.Principal, s *workflow.Schema, x *workflow.Workflow) (kernel.Change, error) {
		return x.Seal(s, workflow.Sealer{Admin: p.HasRole(auth.RoleAdmin), Reason: req.Reason}, a.now())
	})
}

// initiatorMove is a JWT route of roles on the caller's workflow: the body read by decode, then
// move on the workflow with its schema.
func (a *API) initiatorMove(w http.ResponseWriter, r *http.Request, roles []string, decode func(*http.Request) error,
	move func(auth.Principal, *workflow.Schema, *workflow.Workflow) (kernel.Change, error)) error {
	p, err := a.gate(r, roles...)
	if err != nil {
		return err
	}
	if _, err := a.loadOwn(r.Context(), p.TenantID, r.PathValue("workflowId")); err != nil {
		return err
	}
	if err := decode(r); err != nil {
		return err
	}
	_, s, err := a.loadSchema(r.Context(), r.PathValue("workflowId"))
	if err != nil {
		return err
	}
	x, err := a.update(w, r, actor(r, "initiator", p.CallerID()), func(x *workflow.Workflow) (kernel.Change, error) { return move(p, s, x) })
	if err != nil {
		return err
	}
	return web.JSON(w, http.StatusOK, decisionOf(x))
}
