// Package workflow is the domain core of workflows (DESIGN 10): the schema of a multi-step form
// (schema.yaml), the pure state machine of a workflow instance (steps, validation, staged
// approval, governance, seal) and, in workflowstore, its storage on the aggregate kernel. The
// fields and rules of a schema are read and checked by the template package's one parser and
// validator, with the rules over `data` instead of `record`.
//
// The package is pure: no environment, no storage, no Azure SDK.
package workflow

import (
	"fmt"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/template"
)

// Codes of the errors of this package.
const (
	CodeSchemaInvalid     = template.CodeSchemaInvalid
	CodeInvalidStep       = "invalid_step"
	CodeInvalidState      = "invalid_state"
	CodeRulesFailed       = "rules_failed"
	CodeNoFurtherApprover = "no_further_approver"
	CodeNotApprover       = "not_current_approver"
	CodeInvalidRequest    = "invalid_request"
	// Separation of duties (DESIGN 14), each 403.
	CodeSelfApproval        = "self_approval"
	CodeStageAlreadyDecided = "stage_already_decided_by_you"
	CodeApproverNotNamed    = "approver_not_named"
	CodeReasonRequired      = "stand_in_reason_required"
	CodeSealAdminOnly       = "seal_admin_only"
)

// Schema is a parsed schema.yaml. Its Form holds the fields of all steps, in step order, and the
// rules over `data` and `now`. Immutable; safe for concurrent use.
type Schema struct {
	*template.WorkflowSchema
	stepOf map[string]int // field key -> step index
}

// ParseSchema checks and compiles a schema.yaml named by the request field field. Errors: 400
// schema_invalid naming schema.yaml's line, column and key at fault.
func ParseSchema(field string, raw []byte) (*Schema, error) {
	ws, err := template.ParseWorkflowSchema(field, raw)
	if err != nil {
		return nil, err
	}
	s := &Schema{WorkflowSchema: ws, stepOf: make(map[string]int, len(ws.Fields))}
	for i, st := range ws.Steps {
		for _, f := range ws.Fields[st.First : st.First+st.Count] {
			s.stepOf[f.Key] = i
		}
	}
	return s, nil
}

// StepFields are the fields of step i (0-based).
func (s *Schema) StepFields(i int) []template.Field {
	st := s.Steps[i]
	return s.Fields[st.First : st.First+st.Count]
}

// StepOf is the index of the step that holds field key, and whether there is one.
func (s *Schema) StepOf(key string) (int, bool) {
	i, ok := s.stepOf[key]
	return i, ok
}

// ValidateStep is the PATCH's check of one step's data: stepIndex must be a step (400
// invalid_step on stepIndex), each key a field of that step and each non-null value pass its
// field's type and limits (400 record_invalid, one error per field at data.<key>). Required
// fields are not checked here: a step may be saved half-filled; advance validates them.
func (s *Schema) ValidateStep(stepIndex int, data map[string]any) error {
	if stepIndex < 0 || stepIndex >= len(s.Steps) {
		return apperr.Invalid(CodeInvalidStep, apperr.Field("stepIndex", fmt.Sprintf("must be a step index from 0 to %d", len(s.Steps)-1)))
	}
	var results []template.Result
	for _, k := range sortedKeys(data) {
		if i, ok := s.stepOf[k]; !ok || i != stepIndex {
			results = append(results, template.Result{RuleID: template.CheckUnknown, FieldKey: k, Severity: template.SeverityError,
				Message: fmt.Sprintf("is not a field of step %d (%s)", stepIndex, s.Steps[stepIndex].ID)})
			continue
		}
		if data[k] == nil {
			continue // clears the value
		}
		if r := s.Check(k, data[k]); r != nil {
			results = append(results, *r)
		}
	}
	return template.Errors("data", results)
}

// Validate is the one validator over a workflow's whole data (every step's values keyed by
// field): every field's checks, then, when they pass, the rules with now as `now`. The results
// are the spec's validationResults[]: failed checks, and every rule's outcome, passed or not.
func (s *Schema) Validate(data map[string]any, now time.Time) []template.Result {
	return s.Form.ValidateAll(data, now)
}

// FirstFailingStep is the step fix-validation returns the participant to: the lowest step index
// of a failed error result's field; 0 when no failed error result names a field of the schema.
func (s *Schema) FirstFailingStep(results []template.Result) int {
	first := -1
	for _, r := range results {
		if !r.Blocks() {
			continue
		}
		if i, ok := s.stepOf[r.FieldKey]; ok && (first < 0 || i < first) {
			first = i
		}
	}
	return max(first, 0)
}
