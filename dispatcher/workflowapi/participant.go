package workflowapi

import (
	"context"
	"net/http"
	"strconv"

	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/template"
	"github.com/esign-svc/esign/shared/tokens"
	"github.com/esign-svc/esign/shared/web"
	"github.com/esign-svc/esign/shared/workflow"
)

type stepView struct {
	Index  int              `json:"index"`
	ID     string           `json:"id"`
	Title  string           `json:"title,omitempty"`
	Fields []template.Field `json:"fields"`
	Data   map[string]any   `json:"data"`
}

type payloadView struct {
	statusView
	Title             string                   `json:"title,omitempty"`
	Governance        bool                     `json:"governance"`
	OrganizationName  string                   `json:"organizationName,omitempty"`
	Message           string                   `json:"message,omitempty"`
	RequireOTP        bool                     `json:"requireOtp"`
	Steps             []stepView               `json:"steps"`
	ValidationResults []template.Result        `json:"validationResults"`
	ChangeRequests    []workflow.ChangeRequest `json:"changeRequests"`
}

type statusView struct {
	WorkflowID           string `json:"workflowId"`
	CorrelationID        string `json:"correlationId"`
	State                string `json:"state"`
	CurrentStepIndex     int    `json:"currentStepIndex"`
	TotalSteps           int    `json:"totalSteps"`
	ValidationOutcome    string `json:"validationOutcome,omitempty"`
	CurrentApprovalStage int    `json:"currentApprovalStage"`
	TotalApprovalStages  int    `json:"totalApprovalStages"`
	CompletedAt          string `json:"completedAt,omitempty"`
	// the sealed record and what the auto-trigger started on it, once complete
	SealedPDFPath string   `json:"sealedPdfPath,omitempty"`
	SealedPDFHash string   `json:"sealedPdfHash,omitempty"`
	ESignGroupID  string   `json:"esignGroupId,omitempty"`
	DeliveryIDs   []string `json:"deliveryIds,omitempty"`
	TriggerFailed string   `json:"autoTriggerFailed,omitempty"` // the code of a trigger that could not start
}

func statusOf(x *workflow.Workflow) statusView {
	stage := 0 // a workflow without approval stages waits in pending-approval for no named stage
	if x.State == workflow.StatePendingApproval && x.TotalStages > 0 {
		stage = x.Stage + 1
	}
	return statusView{WorkflowID: x.ID, CorrelationID: x.CorrelationID, State: string(x.State), CurrentStepIndex: x.Step,
		TotalSteps: x.TotalSteps, ValidationOutcome: string(x.Outcome), CurrentApprovalStage: stage,
		TotalApprovalStages: x.TotalStages, CompletedAt: stamp(x.CompletedAt), SealedPDFPath: x.SealedPath,
		SealedPDFHash: x.SealedHash, ESignGroupID: x.ESignGroupID, DeliveryIDs: x.DeliveryIDs, TriggerFailed: x.TriggerFailure}
}

// get is GET /api/workflow/{workflowId}?token= (participant or reviewer): the portal payload,
// the schema's steps with their fields and the data saved for each, the validation results and
// the latest change requests. Errors: 401 token_missing, token_invalid, token_expired; 404.
func (a *API) get(w http.ResponseWriter, r *http.Request) error {
	if err := web.NoBody(r); err != nil {
		return err
	}
	t, err := a.portal(w, r)
	if err != nil {
		return err
	}
	l := link(t)
	x, s, err := a.Workflows.Read(r.Context(), workflow.Access{Link: &l}, r.PathValue("workflowId"), true)
	if err != nil {
		return spent(w, err)
	}
	if err := x.OTPGate(); err != nil && t.Role == tokens.RoleParticipant {
		return err
	}
	v := payloadView{statusView: statusOf(x), Title: s.Title, Governance: s.Governance, OrganizationName: x.Setup.OrganizationName,
		Message: x.Setup.Message, RequireOTP: x.Setup.RequireOTP, ValidationResults: x.Results, ChangeRequests: x.Changes}
	if v.ValidationResults == nil {
		v.ValidationResults = []template.Result{}
	}
	if v.ChangeRequests == nil {
		v.ChangeRequests = []workflow.ChangeRequest{}
	}
	for i, st := range s.Steps {
		data := map[string]any{}
		if i < len(x.Data) && x.Data[i] != nil {
			data = x.Data[i]
		}
		v.Steps = append(v.Steps, stepView{Index: i, ID: st.ID, Title: st.Title, Fields: s.StepFields(i), Data: data})
	}
	return web.JSON(w, http.StatusOK, v)
}

type saveStepRequest struct {
	Data map[string]any `json:"data"`
}

// saveStep is PATCH /api/workflow/{workflowId}/step/{stepIndex}?token= {data}: the step's values
// (a null clears one), each checked against its field. 200 the step entity. Errors: 400
// invalid_step (stepIndex), record_invalid at data.<key>; 401; 403 for a reviewer token; 404;
// 409 invalid_state outside in-progress and changes-requested; 413.
func (a *API) saveStep(w http.ResponseWriter, r *http.Request) error {
	var req saveStepRequest
	if err := web.DecodeJSON(r, web.MaxJSONBody, &req); err != nil {
		return err
	}
	t, err := a.participant(w, r)
	if err != nil {
		return err
	}
	i, err := stepIndex(r)
	if err != nil {
		return err
	}
	if req.Data == nil {
		return requiredField("data", "is required: an object keyed by field key")
	}
	x, s, err := a.Workflows.SaveStep(r.Context(), r.PathValue("workflowId"), link(t), actor(r, "participant", workflow.ParticipantID), i, req.Data)
	if err != nil {
		return spent(w, err)
	}
	st := s.Steps[i]
	return web.JSON(w, http.StatusOK, stepView{Index: i, ID: st.ID, Title: st.Title, Fields: s.StepFields(i), Data: x.Data[i]})
}

type advanceView struct {
	WorkflowID        string            `json:"workflowId"`
	State             string            `json:"state"`
	CurrentStepIndex  int               `json:"currentStepIndex"`
	ValidationOutcome string            `json:"validationOutcome,omitempty"`
	ValidationResults []template.Result `json:"validationResults"`
}

func advanceOf(x *workflow.Workflow) advanceView {
	v := advanceView{WorkflowID: x.ID, State: string(x.State), CurrentStepIndex: x.Step, ValidationOutcome: string(x.Outcome),
		ValidationResults: x.Results}
	if v.ValidationResults == nil {
		v.ValidationResults = []template.Result{}
	}
	return v
}

// advance is POST /api/workflow/{workflowId}/advance?token=: the next step, or on the final step
// the validation of all the data (spec: 200 also when it failed, with state validation-failed).
// Errors: 401; 403; 404; 409 invalid_state.
func (a *API) advance(w http.ResponseWriter, r *http.Request) error {
	return a.participantMove(w, r, a.Workflows.Advance)
}

// fixValidation is POST /api/workflow/{workflowId}/fix-validation?token=: back to in-progress at
// the first failing field's step. Errors: 401; 403; 404; 409 invalid_state.
func (a *API) fixValidation(w http.ResponseWriter, r *http.Request) error {
	return a.participantMove(w, r, a.Workflows.FixValidation)
}

// participantMove is a participant's route without a body that calls move, a use case.
func (a *API) participantMove(w http.ResponseWriter, r *http.Request, move func(context.Context, string, workflow.Link, kernel.Actor) (*workflow.Workflow, error)) error {
	if err := web.NoBody(r); err != nil {
		return err
	}
	t, err := a.participant(w, r)
	if err != nil {
		return err
	}
	x, err := move(r.Context(), r.PathValue("workflowId"), link(t), actor(r, "participant", workflow.ParticipantID))
	if err != nil {
		return spent(w, err)
	}
	return web.JSON(w, http.StatusOK, advanceOf(x))
}

// status is GET /api/workflow/{workflowId}/status (the body rule first): with a `token`, the portal's; else the JWT of
// the creator's tenant (Esign.Initiator, Workflow.Approver or Service.Admin).
func (a *API) status(w http.ResponseWriter, r *http.Request) error {
	if err := web.NoBody(r); err != nil {
		return err
	}
	var x *workflow.Workflow
	var err error
	if r.URL.Query().Has("token") {
		var t tokens.WorkflowPortal
		if t, err = a.portal(w, r); err != nil {
			return err
		}
		l := link(t)
		x, _, err = a.Workflows.Read(r.Context(), workflow.Access{Link: &l}, r.PathValue("workflowId"), false)
	} else {
		x, err = a.own(r, jwtRoles...)
	}
	if err != nil {
		return spent(w, err)
	}
	return web.JSON(w, http.StatusOK, statusOf(x))
}

func itoa(i int) string { return strconv.Itoa(i) }
