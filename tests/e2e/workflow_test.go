package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/devtools/devkeys"
	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/licensing"
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/notify/outbox"
	"github.com/esign-svc/esign/shared/otp"
	"github.com/esign-svc/esign/shared/pdf/ltv"
	"github.com/esign-svc/esign/shared/pdf/verify"
	"github.com/esign-svc/esign/shared/pii"
	"github.com/esign-svc/esign/shared/tokens"
	"github.com/esign-svc/esign/shared/workflow"
	"github.com/esign-svc/esign/shared/workflow/workflowstore"
)

// wfSchema is a two-step schema: a name, then a spend capped at 100 by an error rule; stage
// Finance has two approvers in routing order, stage Legal one.
const wfSchema = `title: Supplier onboarding
steps:
  - id: company
    title: Company
    fields:
      - { key: companyName, type: string, label: Company name, required: true, maxLength: 200 }
  - id: money
    fields:
      - { key: annualSpend, type: number, label: Annual spend, required: true, min: 0 }
rules:
  - { id: spend-cap, expr: "data.annualSpend <= 100", severity: error, message: "Spend above 100 needs an exception", fieldKey: annualSpend }
approval:
  stages:
    - { name: Finance, approvers: [finance@example.com, cfo@example.com] }
    - { name: Legal, approvers: [legal@example.com] }
`

// wfPackage stores the sample package with schema (governance first when gov) as a folder.
func wfPackage(t testing.TB, gov bool) string {
	t.Helper()
	files := examplePackage(t)
	s := wfSchema
	if gov {
		s = "governance: true\n" + s
	}
	files["schema.yaml"] = []byte(s)
	return uploadFolderPackage(t, files)
}

type wfCreated struct {
	ID, Token string
	Reply     reply
}

func createWorkflow(t testing.TB, tenant string, body map[string]any) wfCreated {
	t.Helper()
	r := call(t, "POST", svc.url("workflow"), body, bearer(svc.jwt(t, tenant, "Esign.Initiator")))
	if r.Status != http.StatusCreated && r.Status != http.StatusOK {
		t.Fatalf("create workflow: %d %s", r.Status, r.Raw)
	}
	u, err := url.Parse(r.str("portalUrl"))
	if err != nil || !strings.HasSuffix(u.Path, "/workflow/"+r.str("workflowId")) {
		t.Fatalf("portalUrl %q", r.str("portalUrl"))
	}
	tok := u.Query().Get("pt")
	remember("token", tok)
	return wfCreated{ID: r.str("workflowId"), Token: tok, Reply: r}
}

func wfBody(pkg string) map[string]any {
	return map[string]any{"templatePath": pkg, "correlationId": "wf-" + uuid.NewString(),
		"templateSettings": map[string]any{"workflow": map[string]any{
			"recipients": []any{map[string]any{"email": email(1), "displayName": "Pat"}}, "organizationName": "Acme"}}}
}

// wfCall calls a portal route of workflow id with token; it checks that a 2xx carries a fresh
// token in X-Portal-Token (but the reviewer's decisions: their token is then spent).
func wfCall(t testing.TB, method, id, route, token string, body any) reply {
	t.Helper()
	p := "workflow/" + id + route
	if token != "" {
		p += "?token=" + url.QueryEscape(token)
	}
	r := call(t, method, svc.url(p), body, nil)
	decision := route == "/request-changes" || route == "/governance-decision" || route == "/reject"
	if r.Status < 300 && !decision {
		fresh := r.Header.Get("X-Portal-Token")
		if fresh == "" {
			t.Fatalf("%s %s: %d without X-Portal-Token", method, route, r.Status)
		}
		remember("token", fresh)
	}
	return r
}

// wfPerson mints the token of a person of tenantA other than the workflows' creator (who is
// svc.jwt's default identity): a fresh oid, the e-mail addr and the display name name.
func wfPerson(t testing.TB, addr, name string, roles ...string) string {
	t.Helper()
	tok, err := devkeys.MintFromDir(svc.keysDir, devkeys.TokenOptions{Tenant: tenantA, Roles: roles, Subject: addr,
		ObjectID: uuid.NewString(), Name: name, Email: addr})
	if err != nil {
		t.Fatal(err)
	}
	remember("JWT", tok)
	return tok
}

// wfAs calls a JWT route of workflow id with token tok.
func wfAs(t testing.TB, method, id, route, tok string, body any) reply {
	t.Helper()
	return call(t, method, svc.url("workflow/"+id+route), body, bearer(tok))
}

func wfJWT(t testing.TB, method, id, route, role string, body any) reply {
	t.Helper()
	return call(t, method, svc.url("workflow/"+id+route), body, bearer(svc.jwt(t, tenantA, role)))
}

func wantWF(t testing.TB, r reply, status int, state string) {
	t.Helper()
	if r.Status != status || (state != "" && r.str("state") != state) {
		t.Fatalf("got %d state %q (%s), want %d %q", r.Status, r.str("state"), r.Raw, status, state)
	}
}

func wantProblem(t testing.TB, r reply, status int, code, field string) {
	t.Helper()
	if r.Status != status || r.code() != code {
		t.Fatalf("got %d %q (%s), want %d %q", r.Status, r.code(), r.Raw, status, code)
	}
	if field != "" && (len(r.fields()) != 1 || r.fields()[0] != field) {
		t.Fatalf("fields %v, want [%s]", r.fields(), field)
	}
}

// reviewerLink is the reviewer token of the next approval e-mail of workflow id: the link the
// service sent the current approver (notifiedLink).
func reviewerLink(t testing.TB, id string) string {
	t.Helper()
	_, tok := notifiedLink(t, id, workflow.NotifyApproval)
	return tok
}

// wfMailSeen holds the outbox rows notified returned already.
var wfMailSeen sync.Map

// notified waits for the next e-mail of kind with a link to workflow id that it did not return
// before, as the processor's workflow-notify job sends it to the outbox, checks its link
// ({PORTAL_URL}/workflow/{id}, /review for an approval) and token (the service's keys; the
// participant's, or a reviewer's for an approval), and returns what the e-mail was for: its kind
// and, for an approval, the reviewer turn the token names.
func notified(t testing.TB, id, kind string) workflow.NotifyMessage {
	t.Helper()
	m, _ := notifiedLink(t, id, kind)
	return m
}

// notifiedLink is notified that also returns the portal token of the e-mail's link.
func notifiedLink(t testing.TB, id, kind string) (workflow.NotifyMessage, string) {
	t.Helper()
	box, err := outbox.New(storageAccount(t), outbox.DefaultTable)
	if err != nil {
		t.Fatal(err)
	}
	ring, err := tokens.ParseKeyRing(svc.settings["TOKEN_KEYS"])
	if err != nil {
		t.Fatal(err)
	}
	codec := tokens.NewCodec(ring)
	base := strings.TrimRight(svc.settings["PORTAL_URL"], "/") + "/workflow/" + id
	link, role := base+"?pt=", tokens.RoleParticipant
	if kind == workflow.NotifyApproval {
		link, role = base+"/review?pt=", tokens.RoleReviewer
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		rows, err := box.List(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			at := strings.Index(r.Text, link)
			if string(r.Kind) != kind || at < 0 {
				continue
			}
			if _, seen := wfMailSeen.LoadOrStore(r.Key, true); seen {
				continue
			}
			raw, err := url.QueryUnescape(strings.Fields(r.Text[at+len(link):])[0])
			if err != nil {
				t.Fatal(err)
			}
			remember("token", raw)
			tok, err := codec.VerifyWorkflowPortal(raw)
			if err != nil || tok.WorkflowID != id || tok.Role != role {
				t.Fatalf("%s e-mail token %+v %v", kind, tok, err)
			}
			m := workflow.NotifyMessage{Kind: kind, WorkflowID: id}
			if role == tokens.RoleReviewer {
				m.Reviewer = tok.Participant
			}
			return m, raw
		}
		time.Sleep(300 * time.Millisecond)
	}
	t.Fatalf("no %s e-mail of workflow %s in the outbox", kind, id)
	return workflow.NotifyMessage{}, ""
}

// sealed waits until the workflow-seal job completed workflow id (its status, initiator's JWT)
// and returns the status.
func sealed(t testing.TB, id string) reply {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		st := wfJWT(t, "GET", id, "/status", "Esign.Initiator", nil)
		if st.Status != http.StatusOK || st.str("state") == "complete" || time.Now().After(deadline) {
			wantWF(t, st, 200, "complete")
			return st
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// sealedText checks the sealed record of a complete workflow's status (its stored hash, pdfsig,
// qpdf, and that it is PAdES B-LTA offline: issue 25) and returns its text, white space folded.
func sealedText(t *testing.T, st reply) string {
	t.Helper()
	sealRequireTools(t)
	pdf, _ := sealDownload(t, st.str("sealedPdfPath"))
	if sum := sha256.Sum256(pdf); st.str("sealedPdfHash") != "sha256:"+hex.EncodeToString(sum[:]) {
		t.Fatalf("the sealed PDF's hash is not the status's %s", st.str("sealedPdfHash"))
	}
	path := sealWriteTemp(t, t.TempDir(), "sealed.pdf", pdf)
	if out, _ := sealRun("pdfsig", path); !strings.Contains(out, "Signature is Valid.") || !strings.Contains(out, "Total document signed") {
		t.Fatalf("pdfsig:\n%s", out)
	}
	if out, err := sealRun("qpdf", "--check", path); err != nil {
		t.Fatalf("qpdf --check: %v\n%s", err, out)
	}
	if v, err := verify.Verify(pdf, verify.Options{}); err != nil || v.Level != ltv.LevelLTA {
		t.Fatalf("the sealed record: %v, level %v; want B-LTA", err, v)
	}
	out, err := sealRun("pdftotext", "-enc", "UTF-8", path, "-")
	if err != nil {
		t.Fatalf("pdftotext: %v\n%s", err, out)
	}
	return strings.Join(strings.Fields(out), " ")
}

// fill saves both steps (spend as given) and advances twice.
func fill(t testing.TB, wf wfCreated, name string, spend float64) reply {
	t.Helper()
	wantWF(t, wfCall(t, "PATCH", wf.ID, "/step/0", wf.Token, map[string]any{"data": map[string]any{"companyName": name}}), 200, "")
	wantWF(t, wfCall(t, "POST", wf.ID, "/advance", wf.Token, nil), 200, "in-progress")
	wantWF(t, wfCall(t, "PATCH", wf.ID, "/step/1", wf.Token, map[string]any{"data": map[string]any{"annualSpend": spend}}), 200, "")
	return wfCall(t, "POST", wf.ID, "/advance", wf.Token, nil)
}

// TestWorkflowHappyPath: create (invitation queued), the portal payload, both steps saved and
// advanced to pending-approval (approval e-mail queued for Finance's first approver), approve at
// stage 1 then stage 2 to sealing; the seal job completes it (status complete, the sealed PDF)
// and the callback job posts the signed callback; status and export
// (json, and csv with a formula cell escaped).
func TestWorkflowHappyPath(t *testing.T) {
	t.Parallel()
	body := wfBody(wfPackage(t, false))
	body["callbackUrl"] = wfCallbackURL()
	wf := createWorkflow(t, tenantA, body)
	wantWF(t, wf.Reply, 201, "in-progress")
	notified(t, wf.ID, workflow.NotifyInvitation)

	p := wfCall(t, "GET", wf.ID, "", wf.Token, nil)
	wantWF(t, p, 200, "in-progress")
	steps, _ := p.JSON["steps"].([]any)
	if len(steps) != 2 || p.str("organizationName") != "Acme" || p.str("title") != "Supplier onboarding" {
		t.Fatalf("payload %s", p.Raw)
	}
	// The fresh token works as the first did.
	next := p.Header.Get("X-Portal-Token")
	r := fill(t, wfCreated{ID: wf.ID, Token: next}, "=HYPERLINK(\"x\")", 50)
	wantWF(t, r, 200, "pending-approval")
	if r.str("validationOutcome") != "passed" {
		t.Fatalf("advance %s", r.Raw)
	}
	if m := notified(t, wf.ID, workflow.NotifyApproval); m.Reviewer != workflow.ReviewerID(1, 1, 0) {
		t.Fatalf("approval message %+v", m)
	}
	// Separation of duties (DESIGN 14): the creator (svc.jwt's identity) holding the role may not
	// decide, nor a holder of the role the stage does not name.
	wantProblem(t, wfJWT(t, "POST", wf.ID, "/approve", "Workflow.Approver", nil), 403, "self_approval", "")
	wantProblem(t, wfAs(t, "POST", wf.ID, "/approve", wfPerson(t, "someone@example.com", "Sam Else", "Workflow.Approver"), nil), 403, "approver_not_named", "")
	finance := wfPerson(t, "Finance@Example.com", "Fiona Finance", "Workflow.Approver") // e-mails compare case-insensitively
	r = wfAs(t, "POST", wf.ID, "/approve", finance, map[string]any{"comment": "fine"})
	wantWF(t, r, 200, "pending-approval")
	if r.JSON["currentApprovalStage"] != 2.0 {
		t.Fatalf("after stage 1: %s", r.Raw)
	}
	if m := notified(t, wf.ID, workflow.NotifyApproval); m.Reviewer != workflow.ReviewerID(1, 2, 0) {
		t.Fatalf("stage 2 approval message %+v", m)
	}
	// An initiator is not an approver.
	wantProblem(t, wfJWT(t, "POST", wf.ID, "/approve", "Esign.Initiator", nil), 403, "role_required", "")
	// Finance's approver decided stage 1: not stage 2 as well; Legal's named approver does.
	wantProblem(t, wfAs(t, "POST", wf.ID, "/approve", finance, nil), 403, "stage_already_decided_by_you", "")
	wantWF(t, wfAs(t, "POST", wf.ID, "/approve", wfPerson(t, "legal@example.com", "Lee Legal", "Workflow.Approver"), nil), 200, "sealing")
	st := sealed(t, wf.ID)
	wantMetered(t, licensing.KindWorkflowSealed, tenantA, wf.ID)
	calledBack(t, wf.ID, st.str("correlationId"), "complete")
	if st.str("sealedPdfPath") != "signed/"+tenantA+"/workflows/"+wf.ID+".pdf" || st.str("esignGroupId") != "" {
		t.Fatalf("status %s", st.Raw)
	}
	text := sealedText(t, st)
	for _, want := range []string{"Workflow record", `=HYPERLINK("x")`, "50", "approve at stage 1 (Finance)", "approve at stage 2 (Legal)", "fine",
		"Approver: Fiona Finance", "Approver: Lee Legal", "Approver (e-mail hash):"} {
		if !strings.Contains(text, want) {
			t.Errorf("the sealed record lacks %q:\n%s", want, text)
		}
	}
	if st.str("completedAt") == "" || st.JSON["totalSteps"] != 2.0 || st.JSON["totalApprovalStages"] != 2.0 {
		t.Fatalf("status %s", st.Raw)
	}
	ex := wfJWT(t, "GET", wf.ID, "/export", "Esign.Initiator", nil)
	if data, _ := ex.JSON["data"].(map[string]any); ex.Status != 200 || data["annualSpend"] != 50.0 {
		t.Fatalf("export json %d %s", ex.Status, ex.Raw)
	}
	c := wfJWT(t, "GET", wf.ID, "/export?format=csv", "Esign.Initiator", nil)
	rows, err := csv.NewReader(strings.NewReader(string(c.Raw))).ReadAll()
	if c.Status != 200 || err != nil || len(rows) != 3 {
		t.Fatalf("csv %d %v %q", c.Status, err, c.Raw)
	}
	if got := strings.Join(rows[1], "|"); got != `company|companyName|Company name|'=HYPERLINK("x")` {
		t.Fatalf("csv row %q", got)
	}
	if got := strings.Join(rows[2], "|"); got != "money|annualSpend|Annual spend|50" {
		t.Fatalf("csv row %q", got)
	}
	// Another tenant does not see it.
	other := call(t, "GET", svc.url("workflow/"+wf.ID+"/status"), nil, bearer(svc.jwt(t, tenantB, "Esign.Initiator")))
	wantProblem(t, other, 404, "workflow_not_found", "")
}

// TestWorkflowValidationFailedThenFix: failing error rule without governance goes to
// validation-failed (200, outcome failed, the results); fix-validation returns to the failing
// field's step; a PATCH there and advance pass.
func TestWorkflowValidationFailedThenFix(t *testing.T) {
	t.Parallel()
	wf := createWorkflow(t, tenantA, wfBody(wfPackage(t, false)))
	r := fill(t, wf, "Acme", 500)
	wantWF(t, r, 200, "validation-failed")
	if res, _ := r.JSON["validationResults"].([]any); r.str("validationOutcome") != "failed" || len(res) == 0 {
		t.Fatalf("advance %s", r.Raw)
	}
	wantProblem(t, wfCall(t, "PATCH", wf.ID, "/step/1", wf.Token, map[string]any{"data": map[string]any{"annualSpend": 5}}), 409, "invalid_state", "")
	r = wfCall(t, "POST", wf.ID, "/fix-validation", wf.Token, nil)
	wantWF(t, r, 200, "in-progress")
	if r.JSON["currentStepIndex"] != 1.0 {
		t.Fatalf("fix-validation %s", r.Raw)
	}
	wantProblem(t, wfCall(t, "PATCH", wf.ID, "/step/1", wf.Token, map[string]any{"data": map[string]any{"annualSpend": "x"}}), 400, "record_invalid", "data.annualSpend")
	wantProblem(t, wfCall(t, "PATCH", wf.ID, "/step/1", wf.Token, map[string]any{"data": map[string]any{"companyName": "x"}}), 400, "record_invalid", "data.companyName")
	wantProblem(t, wfCall(t, "PATCH", wf.ID, "/step/7", wf.Token, map[string]any{"data": map[string]any{}}), 400, "invalid_step", "stepIndex")
	wantWF(t, wfCall(t, "PATCH", wf.ID, "/step/1", wf.Token, map[string]any{"data": map[string]any{"annualSpend": 5}}), 200, "")
	wantWF(t, wfCall(t, "POST", wf.ID, "/advance", wf.Token, nil), 200, "pending-approval")
}

// TestWorkflowGovernanceException: with governance, failed error rules go to pending-approval
// with outcome failed; the reviewer's plain approve is 409 rules_failed, an exception without a
// justification 400; with one it passes the stage; the spent token is refused; the participant
// token cannot decide and the reviewer's cannot PATCH.
func TestWorkflowGovernanceException(t *testing.T) {
	t.Parallel()
	wf := createWorkflow(t, tenantA, wfBody(wfPackage(t, true)))
	r := fill(t, wf, "Acme", 500)
	wantWF(t, r, 200, "pending-approval")
	if r.str("validationOutcome") != "failed" {
		t.Fatalf("advance %s", r.Raw)
	}
	rev := reviewerLink(t, wf.ID)
	wantProblem(t, wfCall(t, "POST", wf.ID, "/governance-decision", wf.Token, map[string]any{"decision": "approve"}), 403, "reviewer_token_required", "")
	wantProblem(t, wfCall(t, "PATCH", wf.ID, "/step/0", rev, map[string]any{"data": map[string]any{}}), 403, "participant_token_required", "")
	wantProblem(t, wfCall(t, "POST", wf.ID, "/governance-decision", rev, map[string]any{"decision": "approve"}), 409, "rules_failed", "")
	wantProblem(t, wfCall(t, "POST", wf.ID, "/governance-decision", rev, map[string]any{"decision": "approve-with-exception"}), 400, "invalid_request", "justification")
	wantProblem(t, wfCall(t, "POST", wf.ID, "/governance-decision", rev, map[string]any{"decision": "maybe"}), 400, "invalid_request", "decision")
	r = wfCall(t, "POST", wf.ID, "/governance-decision", rev, map[string]any{"decision": "approve-with-exception",
		"justification": "Strategic supplier; CFO agreed."})
	wantWF(t, r, 200, "pending-approval")
	if r.JSON["currentApprovalStage"] != 2.0 || r.Header.Get("X-Portal-Token") != "" { // the turn is spent
		t.Fatalf("exception %s", r.Raw)
	}
	wantProblem(t, wfCall(t, "POST", wf.ID, "/governance-decision", rev, map[string]any{"decision": "reject"}), 403, "reviewer_token_spent", "")
	wantProblem(t, wfCall(t, "GET", wf.ID, "", rev, nil), 403, "reviewer_token_spent", "")
	wantProblem(t, wfCall(t, "GET", wf.ID, "/status", rev, nil), 403, "reviewer_token_spent", "")
	legal := reviewerLink(t, wf.ID)
	if p := wfCall(t, "GET", wf.ID, "", legal, nil); p.Status != 200 || len(p.JSON["validationResults"].([]any)) == 0 {
		t.Fatalf("the reviewer's payload: %d %s", p.Status, p.Raw)
	}
	wantWF(t, wfCall(t, "POST", wf.ID, "/reject", legal, map[string]any{"comment": "no"}), 200, "rejected")
}

// TestWorkflowExceptionSealed: both stages pass the failed rule by approve-with-exception; the
// sealed record holds the values, the failed rule, every decision and each justification
// verbatim.
func TestWorkflowExceptionSealed(t *testing.T) {
	t.Parallel()
	wf := createWorkflow(t, tenantA, wfBody(wfPackage(t, true)))
	wantWF(t, fill(t, wf, "Ωmega Supplies", 500), 200, "pending-approval")
	finance := reviewerLink(t, wf.ID)
	why := "Strategic supplier — «единственный»; CFO agreed on 2026-11-20."
	wantWF(t, wfCall(t, "POST", wf.ID, "/governance-decision", finance, map[string]any{"decision": "approve-with-exception", "justification": why}), 200, "pending-approval")
	legal := reviewerLink(t, wf.ID)
	wantWF(t, wfCall(t, "POST", wf.ID, "/governance-decision", legal, map[string]any{"decision": "approve-with-exception", "justification": "Legal agrees."}), 200, "sealing")
	text := sealedText(t, sealed(t, wf.ID))
	for _, want := range []string{"Ωmega Supplies", "500", "Spend above 100 needs an exception", "approve-with-exception at stage 1 (Finance)",
		"approve-with-exception at stage 2 (Legal)", why, "Legal agrees."} {
		if !strings.Contains(text, want) {
			t.Errorf("the sealed record lacks %q:\n%s", want, text)
		}
	}
}

// TestWorkflowRequestChangesEscalateCancel: escalate passes Finance's first approver (its token
// dies, the second's works); request-changes returns the participant to the item's step with the
// change requests in the payload; a second round restarts at stage 1; cancel ends it (the
// callback posts state cancelled), and an ended workflow refuses cancel and escalate.
func TestWorkflowRequestChangesEscalateCancel(t *testing.T) {
	t.Parallel()
	body := wfBody(wfPackage(t, false))
	body["callbackUrl"] = wfCallbackURL()
	wf := createWorkflow(t, tenantA, body)
	wantWF(t, fill(t, wf, "Acme", 50), 200, "pending-approval")
	first := reviewerLink(t, wf.ID)
	wantWF(t, wfJWT(t, "POST", wf.ID, "/escalate", "Esign.Initiator", nil), 200, "pending-approval")
	second, rev := notifiedLink(t, wf.ID, workflow.NotifyApproval)
	if second.Reviewer != workflow.ReviewerID(1, 1, 1) {
		t.Fatalf("escalated to %q", second.Reviewer)
	}
	wantProblem(t, wfJWT(t, "POST", wf.ID, "/escalate", "Esign.Initiator", nil), 409, "no_further_approver", "")
	changes := map[string]any{"changes": []any{map[string]any{"message": "Spend looks low", "fieldKey": "annualSpend", "severity": "warning"}}}
	wantProblem(t, wfCall(t, "POST", wf.ID, "/request-changes", first, changes), 403, "reviewer_token_spent", "")
	bad := map[string]any{"changes": []any{map[string]any{"message": "", "severity": "loud"}}}
	r := wfCall(t, "POST", wf.ID, "/request-changes", rev, bad)
	if r.Status != 400 || len(r.fields()) != 2 || r.fields()[0] != "changes[0].message" || r.fields()[1] != "changes[0].severity" {
		t.Fatalf("bad changes: %d %s", r.Status, r.Raw)
	}
	wantWF(t, wfCall(t, "POST", wf.ID, "/request-changes", rev, changes), 200, "changes-requested")
	notified(t, wf.ID, workflow.NotifyChanges)
	p := wfCall(t, "GET", wf.ID, "", wf.Token, nil)
	if cr, _ := p.JSON["changeRequests"].([]any); len(cr) != 1 || p.JSON["currentStepIndex"] != 1.0 {
		t.Fatalf("payload after request-changes %s", p.Raw)
	}
	wantWF(t, wfCall(t, "PATCH", wf.ID, "/step/1", wf.Token, map[string]any{"data": map[string]any{"annualSpend": 80}}), 200, "")
	wantWF(t, wfCall(t, "POST", wf.ID, "/advance", wf.Token, nil), 200, "pending-approval")
	if m := notified(t, wf.ID, workflow.NotifyApproval); m.Reviewer != workflow.ReviewerID(2, 1, 0) {
		t.Fatalf("second round %+v", m)
	}
	wantProblem(t, wfCall(t, "POST", wf.ID, "/reject", rev, nil), 403, "reviewer_token_spent", "")
	wantWF(t, wfJWT(t, "POST", wf.ID, "/cancel", "Esign.Initiator", nil), 200, "cancelled")
	calledBack(t, wf.ID, wf.Reply.str("correlationId"), "cancelled")
	wantProblem(t, wfJWT(t, "POST", wf.ID, "/cancel", "Esign.Initiator", nil), 409, "invalid_state", "")
	wantProblem(t, wfJWT(t, "POST", wf.ID, "/seal", "Service.Admin", nil), 409, "invalid_state", "")
}

// TestWorkflowCreate: an idempotent repeat of a correlationId (200, idempotent, the same
// workflow; another tenant's is its own); autoValidateOnCreate with initialData; the refusals
// naming their field; the token checks.
func TestWorkflowCreate(t *testing.T) {
	t.Parallel()
	pkg := wfPackage(t, false)
	body := wfBody(pkg)
	wf := createWorkflow(t, tenantA, body)
	again := createWorkflow(t, tenantA, body)
	if again.Reply.Status != 200 || again.ID != wf.ID || again.Reply.JSON["idempotent"] != true {
		t.Fatalf("repeat: %d %s", again.Reply.Status, again.Reply.Raw)
	}
	if b := createWorkflow(t, tenantB, body); b.Reply.Status != 201 || b.ID == wf.ID {
		t.Fatalf("other tenant: %d %s", b.Reply.Status, b.Reply.Raw)
	}

	files := examplePackage(t)
	files["schema.yaml"] = []byte("autoValidateOnCreate: true\n" + wfSchema)
	auto := wfBody(uploadFolderPackage(t, files))
	auto["initialData"] = map[string]any{"companyName": "Acme", "annualSpend": 20}
	a := createWorkflow(t, tenantA, auto)
	wantWF(t, a.Reply, 201, "pending-approval")

	init := initiatorCall(t)
	for _, c := range []struct {
		name  string
		edit  func(map[string]any)
		code  string
		field string
	}{
		{"no template", func(b map[string]any) { delete(b, "templatePath") }, "invalid_request", "templatePath"},
		// a correlationId is optional (TestWorkflowCreateBody); one given is at most 200
		// characters without surrounding spaces
		{"padded correlationId", func(b map[string]any) { b["correlationId"] = " wf-1 " }, "invalid_request", "correlationId"},
		{"http callback", func(b map[string]any) { b["callbackUrl"] = "http://example.com/cb" }, "invalid_request", "callbackUrl"},
		{"private callback", func(b map[string]any) { b["callbackUrl"] = "https://10.0.0.1/cb" }, "invalid_request", "callbackUrl"},
		{"bad recipient", func(b map[string]any) {
			b["templateSettings"] = map[string]any{"workflow": map[string]any{"recipients": []any{map[string]any{"email": "nope"}}}}
		}, "invalid_request", "templateSettings.workflow.recipients[0].email"},
		{"unknown initial field", func(b map[string]any) { b["initialData"] = map[string]any{"x": 1} }, "record_invalid", "initialData.x"},
		{"no schema", func(b map[string]any) { b["templatePath"] = uploadFolderPackage(t, examplePackage(t)) }, "schema_invalid", "templatePath"},
	} {
		b := wfBody(pkg)
		c.edit(b)
		r := init(b)
		if r.Status != 400 || r.code() != c.code || len(r.fields()) != 1 || r.fields()[0] != c.field {
			t.Errorf("%s: %d %s, want 400 %s at %s", c.name, r.Status, r.Raw, c.code, c.field)
		}
	}

	wantProblem(t, wfCall(t, "GET", wf.ID, "", "", nil), 401, "token_missing", "")
	wantProblem(t, wfCall(t, "GET", a.ID, "", wf.Token, nil), 401, "token_invalid", "")
	wantProblem(t, wfCall(t, "GET", wf.ID, "", "x"+wf.Token, nil), 401, "token_invalid", "")
	st := wfCall(t, "GET", wf.ID, "/status", wf.Token, nil)
	wantWF(t, st, 200, "in-progress")
	// A participant token issued more than 4 hours ago is expired; the fresh one a valid call
	// answers works.
	ring, err := tokens.ParseKeyRing(svc.settings["TOKEN_KEYS"])
	if err != nil {
		t.Fatal(err)
	}
	old, _, err := tokens.NewCodec(ring, tokens.WithClock(func() time.Time { return time.Now().Add(-5 * time.Hour) })).
		IssueWorkflowPortal(tokens.WorkflowPortal{WorkflowID: wf.ID, Participant: workflow.ParticipantID, Role: tokens.RoleParticipant})
	if err != nil {
		t.Fatal(err)
	}
	remember("token", old)
	wantProblem(t, wfCall(t, "GET", wf.ID, "", old, nil), 401, "token_expired", "")
	wantWF(t, wfCall(t, "GET", wf.ID, "", st.Header.Get("X-Portal-Token"), nil), 200, "in-progress")
}

// otpWorkflow creates a requireOtp workflow whose one recipient is a fresh address (prefix
// first) and returns the address.
func otpWorkflow(t *testing.T, prefix string) (string, wfCreated) {
	t.Helper()
	addr := prefix + uuid.NewString()[:8] + "@example.test"
	remember("email", addr)
	body := wfBody(wfPackage(t, false))
	body["templateSettings"] = map[string]any{"workflow": map[string]any{"requireOtp": true,
		"recipients": []any{map[string]any{"email": addr}}}}
	return addr, createWorkflow(t, tenantA, body)
}

func initiatorCall(t *testing.T) func(map[string]any) reply {
	return func(b map[string]any) reply {
		return call(t, "POST", svc.url("workflow"), b, bearer(svc.jwt(t, tenantA, "Esign.Initiator")))
	}
}

// TestWorkflowOTPAndResend: with requireOtp the participant's routes answer 403 otp_required
// until the code e-mailed to the first recipient is verified (one send a minute, a wrong code
// counted); resend-invite within 60 s of the invitation is 429 with Retry-After.
func TestWorkflowOTPAndResend(t *testing.T) {
	t.Parallel()
	addr, wf := otpWorkflow(t, "wf-otp-")
	wantProblem(t, wfCall(t, "GET", wf.ID, "", wf.Token, nil), 403, "otp_required", "")
	wantProblem(t, wfCall(t, "PATCH", wf.ID, "/step/0", wf.Token, map[string]any{"data": map[string]any{"companyName": "A"}}), 403, "otp_required", "")
	wantWF(t, wfCall(t, "POST", wf.ID, "/otp/send", wf.Token, nil), 200, "")
	r := wfCall(t, "POST", wf.ID, "/otp/send", wf.Token, nil)
	if r.Status != 429 || r.code() != "otp_rate_limited" || r.Header.Get("Retry-After") == "" {
		t.Fatalf("second send: %d %s", r.Status, r.Raw)
	}
	code := otpCode(t, notify.Email, addr, 1)
	wantProblem(t, wfCall(t, "POST", wf.ID, "/otp/verify", wf.Token, map[string]any{"otp": otpWrong(code)}), 400, "otp_invalid", "")
	wantProblem(t, wfCall(t, "POST", wf.ID, "/otp/verify", wf.Token, map[string]any{"otp": "12"}), 400, "invalid_request", "otp")
	wantWF(t, wfCall(t, "POST", wf.ID, "/otp/verify", wf.Token, map[string]any{"otp": code}), 200, "")
	wantWF(t, wfCall(t, "GET", wf.ID, "", wf.Token, nil), 200, "in-progress")
	wantProblem(t, wfCall(t, "POST", wf.ID, "/otp/verify", wf.Token, map[string]any{"otp": code}), 400, "otp_already_verified", "")

	r = wfCall(t, "POST", wf.ID, "/resend-invite", wf.Token, nil)
	if r.Status != 429 || r.code() != "invite_rate_limited" || r.Header.Get("Retry-After") == "" {
		t.Fatalf("resend within 60 s: %d %s", r.Status, r.Raw)
	}
	// A workflow without requireOtp has no code to send.
	plain := createWorkflow(t, tenantA, wfBody(wfPackage(t, false)))
	wantProblem(t, wfCall(t, "POST", plain.ID, "/otp/send", plain.Token, nil), 400, "otp_not_required", "")
}

// TestWorkflowParticipantOTPLock: through the routes, with the link and the code taken from the
// e-mails in the outbox, the participant's code is locked by the fifth wrong try (400 otp_invalid
// with attemptsLeft before, 400 otp_locked at and after it, even for the right code), and the
// gate stays shut.
func TestWorkflowParticipantOTPLock(t *testing.T) {
	t.Parallel()
	addr, wf := otpWorkflow(t, "wf-lock-")
	_, link := notifiedLink(t, wf.ID, workflow.NotifyInvitation)
	wantWF(t, wfCall(t, "POST", wf.ID, "/otp/send", link, nil), 200, "")
	code := otpCode(t, notify.Email, addr, 1)
	for try := 1; try < otp.MaxAttempts; try++ {
		r := wfCall(t, "POST", wf.ID, "/otp/verify", link, map[string]any{"otp": otpWrong(code)})
		wantProblem(t, r, 400, "otp_invalid", "")
		if left, _ := r.JSON["attemptsLeft"].(float64); int(left) != otp.MaxAttempts-try {
			t.Fatalf("try %d: attemptsLeft %v, want %d", try, r.JSON["attemptsLeft"], otp.MaxAttempts-try)
		}
	}
	wantProblem(t, wfCall(t, "POST", wf.ID, "/otp/verify", link, map[string]any{"otp": otpWrong(code)}), 400, "otp_locked", "")
	wantProblem(t, wfCall(t, "POST", wf.ID, "/otp/verify", link, map[string]any{"otp": code}), 400, "otp_locked", "")
	wantProblem(t, wfCall(t, "GET", wf.ID, "", link, nil), 403, "otp_required", "")
}

// wfStore opens the service's workflow tables with the run's PII key (to move a workflow's
// clock as time passing would).
func wfStore(t testing.TB) *workflowstore.Store {
	t.Helper()
	cipher, err := pii.ParseCipher(svc.settings["PII_ENC_KEYS"])
	if err != nil {
		t.Fatal(err)
	}
	acct, err := azconn.New(azconn.Config{ConnectionString: svc.azurite.ConnectionString()})
	if err != nil {
		t.Fatal(err)
	}
	st, err := workflowstore.New(acct, workflowstore.TableWorkflows, workflowstore.TableIndex, cipher)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestWorkflowParticipantTokenDies: the participant's resend-invite (a minute after the
// invitation, moved back in the store) e-mails a new link and the old token is refused 401
// link_replaced; once the initiator cancels, the new one is refused 410 workflow_ended.
func TestWorkflowParticipantTokenDies(t *testing.T) {
	t.Parallel()
	wf := createWorkflow(t, tenantA, wfBody(wfPackage(t, false)))
	_, old := notifiedLink(t, wf.ID, workflow.NotifyInvitation)
	wantWF(t, wfCall(t, "GET", wf.ID, "", old, nil), 200, "in-progress")
	if _, _, err := wfStore(t).Update(context.Background(), wf.ID, func(x *workflow.Workflow) (kernel.Change, error) {
		x.InvitedAt = x.InvitedAt.Add(-workflow.ResendInterval)
		var ch kernel.Change
		ch.Touch(0) // a change with no event is written only when it names a child
		return ch, nil
	}); err != nil {
		t.Fatal(err)
	}
	r := call(t, "POST", svc.url("workflow/"+wf.ID+"/resend-invite?token="+url.QueryEscape(old)), nil, nil)
	if r.Status != 200 || r.Header.Get("X-Portal-Token") != "" {
		t.Fatalf("resend-invite: %d (fresh token %q) %s", r.Status, r.Header.Get("X-Portal-Token"), r.Raw)
	}
	_, fresh := notifiedLink(t, wf.ID, workflow.NotifyInvitation)
	for _, tok := range []string{old, wf.Token} {
		wantProblem(t, wfCall(t, "GET", wf.ID, "", tok, nil), 401, "link_replaced", "")
		wantProblem(t, wfCall(t, "PATCH", wf.ID, "/step/0", tok, map[string]any{"data": map[string]any{"companyName": "A"}}), 401, "link_replaced", "")
	}
	wantWF(t, wfCall(t, "GET", wf.ID, "", fresh, nil), 200, "in-progress")
	wantWF(t, wfJWT(t, "POST", wf.ID, "/cancel", "Esign.Initiator", nil), 200, "cancelled")
	wantProblem(t, wfCall(t, "GET", wf.ID, "", fresh, nil), 410, "workflow_ended", "")
	wantProblem(t, wfCall(t, "POST", wf.ID, "/advance", fresh, nil), 410, "workflow_ended", "")
	wantProblem(t, wfCall(t, "GET", wf.ID, "", old, nil), 410, "workflow_ended", "")
}
