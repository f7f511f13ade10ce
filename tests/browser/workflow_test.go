package browser

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/azure/blobstore"
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/notify/outbox"
)

// wfSchema: a company step (name, contact e-mail) and a spend step; one approver.
const wfSchema = `title: Supplier onboarding
steps:
  - id: company
    title: Company
    fields:
      - { key: companyName, type: string, label: Company name, required: true, maxLength: 200 }
      - { key: contactEmail, type: email, label: Contact e-mail, required: true }
  - id: money
    title: Spend
    fields:
      - { key: annualSpend, type: number, label: Annual spend, required: true, min: 0, help: "In thousands" }
rules:
  - { id: spend-cap, expr: "data.annualSpend <= 100", severity: error, message: "Spend above 100 needs an exception", fieldKey: annualSpend }
approval:
  stages:
    - { name: Finance, approvers: [finance@example.com] }
`

// wfPackage stores the sample template package with schema as a folder of blobs.
func wfPackage(t *testing.T, schema string) string {
	t.Helper()
	acct, err := azconn.New(azconn.Config{ConnectionString: svc.Azurite.ConnectionString()})
	if err != nil {
		t.Fatal(err)
	}
	st := blobstore.New(acct)
	ctx := context.Background()
	if err := st.EnsureContainer(ctx, "templates"); err != nil {
		t.Fatal(err)
	}
	dir := "shared/browser/" + uuid.NewString() + "/" // the operator's packages, open to every tenant
	files := map[string][]byte{"schema.yaml": []byte(schema)}
	for _, name := range []string{"template.yaml", "template.pdf"} {
		if files[name], err = os.ReadFile(filepath.Join("..", "..", "examples", "offer", name)); err != nil {
			t.Fatal(err)
		}
	}
	for name, b := range files {
		if _, err := st.Put(ctx, "templates", dir+name, bytes.NewReader(b), "application/octet-stream", nil); err != nil {
			t.Fatal(err)
		}
	}
	return "templates/" + dir
}

// wfMail waits for the n-th message of kind to recipient whose text holds a link starting with
// prefix, and answers that link.
func wfMail(t *testing.T, recipient string, kind notify.Kind, prefix string, n int) string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		rows, err := mailbox(t).List(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var got []outbox.Row
		for _, r := range rows {
			if r.Recipient == recipient && r.Kind == kind && strings.Contains(r.Text, prefix) {
				got = append(got, r)
			}
		}
		if len(got) >= n {
			at := strings.Index(got[n-1].Text, prefix)
			link := strings.Fields(got[n-1].Text[at:])[0]
			rememberLink(link)
			return link
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited for %d %s messages, have %d", n, kind, len(got))
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// TestWorkflowFormReviewedAndApproved: the participant fills the form in the browser (the
// browser's field checks stop empty, malformed and out-of-range answers before anything is
// sent), submits it; the reviewer sends it back with a change request on one field, which the
// participant sees beside that field; the participant corrects and resubmits; the reviewer
// approves and the workflow completes.
func TestWorkflowFormReviewedAndApproved(t *testing.T) {
	t.Parallel()
	participant := newEmail("participant")
	id := createWorkflow(t, wfSchema, participant, false)
	base := portalURL + "/workflow/" + id

	form := newTab(t)
	form.open(wfMail(t, participant, "workflow_invitation", base+"?pt=", 1))
	form.wait("#step-form")
	form.typeInto("#f-contactEmail", "not-an-address")
	form.click("#step-next")
	if e := form.text("#f-companyName-err"); !strings.Contains(e, "is required") {
		t.Fatalf("an empty required field shows %q", e)
	}
	if e := form.text("#f-contactEmail-err"); !strings.Contains(e, "plain e-mail address") {
		t.Fatalf("a malformed e-mail shows %q", e)
	}
	form.shot("workflow-form-errors")
	if st := workflowStatus(t, id); st.JSON["currentStepIndex"] != 0.0 {
		t.Fatalf("the refused answers moved the workflow: %s", st.Raw)
	}
	form.fill("#f-companyName", "Acme Supplies")
	form.fill("#f-contactEmail", "ops@acme.example")
	form.click("#step-next")
	form.waitText("#step-title", "Step 2 of 2")
	form.fill("#f-annualSpend", "-5")
	form.click("#step-next")
	if e := form.text("#f-annualSpend-err"); !strings.Contains(e, "must be at least 0") {
		t.Fatalf("a negative spend shows %q", e)
	}
	form.fill("#f-annualSpend", "50")
	form.click("#step-next")
	form.endPage("submitted")
	form.shot("workflow-submitted")

	review := newTab(t)
	review.open(wfMail(t, "finance@example.com", "workflow_approval", base+"/review?pt=", 1))
	if a := review.text(`dd[data-answer="companyName"]`); a != "Acme Supplies" {
		t.Fatalf("the reviewer sees the company name %q", a)
	}
	// validationResults list the spend rule that held (passed: true): no failed check is shown
	var listed bool
	review.eval(`document.getElementById("rules-title") !== null || document.getElementById("decision-approve-with-exception")?.checked === true`, &listed)
	if listed {
		t.Fatal("a rule that held is shown as a failed check")
	}
	review.click("#decision-request-changes")
	review.run("choose the field", chromedpSetSelect("#change-0-field", "companyName"))
	review.typeInto("#change-0-message", "Use the registered company name.")
	review.shot("workflow-review")
	review.click("#decision-submit")
	review.endPage("decided")

	form.open(wfMail(t, participant, "workflow_changes", base+"?pt=", 1))
	if note := form.text(`[data-field="companyName"] [data-change-for="companyName"]`); !strings.Contains(note, "Use the registered company name.") {
		t.Fatalf("the change request beside the field reads %q", note)
	}
	form.shot("workflow-changes")
	form.fill("#f-companyName", "Acme Supplies Ltd")
	form.click("#step-next")
	form.waitText("#step-title", "Step 2 of 2")
	form.click("#step-next")
	form.endPage("submitted")

	again := newTab(t)
	again.open(wfMail(t, "finance@example.com", "workflow_approval", base+"/review?pt=", 2))
	if a := again.text(`dd[data-answer="companyName"]`); a != "Acme Supplies Ltd" {
		t.Fatalf("the reviewer sees the company name %q after the change", a)
	}
	again.click("#decision-approve")
	again.click("#decision-submit")
	if h := again.endPage("decided"); h != "Approved" {
		t.Fatalf("after approving the page says %q", h)
	}
	deadline := time.Now().Add(90 * time.Second)
	for st := workflowStatus(t, id); st.str("state") != "complete"; st = workflowStatus(t, id) {
		if time.Now().After(deadline) {
			t.Fatalf("the approved workflow did not complete: %s", st.Raw)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// createWorkflow starts a workflow on schema for participant (who must pass an e-mailed OTP
// first with otp) and answers its id.
func createWorkflow(t *testing.T, schema, participant string, otp bool) string {
	t.Helper()
	r := asInitiator(t, "POST", "workflow", map[string]any{"templatePath": wfPackage(t, schema), "correlationId": "browser-wf-" + uuid.NewString(),
		"templateSettings": map[string]any{"workflow": map[string]any{"requireOtp": otp,
			"recipients": []any{map[string]any{"email": participant, "displayName": "Pat"}}, "organizationName": "Acme"}}})
	if r.Status != http.StatusCreated {
		t.Fatalf("create workflow: %d %s", r.Status, r.Raw)
	}
	return r.str("workflowId")
}

// TestWorkflowExceptionNeedsJustification: the participant passes the e-mailed OTP the workflow
// requires before the form shows; under governance a spend over the cap reaches the reviewer
// with the failed check shown; approving it takes an exception whose justification the page
// requires before sending.
func TestWorkflowExceptionNeedsJustification(t *testing.T) {
	t.Parallel()
	participant := newEmail("governed")
	id := createWorkflow(t, "governance: true\n"+strings.Replace(wfSchema, "finance@example.com", "controller@example.com", 1), participant, true)
	base := portalURL + "/workflow/" + id
	form := newTab(t)
	form.open(wfMail(t, participant, "workflow_invitation", base+"?pt=", 1))
	form.wait("#otp-form")
	form.shot("workflow-otp")
	form.passOTP(participant, 1)
	form.fill("#f-companyName", "Big Spender Inc")
	form.fill("#f-contactEmail", "ap@bigspender.example")
	form.click("#step-next")
	form.waitText("#step-title", "Step 2 of 2")
	form.fill("#f-annualSpend", "500")
	form.click("#step-next")
	form.endPage("submitted")

	review := newTab(t)
	review.open(wfMail(t, "controller@example.com", "workflow_approval", base+"/review?pt=", 1))
	if failed := review.text("#rules-title + ul"); !strings.Contains(failed, "Spend above 100 needs an exception") {
		t.Fatalf("the failed check reads %q", failed)
	}
	var chosen bool
	review.eval(`document.getElementById("decision-approve-with-exception").checked`, &chosen)
	if !chosen {
		t.Fatal("a failed check does not preselect the exception")
	}
	review.click("#decision-submit")
	if m := review.text("#decision-message"); !strings.Contains(m, "justification") {
		t.Fatalf("an empty justification shows %q", m)
	}
	review.typeInto("#justification", "Strategic supplier; the board approved the spend.")
	review.shot("workflow-exception")
	review.click("#decision-submit")
	if h := review.endPage("decided"); h != "Approved" {
		t.Fatalf("after the exception the page says %q", h)
	}
	if st := workflowStatus(t, id); st.str("state") != "sealing" && st.str("state") != "complete" {
		t.Fatalf("after the exception the workflow is %s", st.Raw)
	}
}

func workflowStatus(t *testing.T, id string) reply {
	t.Helper()
	r := asInitiator(t, "GET", "workflow/"+id+"/status", nil)
	if r.Status != http.StatusOK {
		t.Fatalf("workflow status: %d %s", r.Status, r.Raw)
	}
	return r
}
