package workflow

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/licence"
)

func completeWorkflow(t *testing.T, esign, delivery string) *Workflow {
	t.Helper()
	w := &Workflow{ID: "wf-1", Tenant: "t1", CorrelationID: "CRM-42", State: StateComplete, SealedHash: "sha256:" + sixtyFour}
	w.Setup.Title = "Vendor onboarding"
	if esign != "" {
		w.Setup.ESign = json.RawMessage(esign)
	}
	if delivery != "" {
		w.Setup.Delivery = json.RawMessage(delivery)
	}
	return w
}

const sixtyFour = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

const (
	esignOn    = `{"enabled":true,"signers":[{"slotIndex":0,"role":"buyer","email":"a@example.com"}]}`
	deliveryOn = `{"enabled":true,"recipients":[{"email":"r@example.com"}]}`
)

func TestPlanTriggerSignsTheSealedRecordInTheTenantsFolder(t *testing.T) {
	t.Parallel()
	tr, target, err := PlanTrigger(completeWorkflow(t, esignOn, deliveryOn))
	if err != nil {
		t.Fatal(err)
	}
	if target.PDFBlobPath != "signed/t1/workflows/wf-1.pdf" || !target.Sealed || target.DocumentName != "Vendor onboarding.pdf" {
		t.Fatalf("target %+v", target)
	}
	if tr.ESign == nil || !tr.ESign.Sealed || tr.ESign.CorrelationID != "CRM-42" || tr.ESign.PDFHash != "sha256:"+sixtyFour ||
		tr.Delivery == nil || len(tr.ESign.ThenDeliver) == 0 {
		t.Fatalf("trigger %+v", tr)
	}
	if tr, _, err := PlanTrigger(completeWorkflow(t, "", "")); err != nil || !tr.None() {
		t.Fatalf("no settings: %+v, %v", tr, err)
	}
}

func TestPlanTriggerNamesTheFieldAtFault(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, esign, delivery, cid, field string
	}{
		{"signer address", `{"enabled":true,"signers":[{"slotIndex":0,"role":"buyer","email":"nope"}]}`, "", "CRM-42", "templateSettings.esign.signers[0].email"},
		{"no recipients", "", `{"enabled":true,"recipients":[]}`, "CRM-42", "templateSettings.delivery.recipients"},
		{"correlationId the session refuses", esignOn, "", "CRM 42/x", "correlationId"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := completeWorkflow(t, tc.esign, tc.delivery)
			w.CorrelationID = tc.cid
			_, _, err := PlanTrigger(w)
			e, ok := apperr.As(err)
			if !ok || e.Kind != apperr.KindInvalid || len(e.Fields) == 0 || e.Fields[0].Field != tc.field {
				t.Fatalf("err = %v, want a 400 at %s", err, tc.field)
			}
		})
	}
}

func TestTriggerRecordedOnce(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	w := completeWorkflow(t, esignOn, "")
	ch, err := w.TriggerStarted("g-1", nil, now)
	if err != nil || len(ch.Events) != 1 || ch.Events[0].Kind != EvESignStarted {
		t.Fatalf("%+v, %v", ch, err)
	}
	next := w // commit applied the change to w
	if next.ESignGroupID != "g-1" || !next.Triggered() {
		t.Fatal("a started trigger has not ended")
	}
	if _, err := next.TriggerStarted("g-2", nil, now); !errors.Is(err, ErrInvalidState) {
		t.Fatalf("second start: %v", err)
	}
	if _, err := next.TriggerFailed("x", now); !errors.Is(err, ErrInvalidState) {
		t.Fatalf("fail after start: %v", err)
	}
	live := completeWorkflow(t, esignOn, "")
	live.State = StateSealing
	if _, err := live.TriggerStarted("g-1", nil, now); !errors.Is(err, ErrInvalidState) {
		t.Fatalf("before complete: %v", err)
	}
	ch, err = completeWorkflow(t, esignOn, "").TriggerFailed("pdf_not_found", now)
	if err != nil || ch.Events[0].Kind != EvTriggerFailed || ch.Events[0].Data["code"] != "pdf_not_found" {
		t.Fatalf("%+v, %v", ch, err)
	}
}

// TestLicencePlan: a workflow needs workflow, and esign or delivery only when its auto-trigger
// after the seal starts a signing session or deliveries.
func TestLicencePlan(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		esign, delivery string
		want            licence.Plan
	}{
		{"", "", licence.Plan{Workflow: true}},
		{esignOn, "", licence.Plan{Workflow: true, ESign: true}},
		{"", deliveryOn, licence.Plan{Workflow: true, Delivery: true}},
		{esignOn, deliveryOn, licence.Plan{Workflow: true, ESign: true, Delivery: true}},
		{`{"enabled":false}`, `{"enabled":false}`, licence.Plan{Workflow: true}},
	} {
		got, err := LicencePlan(completeWorkflow(t, c.esign, c.delivery))
		if err != nil || got != c.want {
			t.Errorf("esign %s delivery %s: %+v %v, want %+v", c.esign, c.delivery, got, err, c.want)
		}
	}
	if _, err := LicencePlan(completeWorkflow(t, `{"enabled":true}`, "")); apperr.KindOf(err) != apperr.KindInvalid {
		t.Fatalf("settings the trigger refuses: %v, want 400", err)
	}
}

// The create's options.documentId and .docType are the signing session's and the deliveries'
// (conformance D-145; before, always the workflow id and "workflow"); a value the delivery
// refuses names the option.
func TestPlanTriggerTakesTheOptionsDocument(t *testing.T) {
	t.Parallel()
	w := completeWorkflow(t, esignOn, deliveryOn)
	w.Setup.DocumentID, w.Setup.DocType = "PO-1001", "purchase-order"
	tr, target, err := PlanTrigger(w)
	if err != nil {
		t.Fatal(err)
	}
	if target.DocumentID != "PO-1001" || target.DocType != "purchase-order" || tr.ESign.DocumentID != "PO-1001" ||
		tr.ESign.DocType != "purchase-order" || tr.Delivery.DocumentID != "PO-1001" {
		t.Fatalf("target %+v, session %+v, delivery %+v", target, tr.ESign, tr.Delivery)
	}
	w.Setup.DocumentID, w.Setup.DocType = "", ""
	if _, target, _ := PlanTrigger(w); target.DocumentID != "wf-1" || target.DocType != DocType {
		t.Fatalf("default target %+v", target)
	}
	// the delivery takes at most 200 characters of documentId, the create's options 256
	w = completeWorkflow(t, "", deliveryOn)
	w.Setup.DocumentID = strings.Repeat("d", 201)
	_, _, err = PlanTrigger(w)
	if e, ok := apperr.As(err); !ok || len(e.Fields) != 1 || e.Fields[0].Field != "options.documentId" {
		t.Fatalf("err = %v, want a 400 at options.documentId", err)
	}
}
