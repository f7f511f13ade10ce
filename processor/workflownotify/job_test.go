package workflownotify

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/apptest"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/notify/outbox"
	"github.com/esign-svc/esign/shared/template"
	"github.com/esign-svc/esign/shared/tokens"
	"github.com/esign-svc/esign/shared/workflow"
	"github.com/esign-svc/esign/shared/workflow/workflowstore"
)

func TestMain(m *testing.M) { azuritetest.Main(m) }

const schemaYAML = `title: Leave request
steps:
  - id: who
    fields:
      - { key: employeeName, type: string, required: true }
approval:
  stages:
    - { name: Finance, approvers: [first@example.com, second@example.com] }
`

// failing fails the first n sends as unavailable, then passes them on.
type failing struct {
	n    atomic.Int32
	next notify.Sender
}

func (f *failing) Send(ctx context.Context, m notify.Message) error {
	if f.n.Add(-1) >= 0 {
		return apperr.New(apperr.KindUnavailable, "down", "provider down")
	}
	return f.next.Send(ctx, m)
}

type env struct {
	store  *workflowstore.Store
	box    *outbox.Outbox
	send   *failing
	codec  *tokens.Codec
	job    *Job
	schema *workflow.Schema
	pkg    string
	tenant string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	x := apptest.New(t)
	s, err := workflow.ParseSchema("schema", []byte(schemaYAML))
	if err != nil {
		t.Fatal(err)
	}
	send := &failing{next: x.Outbox()}
	job, err := New(Deps{Workflows: x.Workflows(), Packages: &template.Loader{Blobs: x.Blobs}, Blobs: x.Blobs, Tokens: x.Tokens, Email: send, PortalURL: "https://portal.example/"})
	if err != nil {
		t.Fatal(err)
	}
	return &env{store: x.Workflows(), box: x.Outbox(), send: send, codec: x.Tokens, job: job, schema: s,
		pkg: x.Package(map[string][]byte{template.FileSchema: []byte(schemaYAML)}), tenant: azuritetest.Name("t-")}
}

// create makes an in-progress workflow with two recipients; advanced, it waits for approval.
func (e *env) create(t *testing.T, advance bool) *workflow.Workflow {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC()
	w := &workflow.Workflow{ID: uuid.NewString(), Tenant: e.tenant, CorrelationID: "corr-" + uuid.NewString()[:8], TemplatePath: e.pkg, CreatedBy: "oid"}
	w.Setup.Recipients = []workflow.Recipient{{Email: "ana@example.com", DisplayName: "Ana\nLima"}, {Email: "bo@example.com"}}
	w.Setup.OrganizationName = "Acme"
	ch, err := workflow.Create(w, e.schema, map[string]any{"employeeName": "Zoë"}, now)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.store.Create(ctx, w, ch, now); err != nil {
		t.Fatal(err)
	}
	if advance {
		if w, _, err = e.store.Update(ctx, w.ID, func(w *workflow.Workflow) (kernel.Change, error) { return w.Advance(e.schema, now) }); err != nil {
			t.Fatal(err)
		}
		if w.State != workflow.StatePendingApproval {
			t.Fatalf("state %s", w.State)
		}
	}
	return w
}

func message(t *testing.T, id string, m workflow.NotifyMessage) funcproto.QueueMessage {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return funcproto.QueueMessage{ID: id, Body: b}
}

func (e *env) sent(t *testing.T, correlationID string) []outbox.Row {
	t.Helper()
	rows, err := e.box.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []outbox.Row
	for _, r := range rows {
		if r.CorrelationID == correlationID {
			out = append(out, r)
		}
	}
	return out
}

// events are the workflow's audit events of kind, with their data as JSON.
func (e *env) events(t *testing.T, id, kind string) []string {
	t.Helper()
	evs, err := e.store.Events(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ev := range evs {
		if ev.Kind == kind {
			b, _ := json.Marshal(ev.Data)
			out = append(out, string(b))
		}
	}
	return out
}

// token is the pt of a link in an e-mail's text, verified, with the link's path.
func (e *env) token(t *testing.T, text string) (string, tokens.WorkflowPortal) {
	t.Helper()
	i := strings.Index(text, "https://portal.example/")
	if i < 0 {
		t.Fatalf("no link in %q", text)
	}
	raw := strings.Fields(text[i:])[0]
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := e.codec.VerifyWorkflowPortal(u.Query().Get("pt"))
	if err != nil {
		t.Fatal(err)
	}
	return u.Path, tok
}

func TestInvitationToEveryRecipientOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	w := e.create(t, false)
	qm := message(t, "msg-1", workflow.NotifyMessage{Kind: workflow.NotifyInvitation, WorkflowID: w.ID, TenantID: w.Tenant})
	e.send.n.Store(1) // the first attempt fails: the claim is given back
	if err := e.job.Handle(ctx, qm); apperr.KindOf(err) != apperr.KindUnavailable {
		t.Fatalf("first attempt: %v", err)
	}
	if err := e.job.Handle(ctx, qm); err != nil {
		t.Fatal(err)
	}
	if err := e.job.Handle(ctx, qm); err != nil { // redelivered
		t.Fatal(err)
	}
	rows := e.sent(t, w.CorrelationID)
	if len(rows) != 2 {
		t.Fatalf("%d e-mails, want 2", len(rows))
	}
	to := map[string]bool{}
	for _, r := range rows {
		to[r.Recipient] = true
		path, tok := e.token(t, r.Text)
		if path != "/workflow/"+w.ID || tok.WorkflowID != w.ID || tok.Participant != workflow.ParticipantID || tok.Role != tokens.RoleParticipant {
			t.Fatalf("link %s token %+v", path, tok)
		}
		if r.Kind != notify.Kind(workflow.NotifyInvitation) || !strings.Contains(r.Subject, "Acme") {
			t.Fatalf("kind %s subject %q", r.Kind, r.Subject)
		}
	}
	if !to["ana@example.com"] || !to["bo@example.com"] || !strings.Contains(rows[0].Text+rows[1].Text, "Hello Ana Lima,") {
		t.Fatalf("recipients %v", to)
	}
	evs := e.events(t, w.ID, EvNoticeSent)
	if len(evs) != 1 || !strings.Contains(evs[0], `"kind":"workflow_invitation"`) || !strings.Contains(evs[0], `"count":2`) || strings.Contains(evs[0], "@") {
		t.Fatalf("events %v", evs)
	}
	// Another message (a resend) is another notice.
	if err := e.job.Handle(ctx, message(t, "msg-2", workflow.NotifyMessage{Kind: workflow.NotifyInvitation, WorkflowID: w.ID, TenantID: w.Tenant, Resend: true})); err != nil {
		t.Fatal(err)
	}
	if n := len(e.sent(t, w.CorrelationID)); n != 4 {
		t.Fatalf("%d e-mails after the resend, want 4", n)
	}
}

func TestApprovalToTheCurrentApprover(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	w := e.create(t, true)
	turn := w.CurrentReviewer()
	if err := e.job.Handle(ctx, message(t, "a-1", workflow.NotifyMessage{Kind: workflow.NotifyApproval, WorkflowID: w.ID, TenantID: w.Tenant, Reviewer: turn})); err != nil {
		t.Fatal(err)
	}
	rows := e.sent(t, w.CorrelationID)
	if len(rows) != 1 || rows[0].Recipient != "first@example.com" {
		t.Fatalf("e-mails %+v", rows)
	}
	path, tok := e.token(t, rows[0].Text)
	if path != "/workflow/"+w.ID+"/review" || tok.Participant != turn || tok.Role != tokens.RoleReviewer {
		t.Fatalf("link %s token %+v", path, tok)
	}
	// Escalated: the old turn's message sends nothing; the new turn's goes to the second approver.
	now := time.Now().UTC()
	w, _, err := e.store.Update(ctx, w.ID, func(w *workflow.Workflow) (kernel.Change, error) { return w.Escalate(e.schema, now) })
	if err != nil {
		t.Fatal(err)
	}
	if err := e.job.Handle(ctx, message(t, "a-2", workflow.NotifyMessage{Kind: workflow.NotifyApproval, WorkflowID: w.ID, TenantID: w.Tenant, Reviewer: turn})); err != nil {
		t.Fatal(err)
	}
	if n := len(e.sent(t, w.CorrelationID)); n != 1 {
		t.Fatalf("a spent turn's message sent: %d e-mails", n)
	}
	if err := e.job.Handle(ctx, message(t, "a-3", workflow.NotifyMessage{Kind: workflow.NotifyApproval, WorkflowID: w.ID, TenantID: w.Tenant, Reviewer: w.CurrentReviewer()})); err != nil {
		t.Fatal(err)
	}
	rows = e.sent(t, w.CorrelationID)
	if len(rows) != 2 || rows[1].Recipient != "second@example.com" {
		t.Fatalf("e-mails %+v", rows)
	}
	// An invitation of a workflow that ended is dropped.
	if _, _, err := e.store.Update(ctx, w.ID, func(w *workflow.Workflow) (kernel.Change, error) { return w.Cancel(now) }); err != nil {
		t.Fatal(err)
	}
	if err := e.job.Handle(ctx, message(t, "i-1", workflow.NotifyMessage{Kind: workflow.NotifyInvitation, WorkflowID: w.ID, TenantID: w.Tenant})); err != nil {
		t.Fatal(err)
	}
	if n := len(e.sent(t, w.CorrelationID)); n != 2 {
		t.Fatalf("%d e-mails", n)
	}
}

func TestRefusedMessagesAndPoison(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	w := e.create(t, false)
	for name, m := range map[string]workflow.NotifyMessage{
		"tenant": {Kind: workflow.NotifyInvitation, WorkflowID: w.ID, TenantID: "other"},
		"kind":   {Kind: "nope", WorkflowID: w.ID, TenantID: w.Tenant},
		"ids":    {Kind: workflow.NotifyInvitation},
	} {
		if err := e.job.Handle(ctx, message(t, "x", m)); !funcproto.IsPermanent(err) {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if err := e.job.Handle(ctx, message(t, "gone", workflow.NotifyMessage{Kind: workflow.NotifyInvitation, WorkflowID: uuid.NewString(), TenantID: w.Tenant})); err != nil {
		t.Fatalf("gone: %v", err)
	}
	if err := e.job.HandlePoison(ctx, message(t, "p", workflow.NotifyMessage{Kind: workflow.NotifyInvitation, WorkflowID: w.ID, TenantID: w.Tenant})); err != nil {
		t.Fatal(err)
	}
	if evs := e.events(t, w.ID, EvNoticeFailed); len(evs) != 1 || !strings.Contains(evs[0], "workflow_invitation") {
		t.Fatalf("events %v", evs)
	}
	if n := len(e.sent(t, w.CorrelationID)); n != 0 {
		t.Fatalf("%d e-mails", n)
	}
}
