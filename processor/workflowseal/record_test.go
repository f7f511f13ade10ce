package workflowseal

import (
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/pdf/certificate"
	"github.com/esign-svc/esign/shared/workflow"
)

// TestRecordOfManualSealOnFailedData: a validation-failed workflow sealed by hand (spec "any ->
// sealing") prints on its record every rule with its outcome, the failed one named as failed,
// the failed outcome, and the seal's reason verbatim.
func TestRecordOfManualSealOnFailedData(t *testing.T) {
	t.Parallel()
	noGovernance := strings.Replace(schemaYAML, "governance: true\n", "", 1)
	s, err := workflow.ParseSchema("schema", []byte(strings.Replace(noGovernance, "rules:\n",
		"rules:\n  - { id: named, expr: \"data.employeeName != ''\", severity: warning, message: \"A name is given\", fieldKey: employeeName }\n", 1)))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	w := &workflow.Workflow{ID: "wf-1", CorrelationID: "c-1", CreatedBy: "oid"}
	steps := []func() error{
		func() error {
			_, err := workflow.Create(w, s, map[string]any{"employeeName": "Zoë", "position": "Engineer", "salary": 120000.0}, now)
			return err
		},
		func() error { _, err := w.Advance(s, now); return err },
		func() error {
			_, err := w.Advance(s, now)
			if err == nil && w.State != workflow.StateValidationFailed {
				t.Fatalf("advance: %s", w.State)
			}
			return err
		},
		func() error {
			_, err := w.Seal(s, workflow.Sealer{Reason: "Agreed on paper.\nFile 12."}, now)
			return err
		},
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	if w.State != workflow.StateSealing || w.Round != 0 {
		t.Fatalf("state %s", w.State)
	}
	r := Record(w, s, "head", now)
	items := map[string]certificate.Item{}
	for _, sec := range r.Sections {
		for _, it := range sec.Items {
			items[sec.Heading+"|"+it.Label] = it
		}
	}
	for label, value := range map[string]string{
		"Workflow|Validation outcome":                            "failed",
		"Validation results|passed warning named (employeeName)": "A name is given",
		"Validation results|failed error cap (salary)":           "Salary above the band",
		"Decisions|Manual seal, reason":                          "Agreed on paper.\nFile 12.",
	} {
		if it, ok := items[label]; !ok || it.Value != value {
			t.Errorf("record item %q = %+v, want %q; items %v", label, it, value, items)
		}
	}
}

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
