package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
)

// CreateWorkflowRequest is POST /workflow's body.
type CreateWorkflowRequest struct {
	TemplatePath     string           `json:"templatePath,omitempty"`
	TemplateID       string           `json:"templateId,omitempty"`    // alias of TemplatePath
	CorrelationID    string           `json:"correlationId,omitempty"` // "": the service generates a UUID
	InitialData      map[string]any   `json:"initialData,omitempty"`
	TemplateSettings json.RawMessage  `json:"templateSettings,omitempty"`
	CallbackURL      string           `json:"callbackUrl,omitempty"`
	Options          *WorkflowOptions `json:"options,omitempty"`
}

// WorkflowOptions names the sealed record's document and that of the signing session or
// deliveries its seal auto-triggers (default: the workflow id and docType "workflow").
type WorkflowOptions struct {
	DocumentID string `json:"documentId,omitempty"`
	DocType    string `json:"docType,omitempty"`
}

// Workflow is the create answer; Idempotent when the correlationId was used before.
type Workflow struct {
	WorkflowID    string `json:"workflowId"`
	CorrelationID string `json:"correlationId"`
	State         string `json:"state"`
	PortalURL     string `json:"portalUrl"`
	Idempotent    bool   `json:"idempotent,omitempty"`
}

// WorkflowStatus is a workflow's state.
type WorkflowStatus struct {
	WorkflowID           string `json:"workflowId"`
	CorrelationID        string `json:"correlationId"`
	State                string `json:"state"`
	CurrentStepIndex     int    `json:"currentStepIndex"`
	TotalSteps           int    `json:"totalSteps"`
	ValidationOutcome    string `json:"validationOutcome,omitempty"`
	CurrentApprovalStage int    `json:"currentApprovalStage"`
	TotalApprovalStages  int    `json:"totalApprovalStages"`
	CompletedAt          string `json:"completedAt,omitempty"`
	// Once complete: the sealed record and what the auto-trigger started on it.
	SealedPDFPath     string   `json:"sealedPdfPath,omitempty"`
	SealedPDFHash     string   `json:"sealedPdfHash,omitempty"`
	ESignGroupID      string   `json:"esignGroupId,omitempty"`
	DeliveryIDs       []string `json:"deliveryIds,omitempty"`
	AutoTriggerFailed string   `json:"autoTriggerFailed,omitempty"`
}

// WorkflowExport is the collected data as JSON.
type WorkflowExport struct {
	WorkflowStatus
	TemplatePath string         `json:"templatePath"`
	CreatedAt    string         `json:"createdAt"`
	UpdatedAt    string         `json:"updatedAt"`
	Data         map[string]any `json:"data"`
}

// WorkflowDecision is the answer of a decision route.
type WorkflowDecision struct {
	WorkflowID           string `json:"workflowId"`
	State                string `json:"state"`
	CurrentApprovalStage int    `json:"currentApprovalStage"`
	TotalApprovalStages  int    `json:"totalApprovalStages"`
	// PortalToken is the fresh X-Portal-Token of a portal-token call, when the workflow is live.
	PortalToken string `json:"-"`
}

// WorkflowField is a field of a workflow step.
type WorkflowField struct {
	Key       string   `json:"key"`
	Type      string   `json:"type"`
	Required  bool     `json:"required,omitempty"`
	MinLength *int     `json:"minLength,omitempty"`
	MaxLength *int     `json:"maxLength,omitempty"`
	Pattern   string   `json:"pattern,omitempty"`
	Min       *float64 `json:"min,omitempty"`
	Max       *float64 `json:"max,omitempty"`
	Options   []string `json:"options,omitempty"`
	Label     string   `json:"label,omitempty"`
	Help      string   `json:"help,omitempty"`
}

// WorkflowStep is a step with its fields and saved values.
type WorkflowStep struct {
	Index  int             `json:"index"`
	ID     string          `json:"id"`
	Title  string          `json:"title,omitempty"`
	Fields []WorkflowField `json:"fields"`
	Data   map[string]any  `json:"data"`
	// PortalToken is the answer's fresh X-Portal-Token.
	PortalToken string `json:"-"`
}

// ChangeRequest is a reviewer's requested change.
type ChangeRequest struct {
	Message  string `json:"message"`
	FieldKey string `json:"fieldKey,omitempty"`
	Severity string `json:"severity"`
	Category string `json:"category,omitempty"`
	DueDate  string `json:"dueDate,omitempty"`
}

// WorkflowPayload is what the portal shows (GET /workflow/{id}?token=).
type WorkflowPayload struct {
	WorkflowStatus
	Title             string             `json:"title,omitempty"`
	Governance        bool               `json:"governance"`
	OrganizationName  string             `json:"organizationName,omitempty"`
	Message           string             `json:"message,omitempty"`
	RequireOTP        bool               `json:"requireOtp"`
	Steps             []WorkflowStep     `json:"steps"`
	ValidationResults []ValidationResult `json:"validationResults"`
	ChangeRequests    []ChangeRequest    `json:"changeRequests"`
	PortalToken       string             `json:"-"`
}

// WorkflowAdvance is the answer of advance and fix-validation.
type WorkflowAdvance struct {
	WorkflowID        string             `json:"workflowId"`
	State             string             `json:"state"`
	CurrentStepIndex  int                `json:"currentStepIndex"`
	ValidationOutcome string             `json:"validationOutcome,omitempty"`
	ValidationResults []ValidationResult `json:"validationResults"`
	PortalToken       string             `json:"-"`
}

func wfPath(id, suffix string) string { return "/workflow/" + esc(id) + suffix }

// CreateWorkflow starts a workflow and invites its participant (201; 200 with Idempotent for a
// correlationId used before, so a lost answer is safely sent again). Without a CorrelationID the
// service generates one (in the answer) and each create is a new workflow, so such a create is
// sent once, never retried.
func (c *Client) CreateWorkflow(ctx context.Context, req CreateWorkflowRequest) (*Workflow, error) {
	var w Workflow
	_, err := c.do(ctx, call{method: http.MethodPost, path: "/workflow", json: req, idempotent: req.CorrelationID != "",
		ok: []int{http.StatusCreated, http.StatusOK}}, &w)
	return &w, err
}

// WorkflowStatus reads a workflow's state with the JWT.
func (c *Client) WorkflowStatus(ctx context.Context, workflowID string) (*WorkflowStatus, error) {
	var s WorkflowStatus
	_, err := c.do(ctx, call{method: http.MethodGet, path: wfPath(workflowID, "/status")}, &s)
	return &s, err
}

// WorkflowExportJSON reads the collected data as JSON.
func (c *Client) WorkflowExportJSON(ctx context.Context, workflowID string) (*WorkflowExport, error) {
	var e WorkflowExport
	_, err := c.do(ctx, call{method: http.MethodGet, path: wfPath(workflowID, "/export"), query: url.Values{"format": {"json"}}}, &e)
	return &e, err
}

// WorkflowExportCSV reads the collected data as CSV (step,key,label,value).
func (c *Client) WorkflowExportCSV(ctx context.Context, workflowID string) ([]byte, error) {
	r, err := c.do(ctx, call{method: http.MethodGet, path: wfPath(workflowID, "/export"), query: url.Values{"format": {"csv"}},
		header: http.Header{"Accept": {"text/csv"}}}, nil)
	if err != nil {
		return nil, err
	}
	return r.Body, nil
}

func (c *Client) wfDecision(ctx context.Context, cl call) (*WorkflowDecision, error) {
	var d WorkflowDecision
	r, err := c.do(ctx, cl, &d)
	if err == nil {
		d.PortalToken = r.Header.Get("X-Portal-Token")
	}
	return &d, err
}

func comment(text string) any {
	if text == "" {
		return nil
	}
	return map[string]string{"comment": text}
}

// ApproveWorkflow passes the current stage (JWT Workflow.Approver).
func (c *Client) ApproveWorkflow(ctx context.Context, workflowID, text string) (*WorkflowDecision, error) {
	return c.wfDecision(ctx, call{method: http.MethodPost, path: wfPath(workflowID, "/approve"), json: comment(text)})
}

// RejectWorkflow rejects with the JWT of a Workflow.Approver.
func (c *Client) RejectWorkflow(ctx context.Context, workflowID, text string) (*WorkflowDecision, error) {
	return c.wfDecision(ctx, call{method: http.MethodPost, path: wfPath(workflowID, "/reject"), json: comment(text)})
}

// EscalateWorkflow moves the current stage to its next approver.
func (c *Client) EscalateWorkflow(ctx context.Context, workflowID string) (*WorkflowDecision, error) {
	return c.wfDecision(ctx, call{method: http.MethodPost, path: wfPath(workflowID, "/escalate")})
}

// CancelWorkflow ends a live workflow as cancelled.
func (c *Client) CancelWorkflow(ctx context.Context, workflowID string) (*WorkflowDecision, error) {
	return c.wfDecision(ctx, call{method: http.MethodPost, path: wfPath(workflowID, "/cancel")})
}

// SealWorkflow queues the seal (a retry, or sealing without the approval gate).
func (c *Client) SealWorkflow(ctx context.Context, workflowID string) (*WorkflowDecision, error) {
	return c.wfDecision(ctx, call{method: http.MethodPost, path: wfPath(workflowID, "/seal")})
}

// The portal's workflow routes take a workflow portal token (the participant's `pt` or a
// reviewer's) instead of a JWT; each answer carries a fresh one (PortalToken).

func tokenCall(method, workflowID, suffix, token string, body any) call {
	return call{method: method, path: wfPath(workflowID, suffix), query: url.Values{"token": {token}}, json: body, anonymous: true}
}

// WorkflowPayloadWithToken reads the portal payload.
func (c *Client) WorkflowPayloadWithToken(ctx context.Context, workflowID, token string) (*WorkflowPayload, error) {
	var p WorkflowPayload
	r, err := c.do(ctx, tokenCall(http.MethodGet, workflowID, "", token, nil), &p)
	if err == nil {
		p.PortalToken = r.Header.Get("X-Portal-Token")
	}
	return &p, err
}

// WorkflowStatusWithToken reads the state with a portal token.
func (c *Client) WorkflowStatusWithToken(ctx context.Context, workflowID, token string) (*WorkflowStatus, error) {
	var s WorkflowStatus
	_, err := c.do(ctx, tokenCall(http.MethodGet, workflowID, "/status", token, nil), &s)
	return &s, err
}

// SaveWorkflowStep saves a step's values (a nil value clears one).
func (c *Client) SaveWorkflowStep(ctx context.Context, workflowID, token string, step int, data map[string]any) (*WorkflowStep, error) {
	var s WorkflowStep
	r, err := c.do(ctx, tokenCall(http.MethodPatch, workflowID, "/step/"+strconv.Itoa(step), token, map[string]any{"data": data}), &s)
	if err == nil {
		s.PortalToken = r.Header.Get("X-Portal-Token")
	}
	return &s, err
}

func (c *Client) wfAdvance(ctx context.Context, cl call) (*WorkflowAdvance, error) {
	var a WorkflowAdvance
	r, err := c.do(ctx, cl, &a)
	if err == nil {
		a.PortalToken = r.Header.Get("X-Portal-Token")
	}
	return &a, err
}

// AdvanceWorkflow moves to the next step, or on the final step validates.
func (c *Client) AdvanceWorkflow(ctx context.Context, workflowID, token string) (*WorkflowAdvance, error) {
	return c.wfAdvance(ctx, tokenCall(http.MethodPost, workflowID, "/advance", token, nil))
}

// FixWorkflowValidation goes back to in-progress at the first failing field's step.
func (c *Client) FixWorkflowValidation(ctx context.Context, workflowID, token string) (*WorkflowAdvance, error) {
	return c.wfAdvance(ctx, tokenCall(http.MethodPost, workflowID, "/fix-validation", token, nil))
}

// RequestWorkflowChanges is the current reviewer's request for changes (1 to 20 items).
func (c *Client) RequestWorkflowChanges(ctx context.Context, workflowID, token string, changes []ChangeRequest) (*WorkflowDecision, error) {
	return c.wfDecision(ctx, tokenCall(http.MethodPost, workflowID, "/request-changes", token, map[string]any{"changes": changes}))
}

// GovernanceDecision is the current reviewer's approve, approve-with-exception (with a
// justification) or reject.
func (c *Client) GovernanceDecision(ctx context.Context, workflowID, token, decision, justification string) (*WorkflowDecision, error) {
	body := map[string]string{"decision": decision}
	if justification != "" {
		body["justification"] = justification
	}
	return c.wfDecision(ctx, tokenCall(http.MethodPost, workflowID, "/governance-decision", token, body))
}

// RejectWorkflowWithToken is the current reviewer's rejection.
func (c *Client) RejectWorkflowWithToken(ctx context.Context, workflowID, token, text string) (*WorkflowDecision, error) {
	return c.wfDecision(ctx, tokenCall(http.MethodPost, workflowID, "/reject", token, comment(text)))
}

// ResendWorkflowInvite sends the invitation again (429 invite_rate_limited within 60 s).
func (c *Client) ResendWorkflowInvite(ctx context.Context, workflowID, token string) (*WorkflowStatus, error) {
	var s WorkflowStatus
	_, err := c.do(ctx, tokenCall(http.MethodPost, workflowID, "/resend-invite", token, nil), &s)
	return &s, err
}

// WorkflowOTPSend e-mails the participant a code.
func (c *Client) WorkflowOTPSend(ctx context.Context, workflowID, token string) (*OTPSent, error) {
	var o OTPSent
	_, err := c.do(ctx, tokenCall(http.MethodPost, workflowID, "/otp/send", token, nil), &o)
	return &o, err
}

// WorkflowOTPVerify checks the participant's code.
func (c *Client) WorkflowOTPVerify(ctx context.Context, workflowID, token, otp string) (*OTPVerified, error) {
	var o OTPVerified
	_, err := c.do(ctx, tokenCall(http.MethodPost, workflowID, "/otp/verify", token, map[string]string{"otp": otp}), &o)
	return &o, err
}
