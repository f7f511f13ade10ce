package connector

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/connector/client"
	"github.com/esign-svc/esign/devtools/devkeys"
)

// wfSchema is one step with one field and one approval stage.
const wfSchema = `title: Supplier onboarding
steps:
  - id: company
    title: Company
    fields:
      - { key: companyName, type: string, label: Company name, required: true, maxLength: 200 }
approval:
  stages:
    - { name: Finance, approvers: [finance@example.test] }
`

// putWorkflowPackage stores the offer package with wfSchema as a ZIP and returns its path.
func putWorkflowPackage(t *testing.T) string {
	t.Helper()
	pkg, err := putPackage(context.Background(), "connector/wf-"+uuid.NewString()+".zip", offerFiles(map[string][]byte{"schema.yaml": []byte(wfSchema)}))
	if err != nil {
		t.Fatal(err)
	}
	return pkg
}

// TestWorkflowCommands: `workflow create` invites the participant (the same correlationId
// again answers the existing workflow); the participant's token routes of the client fill and
// advance it; `workflow status` and `workflow export` (json, csv) read it; the client approves it
// and status names the sealed record; the client cancels another.
func TestWorkflowCommands(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	set := connSettings(t, nil)
	pkg := putWorkflowPackage(t)
	corr := "svcconnect-wf-" + uuid.NewString()
	args := []string{"workflow", "create", "--template", pkg, "--correlation-id", corr, "--recipient", "pat-" + uuid.NewString()[:8] + "@example.test:Pat", "--output", "json"}
	var wf client.Workflow
	if err := json.Unmarshal([]byte(ok(t, set, args...)), &wf); err != nil || wf.State != "in-progress" || wf.Idempotent {
		t.Fatalf("create: %+v %v", wf, err)
	}
	var again client.Workflow
	if err := json.Unmarshal([]byte(ok(t, set, args...)), &again); err != nil || !again.Idempotent || again.WorkflowID != wf.WorkflowID {
		t.Fatalf("create again: %+v %v", again, err)
	}
	u, err := url.Parse(wf.PortalURL)
	if err != nil {
		t.Fatal(err)
	}
	cl, _ := newClient(t, set)
	step, err := cl.SaveWorkflowStep(ctx, wf.WorkflowID, u.Query().Get("pt"), 0, map[string]any{"companyName": "=Acme Ltd"})
	if err != nil || step.PortalToken == "" {
		t.Fatalf("save step: %+v %v", step, err)
	}
	adv, err := cl.AdvanceWorkflow(ctx, wf.WorkflowID, step.PortalToken)
	if err != nil || adv.State != "pending-approval" {
		t.Fatalf("advance: %+v %v", adv, err)
	}
	if out := ok(t, set, "workflow", "status", wf.WorkflowID); !strings.Contains(out, "state:      pending-approval") || !strings.Contains(out, "stage 1 of 1") {
		t.Fatalf("status:\n%s", out)
	}
	var exp client.WorkflowExport
	if err := json.Unmarshal([]byte(ok(t, set, "workflow", "export", wf.WorkflowID)), &exp); err != nil || exp.Data["companyName"] != "=Acme Ltd" {
		t.Fatalf("export json: %+v %v", exp, err)
	}
	csv := ok(t, set, "workflow", "export", wf.WorkflowID, "--format", "csv")
	if !strings.HasPrefix(csv, "step,key,label,value") || !strings.Contains(csv, "'=Acme Ltd") {
		t.Fatalf("export csv:\n%s", csv)
	}
	// the connector's client created the workflow: it may not decide it (DESIGN 14)
	var ce *client.Error
	if _, err := cl.ApproveWorkflow(ctx, wf.WorkflowID, "mine"); !errors.As(err, &ce) || ce.Status != 403 || ce.Code() != "self_approval" {
		t.Fatalf("the creator's approve: %v", err)
	}
	// the stage's named approver, another person, decides it; status then names the sealed record
	named := client.New(baseURL(), svc.Host.HostKey(), staticToken(t, "finance@example.test"))
	if d, err := named.ApproveWorkflow(ctx, wf.WorkflowID, "fine"); err != nil || d.State != "sealing" {
		t.Fatalf("approve: %+v %v", d, err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for out := ""; !strings.Contains(out, "state:      complete"); out = ok(t, set, "workflow", "status", wf.WorkflowID) {
		if time.Now().After(deadline) {
			t.Fatalf("not sealed:\n%s", out)
		}
		time.Sleep(300 * time.Millisecond)
	}
	if out := ok(t, set, "workflow", "status", wf.WorkflowID); !strings.Contains(out, "sealed:     signed/") || !strings.Contains(out, "/workflows/"+wf.WorkflowID+".pdf (sha256:") {
		t.Fatalf("status once complete:\n%s", out)
	}
	other, err := cl.CreateWorkflow(ctx, client.CreateWorkflowRequest{TemplatePath: pkg, CorrelationID: corr + "-2"})
	if err != nil {
		t.Fatal(err)
	}
	if d, err := cl.CancelWorkflow(ctx, other.WorkflowID); err != nil || d.State != "cancelled" {
		t.Fatalf("cancel: %+v %v", d, err)
	}
	if r := svcconnect(t, set, "", false, "workflow", "export", wf.WorkflowID, "--format", "xml"); r.code != 2 || !strings.Contains(r.stderr, "--format must be json or csv") {
		t.Fatalf("bad format: %d %s", r.code, r.stderr)
	}
}

// TestWorkflowCreateWithoutCorrelationID: `workflow create` without --correlation-id makes a
// workflow under the UUID the service generates (each run a new one), and --document-id and
// --doc-type go as the body's options (an option the service refuses is its 400, named).
func TestWorkflowCreateWithoutCorrelationID(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	set := connSettings(t, nil)
	pkg := putWorkflowPackage(t)
	args := []string{"workflow", "create", "--template", pkg, "--document-id", "PO-77", "--doc-type", "purchase-order", "--output", "json"}
	var first, second client.Workflow
	if err := json.Unmarshal([]byte(ok(t, set, args...)), &first); err != nil || first.State != "in-progress" {
		t.Fatalf("create: %+v %v", first, err)
	}
	if _, err := uuid.Parse(first.CorrelationID); err != nil {
		t.Fatalf("generated correlationId %q", first.CorrelationID)
	}
	if err := json.Unmarshal([]byte(ok(t, set, args...)), &second); err != nil || second.Idempotent ||
		second.WorkflowID == first.WorkflowID || second.CorrelationID == first.CorrelationID {
		t.Fatalf("second create: %+v %v", second, err)
	}
	r := svcconnect(t, set, "", false, "workflow", "create", "--template", pkg, "--doc-type", "two\nlines")
	if r.code == 0 {
		t.Fatalf("a docType the service refuses: exit 0\n%s", r.stdout)
	}
	cl, _ := newClient(t, set)
	_, err := cl.CreateWorkflow(ctx, client.CreateWorkflowRequest{TemplatePath: pkg, Options: &client.WorkflowOptions{DocType: "two\nlines"}})
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Status != 400 || ce.Code() != "invalid_request" {
		t.Fatalf("a docType the service refuses: %v", err)
	}
}

// TestDeliverCommand: `svcconnect deliver` uploads a local PDF and delivers it; the delivery is
// listed by its correlationId, its recipient's page reads it with the link's token, and it is
// revoked.
func TestDeliverCommand(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	set := connSettings(t, nil)
	corr := "svcconnect-deliver-" + uuid.NewString()
	var d client.Delivery
	out := ok(t, set, "deliver", "../e2e/testdata/plain-1p.pdf", "--to", "rae-"+uuid.NewString()[:8]+"@example.test:Rae", "--correlation-id", corr, "--output", "json")
	if err := json.Unmarshal([]byte(out), &d); err != nil || d.CorrelationID != corr || len(d.Sessions) != 1 {
		t.Fatalf("deliver: %s %v", out, err)
	}
	cl, _ := newClient(t, set)
	list, err := cl.ListDeliveries(ctx, corr)
	if err != nil || len(list) != 1 || list[0].DeliveryID != d.Sessions[0].DeliveryID || list[0].DocumentName != "plain-1p.pdf" {
		t.Fatalf("list: %+v %v", list, err)
	}
	u, err := url.Parse(d.Sessions[0].PortalURL)
	if err != nil {
		t.Fatal(err)
	}
	meta, err := cl.DeliveryMetadata(ctx, d.Sessions[0].DeliveryID, u.Query().Get("t"))
	if err != nil || meta.RecipientName != "Rae" || meta.DocumentName != "plain-1p.pdf" {
		t.Fatalf("metadata: %+v %v", meta, err)
	}
	if state, err := cl.RevokeDelivery(ctx, d.Sessions[0].DeliveryID); err != nil || state != "revoked" {
		t.Fatalf("revoke: %q %v", state, err)
	}
	if _, err := cl.DeliveryMetadata(ctx, d.Sessions[0].DeliveryID, u.Query().Get("t")); client.StatusOf(err) != 410 {
		t.Fatalf("metadata after revoke: %v", err)
	}
	if r := svcconnect(t, set, "", false, "deliver", "--to", "x@example.test"); r.code != 2 || !strings.Contains(r.stderr, "give one FILE.pdf or --blob PATH") {
		t.Fatalf("no document: %d %s", r.code, r.stderr)
	}
}

// staticToken is a token source of one person of the dev tenant: a Workflow.Approver whose
// e-mail is addr and whose oid is not the connector client's.
func staticToken(t *testing.T, addr string) client.TokenSource {
	t.Helper()
	tok, err := devkeys.MintFromDir(svc.KeysDir, devkeys.TokenOptions{Tenant: devkeys.DevTenantID, Roles: []string{"Workflow.Approver"},
		Subject: addr, ObjectID: uuid.NewString(), Name: "Finn Finance", Email: addr})
	if err != nil {
		t.Fatal(err)
	}
	return fixedToken(tok)
}

type fixedToken string

func (f fixedToken) Token(context.Context) (string, error) { return string(f), nil }
func (fixedToken) Invalidate(string)                       {}
