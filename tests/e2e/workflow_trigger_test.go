package e2e

import (
	"net/http"
	"strings"
	"testing"
)

// approveToSeal fills workflow wf (spend within the rule), approves both stages and waits for
// the seal; it returns the status once complete.
func approveToSeal(t *testing.T, wf wfCreated) reply {
	t.Helper()
	wantWF(t, fill(t, wf, "Acme Supplies", 50), 200, "pending-approval")
	// each stage by its named approver, neither of them the creator (DESIGN 14)
	wantWF(t, wfAs(t, "POST", wf.ID, "/approve", wfPerson(t, "finance@example.com", "Fiona Finance", "Workflow.Approver"), nil), 200, "pending-approval")
	wantWF(t, wfAs(t, "POST", wf.ID, "/approve", wfPerson(t, "legal@example.com", "Lee Legal", "Workflow.Approver"), nil), 200, "sealing")
	return sealed(t, wf.ID)
}

// triggered waits until the status of workflow id shows what its auto-trigger started.
func triggered(t *testing.T, id, field string) reply {
	t.Helper()
	var st reply
	eventually(t, "the workflow's auto-trigger", func() bool {
		st = wfJWT(t, "GET", id, "/status", "Esign.Initiator", nil)
		if st.str("autoTriggerFailed") != "" {
			t.Fatalf("the auto-trigger failed: %s", st.Raw)
		}
		_, ok := st.JSON[field]
		return ok
	})
	return st
}

// TestWorkflowAutoTrigger: after complete, templateSettings.esign starts a signing session on
// the sealed record (signed/<tenant>/workflows/<id>.pdf, its hash, the template's signature
// positions), the signers are invited and sign it, and the signed PDF carries the workflow
// seal and the signing seal, both valid; the delivery waiting for it then goes out.
// templateSettings.delivery alone delivers the sealed record at once. Settings the trigger
// would refuse are refused at create.
func TestWorkflowAutoTrigger(t *testing.T) {
	t.Parallel()
	pkg := wfPackage(t, false)
	t.Run("esign then delivery of the signed record", func(t *testing.T) {
		t.Parallel()
		body := wfBody(pkg)
		signers := offerSigners()
		rcpt := email(7)
		body["templateSettings"].(map[string]any)["esign"] = map[string]any{"enabled": true, "signers": signers, "signingMode": "parallel"}
		body["templateSettings"].(map[string]any)["delivery"] = map[string]any{"enabled": true,
			"recipients": []any{map[string]any{"email": rcpt, "name": "Robin"}}}
		wf := createWorkflow(t, tenantA, body)
		wantWF(t, wf.Reply, 201, "in-progress")
		done := approveToSeal(t, wf)
		st := triggered(t, wf.ID, "esignGroupId")
		corr := st.str("correlationId")
		ses := status(t, tenantA, corr)
		if ses.Status != 200 || ses.str("groupId") != st.str("esignGroupId") || ses.str("pdfBlobPath") != done.str("sealedPdfPath") ||
			ses.str("pdfHash") != done.str("sealedPdfHash") || ses.str("manifestSource") != "rendered" || ses.str("docType") != "workflow" {
			t.Fatalf("session %s\nworkflow %s", ses.Raw, done.Raw)
		}
		for _, sg := range signers {
			inv := waitInvitations(t, sg.(map[string]any)["email"].(string), 1)
			sign(t, inv[0].Link)
		}
		var signedPath string
		eventually(t, "the signed record", func() bool {
			signedPath = status(t, tenantA, corr).str("signedDocumentPath")
			return signedPath != ""
		})
		eventually(t, "the delivery of the signed record", func() bool { return len(noticesFor(t, corr, "delivery_invitation")) == 1 })
		sealRequireTools(t)
		pdf, _ := sealDownload(t, signedPath)
		out, _ := sealRun("pdfsig", sealWriteTemp(t, t.TempDir(), "signed.pdf", pdf))
		if strings.Count(out, "Signature is Valid.") != 2 || !strings.Contains(out, "Total document signed") {
			t.Fatalf("pdfsig: both the workflow seal and the signing seal must be valid:\n%s", out)
		}
		text, err := sealRun("pdftotext", "-enc", "UTF-8", sealWriteTemp(t, t.TempDir(), "signed.pdf", pdf), "-")
		if err != nil || !strings.Contains(text, "Workflow record") || !strings.Contains(text, "Acme Supplies") {
			t.Fatalf("signed text (%v):\n%s", err, text)
		}
	})
	t.Run("delivery alone", func(t *testing.T) {
		t.Parallel()
		body := wfBody(pkg)
		rcpt := email(6)
		body["templateSettings"].(map[string]any)["delivery"] = map[string]any{"enabled": true,
			"recipients": []any{map[string]any{"email": rcpt, "name": "Robin"}}}
		wf := createWorkflow(t, tenantA, body)
		approveToSeal(t, wf)
		st := triggered(t, wf.ID, "deliveryIds")
		if ids, _ := st.JSON["deliveryIds"].([]any); len(ids) != 1 {
			t.Fatalf("status %s", st.Raw)
		}
		eventually(t, "the recipient's invitation", func() bool { return len(noticesFor(t, st.str("correlationId"), "delivery_invitation")) == 1 })
	})
	t.Run("settings the trigger would refuse are refused at create", func(t *testing.T) {
		t.Parallel()
		body := wfBody(pkg)
		body["templateSettings"].(map[string]any)["esign"] = map[string]any{"enabled": true,
			"signers": []any{map[string]any{"slotIndex": 0, "role": "employee", "email": "nobody"}}}
		r := call(t, "POST", svc.url("workflow"), body, bearer(svc.jwt(t, tenantA, "Esign.Initiator")))
		wantProblem(t, r, http.StatusBadRequest, "invalid_request", "templateSettings.esign.signers[0].email")
		body = wfBody(pkg)
		body["correlationId"] = "has spaces / and a slash"
		body["templateSettings"].(map[string]any)["esign"] = map[string]any{"enabled": true, "signers": offerSigners()}
		r = call(t, "POST", svc.url("workflow"), body, bearer(svc.jwt(t, tenantA, "Esign.Initiator")))
		wantProblem(t, r, http.StatusBadRequest, "invalid_request", "correlationId")
	})
}
