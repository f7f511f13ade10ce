package e2e

import (
	"strings"
	"testing"

	"github.com/esign-svc/esign/shared/workflow"
)

// wfDutiesSchema is wfSchema's steps and rule with Finance's approver named in both stages, and
// the creator (svc.jwt's identity, dev-user@dev.example.test) last in Legal's routing sequence.
var wfDutiesSchema = wfSchema[:strings.Index(wfSchema, "approval:")] + `approval:
  stages:
    - { name: Finance, approvers: [finance@example.com] }
    - { name: Legal, approvers: [legal@example.com, finance@example.com, dev-user@dev.example.test] }
`

// TestWorkflowDuties: separation of duties through the routes (DESIGN 14). Finance's approver
// decides stage 1 by JWT; escalated to in stage 2, the same person's reviewer link is refused
// (stage_already_decided_by_you), then the creator's own reviewer link (self_approval); an admin
// stands in for Legal's named approver only with a reason, and the sealed record names every
// approver and prints the reason.
func TestWorkflowDuties(t *testing.T) {
	t.Parallel()
	files := examplePackage(t)
	files["schema.yaml"] = []byte(wfDutiesSchema)
	wf := createWorkflow(t, tenantA, wfBody(uploadFolderPackage(t, files)))
	wantWF(t, fill(t, wf, "Acme Duties", 50), 200, "pending-approval")
	notified(t, wf.ID, workflow.NotifyApproval)
	finance := wfPerson(t, "finance@example.com", "Fiona Finance", "Workflow.Approver")
	wantWF(t, wfAs(t, "POST", wf.ID, "/approve", finance, nil), 200, "pending-approval")
	notified(t, wf.ID, workflow.NotifyApproval)
	// the same person at stage 2, by JWT and by the reviewer link issued to their e-mail
	wantWF(t, wfJWT(t, "POST", wf.ID, "/escalate", "Esign.Initiator", nil), 200, "pending-approval")
	m, link := notifiedLink(t, wf.ID, workflow.NotifyApproval)
	if m.Reviewer != workflow.ReviewerID(1, 2, 1) {
		t.Fatalf("escalated to %q", m.Reviewer)
	}
	wantProblem(t, wfAs(t, "POST", wf.ID, "/approve", finance, nil), 403, "stage_already_decided_by_you", "")
	wantProblem(t, wfCall(t, "POST", wf.ID, "/reject", link, map[string]any{"comment": "no"}), 403, "stage_already_decided_by_you", "")
	// the creator's reviewer link
	wantWF(t, wfJWT(t, "POST", wf.ID, "/escalate", "Esign.Initiator", nil), 200, "pending-approval")
	m, own := notifiedLink(t, wf.ID, workflow.NotifyApproval)
	if m.Reviewer != workflow.ReviewerID(1, 2, 2) {
		t.Fatalf("escalated to %q", m.Reviewer)
	}
	wantProblem(t, wfCall(t, "POST", wf.ID, "/reject", own, map[string]any{"comment": "no"}), 403, "self_approval", "")
	// an admin the stage does not name: only with a reason
	admin := wfPerson(t, "admin@example.com", "Ada Admin", "Service.Admin")
	wantProblem(t, wfAs(t, "POST", wf.ID, "/approve", admin, map[string]any{"comment": "ok"}), 403, "stand_in_reason_required", "reason")
	wantProblem(t, wfAs(t, "POST", wf.ID, "/approve", admin, map[string]any{"reason": "a\u202eb"}), 400, "invalid_request", "reason")
	wantWF(t, wfAs(t, "POST", wf.ID, "/approve", admin, map[string]any{"reason": "Legal is away until Monday; policy 4.2."}), 200, "sealing")
	text := sealedText(t, sealed(t, wf.ID))
	for _, want := range []string{"approve at stage 1 (Finance), round 1", "Approver: Fiona Finance", "approve at stage 2 (Legal), round 1",
		"Approver: Ada Admin", "Admin standing in for the named approver, reason: Legal is away until Monday; policy 4.2."} {
		if !strings.Contains(text, want) {
			t.Errorf("the sealed record lacks %q:\n%s", want, text)
		}
	}
}

// TestWorkflowLockedSeal: a template that locks its three governing keys refuses a workflow
// create, a render and a batch that override them (403 template_locked naming the key); around pending
// approval stages the initiator may not seal it by hand, an admin may, and the seal's reason
// is printed on the sealed record.
func TestWorkflowLockedSeal(t *testing.T) {
	t.Parallel()
	files := examplePackage(t)
	files["schema.yaml"] = []byte(wfSchema)
	files["template.yaml"] = append(files["template.yaml"], []byte("\nlocked: [distribution.requireApproval, workflow.schemaPath, workflow.requireOtp]\n")...)
	pkg := uploadFolderPackage(t, files)
	for key, val := range map[string]any{"schemaPath": "templates/" + tenantA + "/other.yaml", "requireOtp": true} {
		body := wfBody(pkg)
		body["templateSettings"].(map[string]any)["workflow"].(map[string]any)[key] = val
		r := call(t, "POST", svc.url("workflow"), body, bearer(svc.jwt(t, tenantA, "Esign.Initiator")))
		wantProblem(t, r, 403, "template_locked", "templateSettings.workflow."+key)
	}
	// render (one record, and a batch) goes through the same lock
	initiator := bearer(svc.jwt(t, tenantA, "Esign.Initiator"))
	one := renderBody(pkg, offerRecord())
	one["templateSettings"] = map[string]any{"workflow": map[string]any{"requireOtp": false}}
	wantProblem(t, call(t, "POST", svc.url("render"), one, initiator), 403, "template_locked", "templateSettings.workflow.requireOtp")
	wantProblem(t, call(t, "POST", svc.url("render"), batchBody(pkg, offers(2), true), initiator), 403, "template_locked",
		"templateSettings.distribution.requireApproval")
	wf := createWorkflow(t, tenantA, wfBody(pkg))
	wantWF(t, fill(t, wf, "Acme Locked", 50), 200, "pending-approval")
	wantProblem(t, wfJWT(t, "POST", wf.ID, "/seal", "Esign.Initiator", map[string]any{"reason": "urgent"}), 403, "seal_admin_only", "")
	wantProblem(t, wfJWT(t, "POST", wf.ID, "/seal", "Service.Admin", map[string]any{"reason": strings.Repeat("x", workflow.MaxReason+1)}),
		400, "invalid_request", "reason")
	wantWF(t, wfJWT(t, "POST", wf.ID, "/seal", "Service.Admin", map[string]any{"reason": "Board resolution 12 waives the review."}), 200, "sealing")
	text := sealedText(t, sealed(t, wf.ID))
	for _, want := range []string{"Acme Locked", "none: sealed without an approval decision", "Manual seal, reason: Board resolution 12 waives the review."} {
		if !strings.Contains(text, want) {
			t.Errorf("the sealed record lacks %q:\n%s", want, text)
		}
	}
}
