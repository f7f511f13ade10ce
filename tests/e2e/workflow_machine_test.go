package e2e

import (
	"net/http"
	"strings"
	"testing"
)

// wfOpenSchema is wfSchema without approval stages.
var wfOpenSchema = wfSchema[:strings.Index(wfSchema, "approval:")]

// ruleResult is the validationResults[] item of ruleID in an answer, nil when absent.
func ruleResult(r reply, ruleID string) map[string]any {
	res, _ := r.JSON["validationResults"].([]any)
	for _, x := range res {
		if m, _ := x.(map[string]any); m != nil && m["ruleId"] == ruleID {
			return m
		}
	}
	return nil
}

// TestWorkflowNoStagesApproval: spec 001 "in-progress -> pending-approval when validation
// passes" holds for a schema without approval stages (it used to go straight to sealing): the
// advance answers pending-approval with the passed rule listed (passed true, its severity,
// message and fieldKey); the status names no stage; the creator may not decide; a second user
// holding Workflow.Approver requests changes by JWT, the participant advances again, a third
// approves, and the seal job completes it with the decisions and the passed rule on the record.
func TestWorkflowNoStagesApproval(t *testing.T) {
	t.Parallel()
	files := examplePackage(t)
	files["schema.yaml"] = []byte(wfOpenSchema)
	wf := createWorkflow(t, tenantA, wfBody(uploadFolderPackage(t, files)))
	r := fill(t, wf, "Acme Open", 50)
	wantWF(t, r, 200, "pending-approval")
	rule := ruleResult(r, "spend-cap")
	if r.str("validationOutcome") != "passed" || rule == nil || rule["passed"] != true || rule["severity"] != "error" ||
		rule["fieldKey"] != "annualSpend" || rule["message"] != "Spend above 100 needs an exception" {
		t.Fatalf("advance %s", r.Raw)
	}
	st := wfJWT(t, "GET", wf.ID, "/status", "Esign.Initiator", nil)
	wantWF(t, st, 200, "pending-approval")
	if st.JSON["currentApprovalStage"] != 0.0 || st.JSON["totalApprovalStages"] != 0.0 {
		t.Fatalf("status %s", st.Raw)
	}
	wantProblem(t, wfJWT(t, "POST", wf.ID, "/approve", "Workflow.Approver", nil), 403, "self_approval", "")
	wantProblem(t, wfJWT(t, "POST", wf.ID, "/approve", "Esign.Initiator", nil), 403, "role_required", "")
	reviewer := wfPerson(t, "rita@example.com", "Rita Review", "Workflow.Approver")
	item := map[string]any{"message": "Check the spend", "fieldKey": "annualSpend", "severity": "warning"}
	wantProblem(t, wfAs(t, "POST", wf.ID, "/request-changes", reviewer, map[string]any{"changes": []any{}}), 400, "invalid_request", "changes")
	wantWF(t, wfAs(t, "POST", wf.ID, "/request-changes", reviewer, map[string]any{"changes": []any{item}}), 200, "changes-requested")
	wantWF(t, wfCall(t, "PATCH", wf.ID, "/step/1", wf.Token, map[string]any{"data": map[string]any{"annualSpend": 60}}), 200, "")
	wantWF(t, wfCall(t, "POST", wf.ID, "/advance", wf.Token, nil), 200, "pending-approval")
	wantWF(t, wfAs(t, "POST", wf.ID, "/approve", wfPerson(t, "alex@example.com", "Alex Approver", "Workflow.Approver"),
		map[string]any{"comment": "fine by me"}), 200, "sealing")
	text := sealedText(t, sealed(t, wf.ID))
	for _, want := range []string{"Acme Open", "Validation outcome: passed", "passed error spend-cap (annualSpend)",
		"request-changes at stage 1, round 1", "Approver: Rita Review", "approve at stage 1, round 2", "Approver: Alex Approver", "fine by me"} {
		if !strings.Contains(text, want) {
			t.Errorf("the sealed record lacks %q:\n%s", want, text)
		}
	}
}

// TestWorkflowSealValidationFailed: spec 001 "any -> sealing": the initiator seals a
// validation-failed workflow with a reason (it used to answer 409 rules_failed); the seal job
// completes it, and the sealed record read from storage prints the failed rule, the failed
// outcome and the reason. An ended workflow still refuses the seal.
func TestWorkflowSealValidationFailed(t *testing.T) {
	t.Parallel()
	wf := createWorkflow(t, tenantA, wfBody(wfPackage(t, false)))
	r := fill(t, wf, "Acme Sealed", 500)
	wantWF(t, r, 200, "validation-failed")
	if rule := ruleResult(r, "spend-cap"); rule == nil || rule["passed"] != false || rule["severity"] != "error" {
		t.Fatalf("advance %s", r.Raw)
	}
	why := "Agreed with the supplier on paper; file 2026/12."
	wantWF(t, wfJWT(t, "POST", wf.ID, "/seal", "Esign.Initiator", map[string]any{"reason": why}), 200, "sealing")
	st := sealed(t, wf.ID)
	if st.str("validationOutcome") != "failed" {
		t.Fatalf("status %s", st.Raw)
	}
	text := sealedText(t, st)
	for _, want := range []string{"Acme Sealed", "500", "Validation outcome: failed", "failed error spend-cap (annualSpend): Spend above 100 needs an exception",
		"none: sealed without an approval decision", "Manual seal, reason: " + why} {
		if !strings.Contains(text, want) {
			t.Errorf("the sealed record lacks %q:\n%s", want, text)
		}
	}
	wantProblem(t, wfJWT(t, "POST", wf.ID, "/seal", "Service.Admin", nil), http.StatusConflict, "invalid_state", "")
}
