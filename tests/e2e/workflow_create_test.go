package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// TestWorkflowCreateBody drives POST /api/workflow through the host with the create body of
// spec 001: correlationId optional (a generated UUID; conformance D-40, D-138), options.
// documentId and .docType (D-145), templateId a true alias of templatePath (D-137), and a
// package's own workflow.schemaPath relative to the package (DESIGN 6a).
func TestWorkflowCreateBody(t *testing.T) {
	t.Parallel()
	pkg := wfPackage(t, false)
	create := initiatorCall(t)

	t.Run("correlationId optional", func(t *testing.T) {
		t.Parallel()
		body := wfBody(pkg)
		delete(body, "correlationId")
		first := createWorkflow(t, tenantA, body)
		wantWF(t, first.Reply, 201, "in-progress")
		corr := first.Reply.str("correlationId")
		if _, err := uuid.Parse(corr); err != nil {
			t.Fatalf("generated correlationId %q", corr)
		}
		// without one, each create is a new workflow
		second := createWorkflow(t, tenantA, body)
		if second.Reply.Status != 201 || second.ID == first.ID || second.Reply.str("correlationId") == corr {
			t.Fatalf("second create without correlationId: %s", second.Reply.Raw)
		}
		// the generated one is the workflow's: a create that gives it is the idempotent repeat
		body["correlationId"] = corr
		again := createWorkflow(t, tenantA, body)
		if again.Reply.Status != 200 || again.ID != first.ID || again.Reply.JSON["idempotent"] != true {
			t.Fatalf("repeat of the generated correlationId: %d %s", again.Reply.Status, again.Reply.Raw)
		}
		if st := wfJWT(t, "GET", first.ID, "/status", "Esign.Initiator", nil); st.str("correlationId") != corr {
			t.Fatalf("status %s", st.Raw)
		}
		body["correlationId"] = " padded "
		wantProblem(t, create(body), http.StatusBadRequest, "invalid_request", "correlationId")
	})

	t.Run("options name the sealed record and its signing session", func(t *testing.T) {
		t.Parallel()
		body := wfBody(pkg)
		docID := "PO-" + uuid.NewString()[:8]
		body["options"] = map[string]any{"documentId": docID, "docType": "purchase-order"}
		body["templateSettings"].(map[string]any)["esign"] = map[string]any{"enabled": true, "signers": offerSigners()}
		wf := createWorkflow(t, tenantA, body)
		wantWF(t, wf.Reply, 201, "in-progress")
		done := approveToSeal(t, wf)
		if text := sealedText(t, done); !strings.Contains(text, "Document ID: "+docID) || !strings.Contains(text, "Document type: purchase-order") {
			t.Fatalf("the sealed record does not name its document:\n%s", text)
		}
		st := triggered(t, wf.ID, "esignGroupId")
		ses := status(t, tenantA, st.str("correlationId"))
		if ses.Status != 200 || ses.str("documentId") != docID || ses.str("docType") != "purchase-order" {
			t.Fatalf("session %s", ses.Raw)
		}
		for opts, field := range map[string]string{
			"documentId": "options.documentId", "docType": "options.docType",
		} {
			b := wfBody(pkg)
			b["options"] = map[string]any{opts: "two\nlines"}
			wantProblem(t, create(b), http.StatusBadRequest, "invalid_request", field)
		}
		b := wfBody(pkg)
		b["options"] = map[string]any{"docType": strings.Repeat("t", 129)}
		wantProblem(t, create(b), http.StatusBadRequest, "invalid_request", "options.docType")
		b["options"] = map[string]any{"title": "x"}
		wantProblem(t, create(b), http.StatusBadRequest, "unknown_field", "options.title")
	})

	t.Run("templateId is an alias of templatePath", func(t *testing.T) {
		t.Parallel()
		files := examplePackage(t)
		files["schema.yaml"] = []byte(wfSchema)
		zipped := uploadPackage(t, files)
		own := "e2e-" + uuid.NewString()[:8]
		for name, b := range files {
			putTemplateBlob(t, tenantA+"/"+own+"/"+name, b)
		}
		for _, c := range []struct{ id, path, want string }{
			{zipped, "", zipped},
			{pkg, "", pkg},
			{own, "", "templates/" + tenantA + "/" + own + "/"},
			{"templates/" + tenantA + "/" + own, "templates/" + tenantA + "/" + own + "/", ""},
		} {
			body := wfBody(c.path)
			if c.path == "" {
				delete(body, "templatePath")
			}
			body["templateId"] = c.id
			wf := createWorkflow(t, tenantA, body)
			wantWF(t, wf.Reply, 201, "in-progress")
			p := wfCall(t, "GET", wf.ID, "", wf.Token, nil)
			if steps, _ := p.JSON["steps"].([]any); p.Status != 200 || len(steps) != 2 {
				t.Fatalf("templateId %s: payload %s", c.id, p.Raw)
			}
		}
		for _, c := range []struct{ id, path, code string }{
			{"templates/" + tenantB + "/" + own + "/", "", "invalid_blob_path"},
			{"signed/" + tenantA + "/x.zip", "", "invalid_blob_path"},
			{zipped, pkg, "invalid_request"},
			{own, pkg, "invalid_request"},
		} {
			body := wfBody(c.path)
			if c.path == "" {
				delete(body, "templatePath")
			}
			body["templateId"] = c.id
			wantProblem(t, create(body), http.StatusBadRequest, c.code, "templateId")
		}
	})

	t.Run("a package's schemaPath is relative to it", func(t *testing.T) {
		t.Parallel()
		files := examplePackage(t)
		files["template.yaml"] = append(files["template.yaml"], []byte("\nworkflow:\n  schemaPath: forms/onboarding.yaml\n")...)
		files["forms/onboarding.yaml"] = []byte(wfSchema)
		wf := createWorkflow(t, tenantA, wfBody(uploadFolderPackage(t, files)))
		wantWF(t, wf.Reply, 201, "in-progress")
		if p := wfCall(t, "GET", wf.ID, "", wf.Token, nil); p.str("title") != "Supplier onboarding" {
			t.Fatalf("payload %s", p.Raw)
		}
		files = examplePackage(t)
		files["template.yaml"] = append(files["template.yaml"], []byte("\nworkflow:\n  schemaPath: ../onboarding.yaml\n")...)
		wantProblem(t, create(wfBody(uploadFolderPackage(t, files))), http.StatusBadRequest, "template_invalid", "templatePath")
	})
}
