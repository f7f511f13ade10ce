package connector

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"testing"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/connector/client"
)

// TestClientRoutes calls the routes the command line does not, against the service: a
// session's resend, cancel, revoke, erase and seal retry; a recipient's page routes; the
// workflow's portal-token routes; each answer decoded into its type or a typed problem.
func TestClientRoutes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cl, _ := newClient(t, connSettings(t, nil))
	pdf, err := os.ReadFile("../e2e/testdata/template-3p.pdf")
	if err != nil {
		t.Fatal(err)
	}
	up, err := cl.UploadDocument(ctx, bytes.NewReader(pdf))
	if err != nil || up.Pages != 3 || up.Size != int64(len(pdf)) {
		t.Fatalf("upload %+v %v", up, err)
	}
	session := func() *client.Session {
		s, err := cl.CreateSession(ctx, client.CreateSessionRequest{CorrelationID: "routes-" + uuid.NewString(), DocumentID: "Contract",
			DocType: "contract", PDFBlobPath: up.PDFBlobPath, PDFHash: up.PDFHash, SigningMode: "single",
			Signers: []client.Signer{{SlotIndex: 0, Role: "buyer", Email: "b-" + uuid.NewString()[:8] + "@example.test"}}})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a := session()
	_, err = cl.ResendInvite(ctx, a.CorrelationID, -1)
	wantProblem(t, "resend to a slot not yet activated", err, http.StatusConflict, "nothing_to_resend")
	if l, err := cl.CancelSession(ctx, a.GroupID); err != nil || l.State != "cancelled" || l.CancelReason != "cancelled" {
		t.Fatalf("cancel %+v %v", l, err)
	}
	// The status by groupId is the status by correlationId (spec: the groupId polls status).
	byCorr, err := cl.SessionStatus(ctx, a.CorrelationID)
	if err != nil {
		t.Fatal(err)
	}
	if byGroup, err := cl.SessionStatusByGroup(ctx, a.GroupID); err != nil || !reflect.DeepEqual(byGroup, byCorr) || byGroup.State != "cancelled" {
		t.Fatalf("status by groupId %+v %v, by correlationId %+v", byGroup, err, byCorr)
	}
	_, err = cl.SessionStatusByGroup(ctx, uuid.NewString())
	wantProblem(t, "status of an unknown groupId", err, http.StatusNotFound, "session_not_found")
	_, err = cl.SessionStatusByGroup(ctx, "not-a-group")
	wantProblem(t, "status of a groupId that is not a UUID", err, http.StatusBadRequest, "invalid_request")
	_, err = cl.RetrySeal(ctx, a.GroupID)
	wantProblem(t, "seal retry of a cancelled session", err, http.StatusConflict, "session_not_sealing")
	if e, err := cl.EraseSignerEmail(ctx, a.GroupID, 0); err != nil || !e.Erased {
		t.Fatalf("erase %+v %v", e, err)
	}
	b := session()
	if l, err := cl.RevokeSession(ctx, b.GroupID); err != nil || l.State != "cancelled" || l.CancelReason != "revoked" {
		t.Fatalf("revoke %+v %v", l, err)
	}
	_, err = cl.EraseSignerEmail(ctx, session().GroupID, 0)
	wantProblem(t, "erase while live", err, http.StatusConflict, "session_live")

	d, err := cl.CreateDelivery(ctx, client.CreateDeliveryRequest{CorrelationID: "routes-" + uuid.NewString(), DocumentName: "Contract",
		PDFBlobPath: up.PDFBlobPath, Mode: "secure-email", Recipients: []client.Recipient{{Email: "r-" + uuid.NewString()[:8] + "@example.test"}}}, "")
	if err != nil || len(d.Sessions) != 1 {
		t.Fatalf("delivery %+v %v", d, err)
	}
	u, _ := url.Parse(d.Sessions[0].PortalURL)
	id, tok := d.Sessions[0].DeliveryID, u.Query().Get("t")
	if err := cl.DeliveryAccess(ctx, id, tok, "opened", ""); err != nil {
		t.Fatal(err)
	}
	if s, err := cl.DeliverySAS(ctx, id, tok); err != nil || s.SASURL == "" {
		t.Fatalf("sas %+v %v", s, err)
	}
	if s, err := cl.DeliveryDownload(ctx, id, tok); err != nil || s.SASURL == "" {
		t.Fatalf("download %+v %v", s, err)
	}
	if err := cl.DeliveryAccess(ctx, id, tok, "downloaded", "203.0.113.9"); err != nil {
		t.Fatal(err)
	}
	_, err = cl.DeliveryOTPSend(ctx, id, tok)
	wantProblem(t, "an OTP for a delivery without one", err, http.StatusBadRequest, "otp_not_required")
	if list, err := cl.ListDeliveries(ctx, d.CorrelationID); err != nil || list[0].State != "downloaded" {
		t.Fatalf("list %+v %v", list, err)
	}

	wf, pt := startWorkflow(t, cl, wfSchema, `{"recipients":[{"email":"p@example.test"}]}`)
	p, err := cl.WorkflowPayloadWithToken(ctx, wf.WorkflowID, pt)
	if err != nil || len(p.Steps) != 1 || p.Steps[0].Fields[0].Key != "companyName" || p.PortalToken == "" {
		t.Fatalf("payload %+v %v", p, err)
	}
	if s, err := cl.WorkflowStatusWithToken(ctx, wf.WorkflowID, p.PortalToken); err != nil || s.State != "in-progress" {
		t.Fatalf("status with token %+v %v", s, err)
	}
	_, err = cl.ResendWorkflowInvite(ctx, wf.WorkflowID, p.PortalToken)
	var e *client.Error
	if !errors.As(err, &e) || e.Code() != "invite_rate_limited" || e.RetryAfter <= 0 {
		t.Fatalf("resend at once: %v", err)
	}
	_, err = cl.FixWorkflowValidation(ctx, wf.WorkflowID, p.PortalToken)
	wantProblem(t, "fix-validation in progress", err, http.StatusConflict, "invalid_state")
	_, err = cl.WorkflowOTPSend(ctx, wf.WorkflowID, p.PortalToken)
	wantProblem(t, "an OTP for a workflow without one", err, http.StatusBadRequest, "otp_not_required")
	_, err = cl.ApproveWorkflow(ctx, wf.WorkflowID, "")
	wantProblem(t, "approve without Workflow.Approver in progress", err, http.StatusConflict, "invalid_state")
	_, err = cl.EscalateWorkflow(ctx, wf.WorkflowID)
	wantProblem(t, "escalate in progress", err, http.StatusConflict, "invalid_state")
	if d, err := cl.CancelWorkflow(ctx, wf.WorkflowID); err != nil || d.State != "cancelled" {
		t.Fatalf("cancel %+v %v", d, err)
	}
	_, err = cl.SealWorkflow(ctx, wf.WorkflowID)
	wantProblem(t, "seal of a cancelled workflow", err, http.StatusConflict, "invalid_state")
	// spec "any -> sealing": a manual seal of data that fail the rules (a required field empty)
	// seals them; it used to answer 409 rules_failed.
	wf, _ = startWorkflow(t, cl, wfSchema, `{"recipients":[{"email":"p@example.test"}]}`)
	if d, err := cl.SealWorkflow(ctx, wf.WorkflowID); err != nil || d.State != "sealing" || d.WorkflowID != wf.WorkflowID {
		t.Fatalf("seal with a required field empty %+v %v", d, err)
	}
}
