package workflowapi

import (
	"net/http"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/auth"
	"github.com/esign-svc/esign/shared/kernel"
	sharedtext "github.com/esign-svc/esign/shared/text"
	"github.com/esign-svc/esign/shared/web"
	"github.com/esign-svc/esign/shared/workflow"
)

// jwtRoles may read a workflow of their tenant (status, export).
var jwtRoles = []string{auth.RoleInitiator, auth.RoleWorkflowApprover, auth.RoleAdmin}

// own authenticates the JWT with one of roles and reads the route's workflow of the caller's
// tenant (404 for another tenant's).
func (a *API) own(r *http.Request, roles ...string) (*workflow.Workflow, error) {
	p, err := a.gate(r, roles...)
	if err != nil {
		return nil, err
	}
	x, _, err := a.Workflows.Read(r.Context(), workflow.Access{Tenant: p.TenantID}, r.PathValue("workflowId"), false)
	return x, err
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

// caller is the JWT approver deciding: the caller's tenant, oid, display name and e-mail, and a
// Service.Admin's stand-in reason.
func caller(p auth.Principal, reason string) workflow.Decider {
	return workflow.Decider{Caller: &workflow.Caller{Tenant: p.TenantID, OID: p.CallerID(), Name: sharedtext.Clean(p.Name, maxApproverName),
		Email: p.Email, Admin: p.HasRole(auth.RoleAdmin), Reason: reason}}
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
	x, err := a.Workflows.Approve(r.Context(), r.PathValue("workflowId"), caller(p, req.Reason), actor(r, "approver", p.CallerID()), req.Comment)
	return a.decided(w, x, "", err)
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
	d, who, err := a.decider(w, r, req.Reason)
	if err != nil {
		return err
	}
	x, err := a.Workflows.Reject(r.Context(), r.PathValue("workflowId"), d, who, req.Comment)
	return a.decided(w, x, d.Turn, err)
}

// decider is who decides on a route open to both kinds of caller: with a `token`, the current
// reviewer's turn; else the JWT of a Workflow.Approver or Service.Admin with reason.
func (a *API) decider(w http.ResponseWriter, r *http.Request, reason string) (workflow.Decider, kernel.Actor, error) {
	if r.URL.Query().Has("token") {
		id, err := a.reviewer(w, r)
		return workflow.Decider{Turn: id}, actor(r, "reviewer", id), err
	}
	p, err := a.gate(r, auth.RoleWorkflowApprover, auth.RoleAdmin)
	if err != nil {
		return workflow.Decider{}, kernel.Actor{}, err
	}
	return caller(p, reason), actor(r, "approver", p.CallerID()), nil
}

// decided answers a decision: the workflow's stage, or err (a spent reviewer turn gets no
// fresh token). The decision spent a reviewer's turn: the fresh token answered would be dead
// at once.
func (a *API) decided(w http.ResponseWriter, x *workflow.Workflow, turn string, err error) error {
	if err != nil {
		return spent(w, err)
	}
	if turn != "" && !x.ReviewerLive(turn) {
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
	var req changesRequest
	if err := web.DecodeJSON(r, web.MaxJSONBody, &req); err != nil {
		return err
	}
	d, who, err := a.decider(w, r, req.Reason)
	if err != nil {
		return err
	}
	x, err := a.Workflows.RequestChanges(r.Context(), r.PathValue("workflowId"), d, who, req.Changes)
	return a.decided(w, x, d.Turn, err)
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
	var req governanceRequest
	if err := web.DecodeJSON(r, web.MaxJSONBody, &req); err != nil {
		return err
	}
	id, err := a.reviewer(w, r)
	if err != nil {
		return err
	}
	x, err := a.Workflows.Governance(r.Context(), r.PathValue("workflowId"), id, actor(r, "reviewer", id), req.Decision, req.Justification)
	return a.decided(w, x, id, err)
}

// escalate is POST /api/workflow/{workflowId}/escalate (JWT Esign.Initiator): the current
// stage's next approver is notified; the previous one's reviewer token dies. Errors: 401; 403;
// 404; 409 invalid_state, no_further_approver.
func (a *API) escalate(w http.ResponseWriter, r *http.Request) error {
	p, err := a.gate(r, auth.RoleInitiator)
	if err != nil {
		return err
	}
	x, err := a.Workflows.Escalate(r.Context(), p.TenantID, r.PathValue("workflowId"), actor(r, "initiator", p.CallerID()), once(func() error { return web.NoBody(r) }))
	return a.decided(w, x, "", err)
}

// cancel is POST /api/workflow/{workflowId}/cancel (JWT Esign.Initiator): a live workflow ends
// as cancelled. Errors: 401; 403; 404; 409 invalid_state.
func (a *API) cancel(w http.ResponseWriter, r *http.Request) error {
	p, err := a.gate(r, auth.RoleInitiator)
	if err != nil {
		return err
	}
	x, err := a.Workflows.Cancel(r.Context(), p.TenantID, r.PathValue("workflowId"), actor(r, "initiator", p.CallerID()), once(func() error { return web.NoBody(r) }))
	return a.decided(w, x, "", err)
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
	p, err := a.gate(r, auth.RoleInitiator, auth.RoleAdmin)
	if err != nil {
		return err
	}
	var req sealRequest
	body := once(func() error { return web.DecodeOptionalJSON(r, web.MaxJSONBody, &req) })
	x, err := a.Workflows.Seal(r.Context(), p.TenantID, r.PathValue("workflowId"), actor(r, "initiator", p.CallerID()), func() (workflow.Sealer, error) {
		if err := body(); err != nil {
			return workflow.Sealer{}, err
		}
		return workflow.Sealer{Admin: p.HasRole(auth.RoleAdmin), Reason: req.Reason}, nil
	})
	return a.decided(w, x, "", err)
}

// once is a body rule the use case runs after its tenant check: the body is read on the first
// call only (the store may run a transition again after a concurrent write).
func once(read func() error) func() error {
	done := false
	var err error
	return func() error {
		if !done {
			done, err = true, read()
		}
		return err
	}
}
