package workflow

import (
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/otp"
	"github.com/esign-svc/esign/shared/template"
	"github.com/esign-svc/esign/shared/text"
)

// State is a workflow's state (spec "Workflow states").
type State string

// The states.
const (
	StateInProgress       State = "in-progress"
	StatePendingApproval  State = "pending-approval"
	StateValidationFailed State = "validation-failed"
	StateChangesRequested State = "changes-requested"
	StateSealing          State = "sealing"
	StateComplete         State = "complete"
	StateRejected         State = "rejected"
	StateCancelled        State = "cancelled"
)

// Terminal reports whether the state is an end (the states that fire the callback).
func (s State) Terminal() bool {
	return s == StateComplete || s == StateRejected || s == StateCancelled
}

// Outcome is a workflow's validationOutcome: "" before the first final validation.
type Outcome string

// The outcomes.
const (
	OutcomePassed Outcome = "passed"
	OutcomeFailed Outcome = "failed"
)

// Audit event kinds (DESIGN 5: dotted names). Their data carry indexes, counts, decisions and
// approvers' keyed hashes: never a value, a comment, a justification or an address.
const (
	EvCreated            = "workflow.created"
	EvStepSaved          = "workflow.step_saved"
	EvAdvanced           = "workflow.advanced"
	EvValidationFailed   = "workflow.validation_failed"
	EvValidationReopened = "workflow.validation_reopened"
	EvPendingApproval    = "workflow.pending_approval"
	EvApproved           = "workflow.approved"
	EvStageAdvanced      = "workflow.stage_advanced"
	EvRejected           = "workflow.rejected"
	EvChangesRequested   = "workflow.changes_requested"
	EvGovernanceDecision = "workflow.governance_decision"
	EvEscalated          = "workflow.escalated"
	EvCancelled          = "workflow.cancelled"
	EvSealing            = "workflow.sealing"
	EvSealFailed         = "workflow.seal_failed"
	EvCompleted          = "workflow.completed"
)

// Effects of the workflow machine; the apps' interpreters know each of them.
const (
	EffectInviteParticipant kernel.EffectKind = "invite_participant" // e-mail the recipients the portal link
	EffectNotifyParticipant kernel.EffectKind = "notify_participant" // e-mail the participant the change requests
	EffectNotifyApprovers   kernel.EffectKind = "notify_approvers"   // e-mail the current stage's current approver
	EffectSeal              kernel.EffectKind = "seal"               // put the workflow on the workflow-seal queue
	EffectCallback          kernel.EffectKind = "callback"           // POST the terminal state to callbackUrl
	EffectAutoTrigger       kernel.EffectKind = "auto_trigger"       // start templateSettings.esign and .delivery
)

// Governance decisions (spec "Governance decision values").
const (
	DecisionApprove              = "approve"
	DecisionApproveWithException = "approve-with-exception"
	DecisionReject               = "reject"
	DecisionRequestChanges       = "request-changes"
)

// Limits of what a workflow keeps (its encrypted content must fit one table row, see
// workflowstore).
const (
	MaxContentBytes   = 320 << 10 // JSON of the data, results, decisions and change requests
	MaxComment        = 2000      // characters of a comment
	MaxJustification  = 4000      // characters of an exception's justification
	MaxChangeItems    = 20        // items of one request-changes
	MaxChangeMessage  = 1000      // characters of an item's message
	MaxChangeCategory = 100
)

// Errors of the machine.
var (
	// ErrInvalidState: the transition is not allowed in the workflow's state (409).
	ErrInvalidState = apperr.New(apperr.KindConflict, CodeInvalidState, "the workflow's state does not allow this")
	// ErrRulesFailed: a plain approve of data whose error rules failed (409).
	ErrRulesFailed = apperr.New(apperr.KindConflict, CodeRulesFailed, "error rules failed: only approve-with-exception or reject can decide")
	// ErrNoFurtherApprover: escalate at the stage's last approver (409).
	ErrNoFurtherApprover = apperr.New(apperr.KindConflict, CodeNoFurtherApprover, "the stage has no further approver")
	// ErrNotApprover: a named approver who is not the stage's current one (403).
	ErrNotApprover = apperr.New(apperr.KindForbidden, CodeNotApprover, "the decision belongs to the stage's current approver")
	// ErrSelfApproval: the workflow's creator decides it (403; DESIGN 14).
	ErrSelfApproval = apperr.New(apperr.KindForbidden, CodeSelfApproval, "the workflow's creator may not decide it")
	// ErrStageAlreadyDecided: the caller decided another stage of this approval round (403).
	ErrStageAlreadyDecided = apperr.New(apperr.KindForbidden, CodeStageAlreadyDecided, "you already decided a stage of this approval round")
	// ErrApproverNotNamed: the stage names its approvers and the caller is not one of them (403).
	ErrApproverNotNamed = apperr.New(apperr.KindForbidden, CodeApproverNotNamed, "the stage's approvers are named and you are not one of them")
	// ErrTooLarge: the workflow's content would exceed MaxContentBytes (413).
	ErrTooLarge = apperr.New(apperr.KindTooLarge, "workflow_too_large", "the workflow's data would exceed %d KiB", MaxContentBytes>>10)
)

// Workflow is one workflow instance (spec "Workflow instance"). Steps and stages are 0-based
// here; the API's currentApprovalStage is Stage+1.
type Workflow struct {
	ID            string
	Tenant        string
	CorrelationID string
	TemplatePath  string
	CreatedBy     string // the initiator's JWT oid
	CreatorHash   string // keyed hash of the initiator's e-mail (pii.Hasher), "" when the token had none
	State         State
	Step          int // currentStepIndex
	TotalSteps    int
	Outcome       Outcome
	Stage         int // current approval stage
	TotalStages   int
	Approver      int // index of the current approver in the stage's routing sequence
	Round         int // approval rounds started (1 at the first pending-approval)
	SealedPath    string
	SealedHash    string
	// What the auto-trigger after the seal started (DESIGN 10): the signing session, or the
	// deliveries; TriggerFailure is the code of a trigger that can never start.
	ESignGroupID   string
	DeliveryIDs    []string
	TriggerFailure string
	// LinkGen is the generation of the participant's link: the participant's resend-invite
	// makes a new one and refuses the tokens of the older ones.
	LinkGen     int
	CreatedAt   time.Time
	UpdatedAt   time.Time
	CompletedAt time.Time // the time a terminal state was reached
	ETag        string

	Content // personal data: the store keeps it encrypted
}

// Content is the part of a workflow that holds personal data.
type Content struct {
	Data      []map[string]any  `json:"data"` // per step, keyed by field
	Results   []template.Result `json:"validationResults,omitempty"`
	Decisions []Decision        `json:"decisions,omitempty"`
	Changes   []ChangeRequest   `json:"changes,omitempty"` // of the latest request-changes
	Setup     Setup             `json:"setup"`
	OTP       otp.Record        `json:"otp"`                 // the participant's code, when Setup.RequireOTP
	InvitedAt time.Time         `json:"invitedAt,omitempty"` // the last invitation or approval e-mail asked for
	// SealReason is the reason of the latest manual seal, printed on the sealed record.
	SealReason string `json:"sealReason,omitempty"`
}

// Decision is one approver's decision.
type Decision struct {
	Stage         int       `json:"stage"` // 1-based
	Round         int       `json:"round"`
	ApproverHash  string    `json:"approverHash,omitempty"`  // keyed hash of the approver's e-mail
	ApproverName  string    `json:"approverName,omitempty"`  // the approver's display name, when known
	ApproverOID   string    `json:"approverOid,omitempty"`   // the JWT's oid; "" for a reviewer link
	StandIn       string    `json:"standInReason,omitempty"` // an admin's reason to decide for the named approver
	Decision      string    `json:"decision"`
	Comment       string    `json:"comment,omitempty"`
	Justification string    `json:"justification,omitempty"` // kept verbatim
	At            time.Time `json:"at"`
}

// ChangeRequest is one item of a request-changes.
type ChangeRequest struct {
	Message  string `json:"message"`
	FieldKey string `json:"fieldKey,omitempty"`
	Severity string `json:"severity"`
	Category string `json:"category,omitempty"`
	DueDate  string `json:"dueDate,omitempty"`
}

// Approver is who decides: Index is the position in the current stage's routing sequence, or -1
// for a JWT caller the stage does not name; Hash is the keyed hash of the approver's e-mail
// (pii.Hasher; a reviewer link's is the address it was issued to), "" when unknown; Name the
// approver's display name (the JWT's name claim, say), "" when unknown: kept in the decision for
// the sealed record, never audited. OID is the JWT's oid ("" for a reviewer link). Admin is a
// JWT holding Service.Admin, who may decide for a stage's named approver only with Reason (free
// text, already through shared/text). AllowSelf is the app's WORKFLOW_ALLOW_SELF_APPROVAL: it
// lifts the creator rule only.
type Approver struct {
	Index     int
	Hash      string
	Name      string
	OID       string
	Admin     bool
	Reason    string
	AllowSelf bool
}

// MaxReason is the characters of a stand-in's or a manual seal's reason.
const MaxReason = 500

// samePerson reports whether two acts are by the same person (DESIGN 14): the oid or the
// e-mail's keyed hash matches (the hasher folds the address's case).
func samePerson(oidA, hashA, oidB, hashB string) bool {
	return (oidA != "" && oidA == oidB) || (hashA != "" && hashA == hashB)
}

// duties checks the separation of duties (DESIGN 14) for by deciding x's current stage: the
// creator may not decide (unless AllowSelf); a person decides at most one stage of a round; only
// a named approver decides a stage, or an admin standing in with a reason; a workflow without
// approval stages names nobody, so any caller the route lets decide (Workflow.Approver,
// Service.Admin) does. Errors: ErrSelfApproval, ErrStageAlreadyDecided, ErrApproverNotNamed,
// 400 reason.
func (x *Workflow) duties(by Approver) error {
	if !by.AllowSelf && samePerson(by.OID, by.Hash, x.CreatedBy, x.CreatorHash) {
		return ErrSelfApproval
	}
	for _, d := range x.Decisions {
		if d.Round == x.Round && samePerson(by.OID, by.Hash, d.ApproverOID, d.ApproverHash) {
			return ErrStageAlreadyDecided
		}
	}
	if by.Index >= 0 || x.TotalStages == 0 {
		return nil
	}
	if !by.Admin {
		return ErrApproverNotNamed
	}
	if strings.TrimSpace(by.Reason) == "" {
		e := apperr.New(apperr.KindForbidden, CodeReasonRequired, "an admin decides for a named approver only with a reason")
		e.Fields = []apperr.FieldError{apperr.Field("reason", "is required to stand in for the stage's named approver")}
		return e
	}
	return checkReason(by.Reason)
}

// checkReason is the rule of a stand-in's or a manual seal's reason: free text (shared/text,
// lines allowed) of at most MaxReason characters. Errors: 400 at reason.
func checkReason(reason string) error {
	if utf8.RuneCountInString(reason) > MaxReason {
		return apperr.Invalid(CodeInvalidRequest, apperr.Field("reason", fmt.Sprintf("must be at most %d characters", MaxReason)))
	}
	return checkText("reason", reason, text.Lines)
}

// AllData is the workflow's values of every step, keyed by field: what the validator and the
// rules see.
func (w *Workflow) AllData() map[string]any {
	out := map[string]any{}
	for _, d := range w.Data {
		for k, v := range d {
			out[k] = v
		}
	}
	return out
}

// Live reports whether the workflow has not ended and is not being sealed.
func (w *Workflow) Live() bool { return !w.State.Terminal() && w.State != StateSealing }

// Problems of a participant token the workflow no longer takes.
var (
	ErrLinkEnded = &apperr.Error{Kind: apperr.KindGone, Code: "workflow_ended",
		Detail: "the workflow has ended: its participant link no longer works"}
	ErrLinkReplaced = &apperr.Error{Kind: apperr.KindUnauthenticated, Code: "link_replaced",
		Detail: "a newer invitation replaced this link; use the latest one"}
)

// ParticipantLink checks a participant token of link generation gen: 410 workflow_ended once
// the workflow is complete, rejected or cancelled; 401 link_replaced when a later invitation
// made a new link (compared in constant time).
func (w *Workflow) ParticipantLink(gen int) error {
	if w.State.Terminal() {
		return ErrLinkEnded
	}
	if subtle.ConstantTimeEq(int32(gen), int32(w.LinkGen)) != 1 {
		return ErrLinkReplaced
	}
	return nil
}

// commit runs fn on a copy of w and keeps the copy only when fn succeeds and the content still
// fits a row: a failed transition leaves w and the change untouched.
func (w *Workflow) commit(fn func(x *Workflow, c *kernel.Change) error) (kernel.Change, error) {
	x := *w
	x.Data = slices.Clone(w.Data)
	var c kernel.Change
	if err := fn(&x, &c); err != nil {
		return kernel.Change{}, err
	}
	b, err := json.Marshal(x.Content)
	if err != nil {
		return kernel.Change{}, apperr.Invalid(CodeInvalidRequest, apperr.Field("data", "holds a value that is not JSON"))
	}
	if len(b) > MaxContentBytes {
		return kernel.Change{}, ErrTooLarge
	}
	if slices.ContainsFunc(c.Effects, func(e kernel.Effect) bool {
		return e.Kind == EffectInviteParticipant || e.Kind == EffectNotifyParticipant || e.Kind == EffectNotifyApprovers
	}) {
		x.InvitedAt = x.UpdatedAt // an e-mail asked for: resend-invite waits ResendInterval from it
	}
	*w = x
	return c, nil
}

// Create starts a workflow in in-progress (spec "create workflow"). initial, when not nil, is
// initialData: each key must be a field (400 at initialData.<key>) and each value pass its
// field's checks; the values go to their fields' steps. With the schema's autoValidateOnCreate
// and initial data, the whole data are validated at once as an advance on the final step does,
// and the participant is invited only when the data failed without governance. Errors: 400;
// ErrTooLarge.
func Create(w *Workflow, s *Schema, initial map[string]any, now time.Time) (kernel.Change, error) {
	return w.commit(func(x *Workflow, c *kernel.Change) error {
		x.State, x.TotalSteps, x.TotalStages = StateInProgress, len(s.Steps), len(s.Stages)
		x.Data = make([]map[string]any, len(s.Steps))
		for i := range x.Data {
			x.Data[i] = map[string]any{}
		}
		x.CreatedAt, x.UpdatedAt = now, now
		var results []template.Result
		for _, k := range sortedKeys(initial) {
			i, ok := s.StepOf(k)
			switch {
			case !ok:
				results = append(results, template.Result{RuleID: template.CheckUnknown, FieldKey: k, Severity: template.SeverityError, Message: "is not a field of the schema"})
			case initial[k] != nil:
				if r := s.Check(k, initial[k]); r != nil {
					results = append(results, *r)
					continue
				}
				x.Data[i][k] = initial[k]
			}
		}
		if err := template.Errors("initialData", results); err != nil {
			return err
		}
		c.Record(EvCreated, kernel.NoSlot, now, map[string]any{"totalSteps": x.TotalSteps, "totalApprovalStages": x.TotalStages,
			"governance": s.Governance, "initialData": initial != nil})
		if s.AutoValidateOnCreate && initial != nil {
			x.Step = x.TotalSteps - 1
			x.finalValidation(s, c, now)
			if x.State == StateValidationFailed {
				c.Ask(EffectInviteParticipant, kernel.NoSlot)
			}
			return nil
		}
		c.Ask(EffectInviteParticipant, kernel.NoSlot)
		return nil
	})
}

// SaveStep is the PATCH of step: allowed in in-progress and changes-requested (else
// ErrInvalidState); data's keys must be fields of the step and their values pass their checks
// (400 at data.<key>); a null removes a value. Errors: those; ErrTooLarge.
func (w *Workflow) SaveStep(s *Schema, step int, data map[string]any, now time.Time) (kernel.Change, error) {
	return w.commit(func(x *Workflow, c *kernel.Change) error {
		if x.State != StateInProgress && x.State != StateChangesRequested {
			return ErrInvalidState
		}
		if err := s.ValidateStep(step, data); err != nil {
			return err
		}
		for len(x.Data) <= step { // a row older than its schema's last step
			x.Data = append(x.Data, map[string]any{})
		}
		d := make(map[string]any, len(x.Data[step])+len(data))
		for k, v := range x.Data[step] {
			d[k] = v
		}
		for k, v := range data {
			if v == nil {
				delete(d, k)
			} else {
				d[k] = v
			}
		}
		x.Data[step], x.UpdatedAt = d, now
		c.Record(EvStepSaved, kernel.NoSlot, now, map[string]any{"step": step, "fields": len(data)})
		return nil
	})
}

// Advance is the participant's advance (in in-progress or changes-requested, else
// ErrInvalidState): before the final step it moves to the next step (a changes-requested
// workflow is in-progress again); on the final step it validates all the data: passed goes to
// pending-approval (at stage 1; without approval stages any Workflow.Approver but the creator
// decides, spec "in-progress -> pending-approval"); failed goes to validation-failed, or with
// governance (and approval stages to decide an exception) to pending-approval with outcome
// failed.
func (w *Workflow) Advance(s *Schema, now time.Time) (kernel.Change, error) {
	return w.commit(func(x *Workflow, c *kernel.Change) error {
		if x.State != StateInProgress && x.State != StateChangesRequested {
			return ErrInvalidState
		}
		x.UpdatedAt = now
		if x.Step < x.TotalSteps-1 {
			c.Record(EvAdvanced, kernel.NoSlot, now, map[string]any{"from": x.Step, "to": x.Step + 1})
			x.Step++
			x.State = StateInProgress
			return nil
		}
		c.Record(EvAdvanced, kernel.NoSlot, now, map[string]any{"from": x.Step, "to": x.Step, "final": true})
		x.finalValidation(s, c, now)
		return nil
	})
}

// finalValidation validates all the data and moves on by the outcome.
func (x *Workflow) finalValidation(s *Schema, c *kernel.Change, now time.Time) {
	x.Results = s.Validate(x.AllData(), now)
	errs, warns := count(x.Results)
	x.Outcome = OutcomePassed
	if errs > 0 {
		x.Outcome = OutcomeFailed
	}
	x.Changes = nil
	if errs > 0 && (!s.Governance || x.TotalStages == 0) { // an exception needs a reviewer
		x.State = StateValidationFailed
		c.Record(EvValidationFailed, kernel.NoSlot, now, map[string]any{"errors": errs, "warnings": warns})
		return
	}
	x.State, x.Stage, x.Approver, x.Round = StatePendingApproval, 0, 0, x.Round+1
	c.Record(EvPendingApproval, kernel.NoSlot, now, map[string]any{"stage": min(1, x.TotalStages), "round": x.Round,
		"validationOutcome": string(x.Outcome), "errors": errs, "warnings": warns})
	if x.TotalStages > 0 { // without stages no approver is named: nobody to e-mail
		c.Ask(EffectNotifyApprovers, kernel.NoSlot)
	}
}

// count is the failed error and warning results (a passed rule counts for neither).
func count(results []template.Result) (errs, warns int) {
	for _, r := range results {
		if r.Passed {
			continue
		}
		switch r.Severity {
		case template.SeverityError:
			errs++
		case template.SeverityWarning:
			warns++
		}
	}
	return errs, warns
}

func (x *Workflow) toSealing(c *kernel.Change, now time.Time, reason string) {
	x.State, x.UpdatedAt = StateSealing, now
	c.Record(EvSealing, kernel.NoSlot, now, map[string]any{"reason": reason})
	c.Ask(EffectSeal, kernel.NoSlot)
}

func (x *Workflow) end(state State, c *kernel.Change, now time.Time) {
	x.State, x.UpdatedAt, x.CompletedAt = state, now, now
	c.Ask(EffectCallback, kernel.NoSlot)
}

// FixValidation returns a validation-failed workflow to in-progress at the step of the first
// failing field (spec "fix-validation"). Errors: ErrInvalidState.
func (w *Workflow) FixValidation(s *Schema, now time.Time) (kernel.Change, error) {
	return w.commit(func(x *Workflow, c *kernel.Change) error {
		if x.State != StateValidationFailed {
			return ErrInvalidState
		}
		x.State, x.Step, x.UpdatedAt = StateInProgress, s.FirstFailingStep(x.Results), now
		c.Record(EvValidationReopened, kernel.NoSlot, now, map[string]any{"step": x.Step})
		return nil
	})
}

// decide checks the common preconditions of an approver's decision and records it.
func (x *Workflow) decide(by Approver, decision, comment, justification string, now time.Time) error {
	if x.State != StatePendingApproval {
		return ErrInvalidState
	}
	if by.Index >= 0 && by.Index != x.Approver {
		return ErrNotApprover
	}
	if err := x.duties(by); err != nil {
		return err
	}
	if utf8.RuneCountInString(comment) > MaxComment {
		return apperr.Invalid(CodeInvalidRequest, apperr.Field("comment", fmt.Sprintf("must be at most %d characters", MaxComment)))
	}
	if err := checkText("comment", comment, text.Lines); err != nil {
		return err
	}
	d := Decision{Stage: x.Stage + 1, Round: x.Round, ApproverHash: by.Hash, ApproverName: by.Name, ApproverOID: by.OID, Decision: decision,
		Comment: comment, Justification: justification, At: now}
	if by.Index < 0 {
		d.StandIn = by.Reason
	}
	x.Decisions = append(x.Decisions, d)
	x.UpdatedAt = now
	return nil
}

func (x *Workflow) passStage(c *kernel.Change, now time.Time) {
	if x.Stage < x.TotalStages-1 {
		x.Stage, x.Approver = x.Stage+1, 0
		c.Record(EvStageAdvanced, kernel.NoSlot, now, map[string]any{"stage": x.Stage + 1})
		c.Ask(EffectNotifyApprovers, kernel.NoSlot)
		return
	}
	x.toSealing(c, now, "approved")
}

func decisionData(x *Workflow, by Approver) map[string]any {
	data := map[string]any{"stage": x.Stage + 1, "round": x.Round, "approverHash": by.Hash}
	if by.Index < 0 {
		data["standInReason"] = by.Reason // DESIGN 14: the stand-in is audited
	}
	return data
}

// Approve is a JWT approver's approve in pending-approval: before the last stage the next stage
// (its approvers notified), at the last one sealing. Data whose error rules failed are decided
// only through a governance decision. Errors: ErrInvalidState, ErrNotApprover, ErrRulesFailed,
// 400 for a long comment.
func (w *Workflow) Approve(by Approver, comment string, now time.Time) (kernel.Change, error) {
	return w.commit(func(x *Workflow, c *kernel.Change) error {
		if x.State == StatePendingApproval && x.Outcome == OutcomeFailed {
			return ErrRulesFailed
		}
		if err := x.decide(by, DecisionApprove, comment, "", now); err != nil {
			return err
		}
		c.Record(EvApproved, kernel.NoSlot, now, decisionData(x, by))
		x.passStage(c, now)
		return nil
	})
}

// Reject ends a pending-approval workflow as rejected. Errors: ErrInvalidState, ErrNotApprover,
// 400 for a long comment.
func (w *Workflow) Reject(by Approver, comment string, now time.Time) (kernel.Change, error) {
	return w.commit(func(x *Workflow, c *kernel.Change) error {
		if err := x.decide(by, DecisionReject, comment, "", now); err != nil {
			return err
		}
		c.Record(EvRejected, kernel.NoSlot, now, decisionData(x, by))
		x.end(StateRejected, c, now)
		return nil
	})
}

// GovernanceDecision is a reviewer's decision in pending-approval: approve (ErrRulesFailed when
// error rules failed), approve-with-exception (a non-empty justification, 400 otherwise, kept
// verbatim), reject; an approval moves on as Approve does. Errors: those, ErrInvalidState,
// ErrNotApprover, 400 for another decision.
func (w *Workflow) GovernanceDecision(by Approver, decision, justification string, now time.Time) (kernel.Change, error) {
	return w.commit(func(x *Workflow, c *kernel.Change) error {
		if x.State != StatePendingApproval {
			return ErrInvalidState
		}
		switch decision {
		case DecisionApprove:
			if x.Outcome == OutcomeFailed {
				return ErrRulesFailed
			}
			justification = ""
		case DecisionApproveWithException:
			if strings.TrimSpace(justification) == "" {
				return apperr.Invalid(CodeInvalidRequest, apperr.Field("justification", "is required for approve-with-exception"))
			}
			if utf8.RuneCountInString(justification) > MaxJustification {
				return apperr.Invalid(CodeInvalidRequest, apperr.Field("justification", fmt.Sprintf("must be at most %d characters", MaxJustification)))
			}
			if err := checkText("justification", justification, text.Lines); err != nil {
				return err
			}
		case DecisionReject:
			justification = ""
		default:
			return apperr.Invalid(CodeInvalidRequest, apperr.Field("decision", "must be approve, approve-with-exception or reject"))
		}
		if err := x.decide(by, decision, "", justification, now); err != nil {
			return err
		}
		data := decisionData(x, by)
		data["decision"] = decision
		c.Record(EvGovernanceDecision, kernel.NoSlot, now, data)
		if decision == DecisionReject {
			c.Record(EvRejected, kernel.NoSlot, now, decisionData(x, by))
			x.end(StateRejected, c, now)
			return nil
		}
		c.Record(EvApproved, kernel.NoSlot, now, decisionData(x, by))
		x.passStage(c, now)
		return nil
	})
}

// RequestChanges is a reviewer's request-changes in pending-approval: the items (1 to
// MaxChangeItems) are kept, the workflow goes to changes-requested at the step of the first
// item's field (0 without one) and the participant is notified; approval restarts at stage 1
// after the participant's next final advance. Errors: ErrInvalidState, ErrNotApprover, 400 at
// changes[i].<key>.
func (w *Workflow) RequestChanges(s *Schema, by Approver, items []ChangeRequest, now time.Time) (kernel.Change, error) {
	return w.commit(func(x *Workflow, c *kernel.Change) error {
		if x.State != StatePendingApproval {
			return ErrInvalidState
		}
		if err := checkChanges(s, items); err != nil {
			return err
		}
		if err := x.decide(by, DecisionRequestChanges, "", "", now); err != nil {
			return err
		}
		step := -1
		for _, it := range items {
			if i, ok := s.StepOf(it.FieldKey); ok && (step < 0 || i < step) {
				step = i
			}
		}
		x.State, x.Step, x.Changes = StateChangesRequested, max(step, 0), slices.Clone(items)
		data := decisionData(x, by)
		data["items"] = len(items)
		c.Record(EvChangesRequested, kernel.NoSlot, now, data)
		c.Ask(EffectNotifyParticipant, kernel.NoSlot)
		return nil
	})
}

func checkChanges(s *Schema, items []ChangeRequest) error {
	if len(items) == 0 || len(items) > MaxChangeItems {
		return apperr.Invalid(CodeInvalidRequest, apperr.Field("changes", fmt.Sprintf("must hold 1 to %d items", MaxChangeItems)))
	}
	var errs []apperr.FieldError
	for i, it := range items {
		at := func(key, msg string) {
			errs = append(errs, apperr.Field(fmt.Sprintf("changes[%d].%s", i, key), msg))
		}
		if n := utf8.RuneCountInString(it.Message); strings.TrimSpace(it.Message) == "" || n > MaxChangeMessage {
			at("message", fmt.Sprintf("is required, at most %d characters", MaxChangeMessage))
		} else if why := text.Problem(it.Message, text.Lines); why != "" {
			at("message", why)
		}
		if _, ok := s.StepOf(it.FieldKey); it.FieldKey != "" && !ok {
			at("fieldKey", "names no field of the schema")
		}
		switch it.Severity {
		case "info", "warning", "error":
		default:
			at("severity", "must be info, warning or error")
		}
		if utf8.RuneCountInString(it.Category) > MaxChangeCategory {
			at("category", fmt.Sprintf("must be at most %d characters", MaxChangeCategory))
		} else if why := text.Problem(it.Category, text.Line); why != "" {
			at("category", why)
		}
		if it.DueDate != "" {
			if _, err := time.Parse(time.DateOnly, it.DueDate); err != nil || len(it.DueDate) != len(time.DateOnly) {
				at("dueDate", "must be a date YYYY-MM-DD")
			}
		}
	}
	if len(errs) > 0 {
		return apperr.Invalid(CodeInvalidRequest, errs...)
	}
	return nil
}

// Escalate moves a pending-approval workflow's current stage to its next approver, who is
// notified. Errors: ErrInvalidState, ErrNoFurtherApprover.
func (w *Workflow) Escalate(s *Schema, now time.Time) (kernel.Change, error) {
	return w.commit(func(x *Workflow, c *kernel.Change) error {
		if x.State != StatePendingApproval {
			return ErrInvalidState
		}
		if x.Stage >= len(s.Stages) || x.Approver+1 >= len(s.Stages[x.Stage].Approvers) {
			return ErrNoFurtherApprover
		}
		x.Approver++
		x.UpdatedAt = now
		c.Record(EvEscalated, kernel.NoSlot, now, map[string]any{"stage": x.Stage + 1, "from": x.Approver - 1, "to": x.Approver})
		c.Ask(EffectNotifyApprovers, kernel.NoSlot)
		return nil
	})
}

// Cancel ends a live workflow (not sealing, not ended) as cancelled. Errors: ErrInvalidState.
func (w *Workflow) Cancel(now time.Time) (kernel.Change, error) {
	return w.commit(func(x *Workflow, c *kernel.Change) error {
		if !x.Live() {
			return ErrInvalidState
		}
		c.Record(EvCancelled, kernel.NoSlot, now, map[string]any{"from": string(x.State)})
		x.end(StateCancelled, c, now)
		return nil
	})
}

// Sealer is who seals by hand: Admin a JWT holding Service.Admin; Reason the optional free text
// of the seal's body (audited and printed on the sealed record).
type Sealer struct {
	Admin  bool
	Reason string
}

// ErrSealAdminOnly: sealing around pending approval stages of a template that locks
// workflow.schemaPath, by a caller who is not an admin (403; DESIGN 14).
var ErrSealAdminOnly = apperr.New(apperr.KindForbidden, CodeSealAdminOnly,
	"the template locks the approval stages: only an admin may seal around them")

// Seal is the initiator's or an admin's seal (spec "any -> sealing"): a retry in sealing, or
// sealing without the approval gate from any other state that has not ended, whatever the
// data's validation. Around approval stages still to decide, when the workflow's template locks
// workflow.schemaPath, only an admin seals. Data that have not been approved are validated now:
// the results (failed rules included) and the outcome are kept for the sealed record, which
// prints them; failed error rules do not stop a manual seal. by.Reason is kept for the sealed
// record. Errors: ErrInvalidState for an ended workflow; ErrSealAdminOnly; 400 reason.
func (w *Workflow) Seal(s *Schema, by Sealer, now time.Time) (kernel.Change, error) {
	return w.commit(func(x *Workflow, c *kernel.Change) error {
		if x.State.Terminal() {
			return ErrInvalidState
		}
		if err := checkReason(by.Reason); err != nil {
			return err
		}
		if x.State == StateSealing {
			x.toSealing(c, now, "retry")
			x.noteSeal(c, by)
			return nil
		}
		if x.TotalStages > 0 && x.Setup.SchemaLocked && !by.Admin {
			return ErrSealAdminOnly
		}
		x.Results, x.Outcome = s.Validate(x.AllData(), now), OutcomePassed
		errs, warns := count(x.Results)
		if errs > 0 {
			x.Outcome = OutcomeFailed
		}
		x.toSealing(c, now, "manual")
		ev := c.Events[len(c.Events)-1].Data
		ev["validationOutcome"], ev["errors"], ev["warnings"] = string(x.Outcome), errs, warns
		x.noteSeal(c, by)
		return nil
	})
}

// noteSeal keeps and audits a manual seal's reason (on the sealing event just recorded).
func (x *Workflow) noteSeal(c *kernel.Change, by Sealer) {
	if strings.TrimSpace(by.Reason) == "" {
		return
	}
	x.SealReason = by.Reason
	c.Events[len(c.Events)-1].Data["sealReason"] = by.Reason
	c.Events[len(c.Events)-1].Data["byAdmin"] = by.Admin
}

// SealFailed records a failed seal attempt; the workflow stays sealing for a retry. reason is a
// short code, never personal data. Errors: ErrInvalidState outside sealing.
func (w *Workflow) SealFailed(reason string, now time.Time) (kernel.Change, error) {
	return w.commit(func(x *Workflow, c *kernel.Change) error {
		if x.State != StateSealing {
			return ErrInvalidState
		}
		c.Record(EvSealFailed, kernel.NoSlot, now, map[string]any{"reason": reason})
		return nil
	})
}

// Complete ends a sealing workflow with its sealed PDF (path and "sha256:<hex>"): the callback
// and the auto-triggers follow. Errors: ErrInvalidState outside sealing.
func (w *Workflow) Complete(sealedPath, sealedHash string, now time.Time) (kernel.Change, error) {
	return w.commit(func(x *Workflow, c *kernel.Change) error {
		if x.State != StateSealing {
			return ErrInvalidState
		}
		x.SealedPath, x.SealedHash = sealedPath, sealedHash
		c.Record(EvCompleted, kernel.NoSlot, now, map[string]any{"pdfHash": sealedHash})
		x.end(StateComplete, c, now)
		c.Ask(EffectAutoTrigger, kernel.NoSlot)
		return nil
	})
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
