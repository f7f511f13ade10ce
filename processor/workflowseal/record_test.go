package workflowseal

import (
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/workflow"
)

// The sealed record names its document: the create's options.documentId and .docType
// (conformance D-145), else the workflow id and docType "workflow".
func TestRecordNamesTheDocument(t *testing.T) {
	t.Parallel()
	w := &workflow.Workflow{ID: "wf-1", Tenant: "t1", CorrelationID: "CRM-42"}
	s, err := workflow.ParseSchema("schemaPath", []byte("title: Onboarding\nsteps:\n  - id: a\n    fields:\n      - {key: x, type: string}\n"))
	if err != nil {
		t.Fatal(err)
	}
	items := func() map[string]string {
		out := map[string]string{}
		for _, it := range Record(w, s, "head", time.Unix(0, 0)).Sections[0].Items {
			out[it.Label] = it.Value
		}
		return out
	}
	if got := items(); got["Document ID"] != "wf-1" || got["Document type"] != workflow.DocType {
		t.Fatalf("default: %v", got)
	}
	w.Setup.DocumentID, w.Setup.DocType = "PO-1001", "purchase-order"
	if got := items(); got["Document ID"] != "PO-1001" || got["Document type"] != "purchase-order" || got["Workflow ID"] != "wf-1" {
		t.Fatalf("with options: %v", got)
	}
}
