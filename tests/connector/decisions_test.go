package connector

import (
	"bytes"
	"context"
	"errors"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/connector/client"
	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/notify/outbox"
)

// govSchema has one step (a name and a spend), an error rule capping the spend at 100, and two
// approval stages; with governance a failed rule still goes to the reviewers, who may pass it by
// approve-with-exception.
const govSchema = `governance: true
title: Supplier onboarding
steps:
  - id: company
    title: Company
    fields:
      - { key: companyName, type: string, label: Company name, required: true, maxLength: 200 }
      - { key: annualSpend, type: number, label: Annual spend, required: true, min: 0 }
rules:
  - { id: spend-cap, expr: "data.annualSpend <= 100", severity: error, message: "Spend above 100 needs an exception", fieldKey: annualSpend }
approval:
  stages:
    - { name: Finance, approvers: [finance@example.test] }
    - { name: Legal, approvers: [legal@example.test] }
`

// mailSeen holds the outbox rows a test already took a token or code from.
var mailSeen sync.Map

// fromOutbox waits (up to a minute) for an outbox message not seen before that match accepts,
// and returns what match took from it.
func fromOutbox(t *testing.T, what string, match func(outbox.Row) string) string {
	t.Helper()
	acct, err := azconn.New(azconn.Config{ConnectionString: svc.Azurite.ConnectionString()})
	if err != nil {
		t.Fatal(err)
	}
	box, err := outbox.New(acct, outbox.DefaultTable)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		rows, err := box.List(context.Background())
		if err != nil && !strings.Contains(strings.ToLower(err.Error()), "not found") {
			t.Fatal(err)
		}
		for _, r := range rows {
			if v := match(r); v != "" {
				if _, seen := mailSeen.LoadOrStore(r.Key, true); !seen {
					return v
				}
			}
		}
		time.Sleep(300 * time.Millisecond)
	}
	t.Fatalf("no %s in the outbox", what)
	return ""
}

// reviewerToken is the token of the next review e-mail of workflow id (its link
// <PORTAL_URL>/workflow/<id>/review?pt=<token>).
func reviewerToken(t *testing.T, id string) string {
	t.Helper()
	link := "/workflow/" + id + "/review?pt="
	return fromOutbox(t, "review e-mail of "+id, func(r outbox.Row) string {
		at := strings.Index(r.Text, link)
		if at < 0 {
			return ""
		}
		tok, err := url.QueryUnescape(strings.Fields(r.Text[at+len(link):])[0])
		if err != nil {
			t.Fatal(err)
		}
		return tok
	})
}

var sixDigits = regexp.MustCompile(`\b[0-9]{6}\b`)

// otpCode is the code of the next OTP e-mail to addr.
func otpCode(t *testing.T, addr string) string {
	t.Helper()
	return fromOutbox(t, "OTP e-mail", func(r outbox.Row) string {
		if r.Kind != notify.KindOTP || r.Channel != notify.Email || r.Recipient != addr {
			return ""
		}
		return sixDigits.FindString(r.Text)
	})
}

// otherCode is a six-digit code that is not code.
func otherCode(code string) string {
	if code == "000000" {
		return "111111"
	}
	return "000000"
}

func wantProblem(t *testing.T, what string, err error, status int, code string) {
	t.Helper()
	var e *client.Error
	if !errors.As(err, &e) || e.Status != status || e.Code() != code {
		t.Fatalf("%s: %v, want %d %s", what, err, status, code)
	}
}

func portalToken(t *testing.T, portalURL string) string {
	t.Helper()
	u, err := url.Parse(portalURL)
	if err != nil || u.Query().Get("pt") == "" {
		t.Fatalf("portalUrl %q: %v", portalURL, err)
	}
	return u.Query().Get("pt")
}

// startWorkflow stores the sample package with schema and starts a workflow from it with the
// workflow settings (templateSettings.workflow, JSON); it returns the workflow and the
// participant's token of its portalUrl.
func startWorkflow(t *testing.T, cl *client.Client, schema, workflowSettings string) (*client.Workflow, string) {
	t.Helper()
	ctx := context.Background()
	pkg, err := putPackage(ctx, "connector/wf-"+uuid.NewString()+".zip", offerFiles(map[string][]byte{"schema.yaml": []byte(schema)}))
	if err != nil {
		t.Fatal(err)
	}
	wf, err := cl.CreateWorkflow(ctx, client.CreateWorkflowRequest{TemplatePath: pkg, CorrelationID: "wf-" + uuid.NewString(),
		TemplateSettings: []byte(`{"workflow":` + workflowSettings + `}`)})
	if err != nil {
		t.Fatal(err)
	}
	return wf, portalToken(t, wf.PortalURL)
}

// TestReviewerDecisions drives the reviewer's token routes through the client: on a failed
// error rule GovernanceDecision approve is 409 rules_failed; RequestWorkflowChanges sends the
// workflow back (changes-requested, the request in the participant's payload, the reviewer's
// token spent); in the second round GovernanceDecision approve-with-exception passes Finance
// (stage 2 of 2) and RejectWorkflowWithToken at Legal rejects it (status rejected). On another
// workflow RejectWorkflow with the named approver's JWT rejects it, and the creator's own is 403.
func TestReviewerDecisions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	set := connSettings(t, nil)
	cl, _ := newClient(t, set)
	wf, pt := startWorkflow(t, cl, govSchema, `{"recipients":[{"email":"p@example.test"}]}`)
	submit := func(spend int) {
		t.Helper()
		s, err := cl.SaveWorkflowStep(ctx, wf.WorkflowID, pt, 0, map[string]any{"companyName": "Acme", "annualSpend": spend})
		if err != nil {
			t.Fatal(err)
		}
		a, err := cl.AdvanceWorkflow(ctx, wf.WorkflowID, s.PortalToken)
		if err != nil || a.State != "pending-approval" || a.ValidationOutcome != "failed" {
			t.Fatalf("advance: %+v %v", a, err)
		}
		pt = a.PortalToken
	}
	submit(500)

	finance := reviewerToken(t, wf.WorkflowID)
	_, err := cl.GovernanceDecision(ctx, wf.WorkflowID, finance, "approve", "")
	wantProblem(t, "approve on a failed rule", err, 409, "rules_failed")
	d, err := cl.RequestWorkflowChanges(ctx, wf.WorkflowID, finance, []client.ChangeRequest{{Message: "Spend looks high", FieldKey: "annualSpend", Severity: "warning"}})
	if err != nil || d.State != "changes-requested" || d.WorkflowID != wf.WorkflowID {
		t.Fatalf("request changes: %+v %v", d, err)
	}
	_, err = cl.GovernanceDecision(ctx, wf.WorkflowID, finance, "approve-with-exception", "late")
	wantProblem(t, "the spent reviewer token", err, 403, "reviewer_token_spent")
	p, err := cl.WorkflowPayloadWithToken(ctx, wf.WorkflowID, pt)
	if err != nil || p.State != "changes-requested" || len(p.ChangeRequests) != 1 || p.ChangeRequests[0].Message != "Spend looks high" || p.ChangeRequests[0].FieldKey != "annualSpend" {
		t.Fatalf("the participant's payload after request-changes: %+v %v", p, err)
	}
	pt = p.PortalToken

	submit(600)
	finance = reviewerToken(t, wf.WorkflowID)
	d, err = cl.GovernanceDecision(ctx, wf.WorkflowID, finance, "approve-with-exception", "Strategic supplier; CFO agreed.")
	if err != nil || d.State != "pending-approval" || d.CurrentApprovalStage != 2 || d.TotalApprovalStages != 2 {
		t.Fatalf("approve-with-exception: %+v %v", d, err)
	}
	legal := reviewerToken(t, wf.WorkflowID)
	d, err = cl.RejectWorkflowWithToken(ctx, wf.WorkflowID, legal, "Not with this spend")
	if err != nil || d.State != "rejected" {
		t.Fatalf("reject with the reviewer's token: %+v %v", d, err)
	}
	if s, err := cl.WorkflowStatus(ctx, wf.WorkflowID); err != nil || s.State != "rejected" || s.CompletedAt == "" {
		t.Fatalf("status after the rejection: %+v %v", s, err)
	}
	_, err = cl.RejectWorkflowWithToken(ctx, wf.WorkflowID, legal, "again")
	if err == nil {
		t.Fatal("a rejected workflow was rejected again")
	}

	// RejectWorkflow: the stage's named approver (JWT Workflow.Approver); not its creator.
	other, opt := startWorkflow(t, cl, wfSchema, `{"recipients":[{"email":"p@example.test"}]}`)
	s, err := cl.SaveWorkflowStep(ctx, other.WorkflowID, opt, 0, map[string]any{"companyName": "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	if a, err := cl.AdvanceWorkflow(ctx, other.WorkflowID, s.PortalToken); err != nil || a.State != "pending-approval" {
		t.Fatalf("advance: %+v %v", a, err)
	}
	_, err = cl.RejectWorkflow(ctx, other.WorkflowID, "mine")
	wantProblem(t, "the creator's reject", err, 403, "self_approval")
	named := client.New(baseURL(), svc.Host.HostKey(), staticToken(t, "finance@example.test"))
	if d, err := named.RejectWorkflow(ctx, other.WorkflowID, "Incomplete"); err != nil || d.State != "rejected" {
		t.Fatalf("reject: %+v %v", d, err)
	}
	if s, err := cl.WorkflowStatus(ctx, other.WorkflowID); err != nil || s.State != "rejected" {
		t.Fatalf("status after the approver's rejection: %+v %v", s, err)
	}
}

// TestOTPVerify drives WorkflowOTPVerify and DeliveryOTPVerify with the code of the e-mail in
// the outbox: before it the participant's payload and the recipient's SAS are 403 otp_required,
// a wrong code is 400 otp_invalid, the right one verifies, and then they open.
func TestOTPVerify(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	set := connSettings(t, nil)
	cl, _ := newClient(t, set)

	addr := "wf-otp-" + uuid.NewString()[:8] + "@example.test"
	wf, pt := startWorkflow(t, cl, wfSchema, `{"requireOtp":true,"recipients":[{"email":"`+addr+`"}]}`)
	_, err := cl.WorkflowPayloadWithToken(ctx, wf.WorkflowID, pt)
	wantProblem(t, "the payload before the code", err, 403, "otp_required")
	if o, err := cl.WorkflowOTPSend(ctx, wf.WorkflowID, pt); err != nil || !o.OK {
		t.Fatalf("workflow OTP send: %+v %v", o, err)
	}
	code := otpCode(t, addr)
	_, err = cl.WorkflowOTPVerify(ctx, wf.WorkflowID, pt, otherCode(code))
	wantProblem(t, "a wrong workflow code", err, 400, "otp_invalid")
	if v, err := cl.WorkflowOTPVerify(ctx, wf.WorkflowID, pt, code); err != nil || !v.Verified {
		t.Fatalf("workflow OTP verify: %+v %v", v, err)
	}
	if p, err := cl.WorkflowPayloadWithToken(ctx, wf.WorkflowID, pt); err != nil || !p.RequireOTP || len(p.Steps) != 1 {
		t.Fatalf("the payload after the code: %+v %v", p, err)
	}
	_, err = cl.WorkflowOTPVerify(ctx, wf.WorkflowID, pt, code)
	wantProblem(t, "a second workflow verify", err, 400, "otp_already_verified")

	pdf, err := os.ReadFile("../e2e/testdata/plain-1p.pdf")
	if err != nil {
		t.Fatal(err)
	}
	up, err := cl.UploadDocument(ctx, bytes.NewReader(pdf))
	if err != nil {
		t.Fatal(err)
	}
	to := "dl-otp-" + uuid.NewString()[:8] + "@example.test"
	dl, err := cl.CreateDelivery(ctx, client.CreateDeliveryRequest{CorrelationID: "otp-" + uuid.NewString(), DocumentName: "Contract",
		PDFBlobPath: up.PDFBlobPath, Mode: "secure-email", RequireOTP: true, Recipients: []client.Recipient{{Email: to}}}, "")
	if err != nil || len(dl.Sessions) != 1 {
		t.Fatalf("delivery %+v %v", dl, err)
	}
	u, _ := url.Parse(dl.Sessions[0].PortalURL)
	id, tok := dl.Sessions[0].DeliveryID, u.Query().Get("t")
	_, err = cl.DeliverySAS(ctx, id, tok)
	wantProblem(t, "the SAS before the code", err, 403, "otp_required")
	if o, err := cl.DeliveryOTPSend(ctx, id, tok); err != nil || !o.OK {
		t.Fatalf("delivery OTP send: %+v %v", o, err)
	}
	code = otpCode(t, to)
	_, err = cl.DeliveryOTPVerify(ctx, id, tok, otherCode(code))
	wantProblem(t, "a wrong delivery code", err, 400, "otp_invalid")
	if v, err := cl.DeliveryOTPVerify(ctx, id, tok, code); err != nil || !v.Verified {
		t.Fatalf("delivery OTP verify: %+v %v", v, err)
	}
	if m, err := cl.DeliveryMetadata(ctx, id, tok); err != nil || !m.RequireOTP || !m.OTPVerified {
		t.Fatalf("metadata after the code: %+v %v", m, err)
	}
	if s, err := cl.DeliverySAS(ctx, id, tok); err != nil || s.SASURL == "" {
		t.Fatalf("the SAS after the code: %+v %v", s, err)
	}
}
