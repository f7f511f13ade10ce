// Package workflownotify is the processor's workflow-notify job (DESIGN 10, spec "Workflow"): a
// workflow.NotifyMessage (ids and a kind, never an address or a token) becomes e-mails through
// the processor's e-mail provider:
//
//   - workflow_invitation and workflow_changes: every invited recipient (Setup.Recipients) gets
//     the participant's link {PORTAL_URL}/workflow/{id}?pt=<participant token>, while the
//     workflow is live (not ended, not sealing);
//   - workflow_approval: the current stage's current approver (the schema's routing sequence)
//     gets the reviewer link {PORTAL_URL}/workflow/{id}/review?pt=<reviewer token>, the token
//     naming the message's turn (workflow.ReviewerID). A message whose turn is no longer the
//     current one is acknowledged without sending: its token would be spent already.
//
// Each message is sent once per queue message id: the job claims the row "notice-<message id>"
// in the workflow's partition (aggstore.Once) before sending and marks it with the audit event
// workflow.notice_sent {kind, count} in one transaction; a redelivered message finds it and
// sends nothing. A failed send gives the claim back. The poison handler records
// workflow.notice_failed {kind}. No address, token or link is logged or audited.
package workflownotify

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/esign-svc/esign/processor/internal/jobkit"
	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/tokens"
	"github.com/esign-svc/esign/shared/workflow"
)

// Function names and the queue (processor/functions/<Name>/function.json).
const (
	FunctionName       = "WorkflowNotify"
	PoisonFunctionName = "WorkflowNotifyPoison"
	QueueName          = workflow.QueueNotify
)

// Audit event kinds this job writes (the workflow use cases').
const (
	EvNoticeSent   = workflow.EvNoticeSent
	EvNoticeFailed = workflow.EvNoticeFailed
)

// ClaimLease is how long a claim protects a notice being sent from a second delivery.
const ClaimLease = 2 * time.Minute

// Deps are the workflow-notify job's dependencies. Every field but Now is required (New checks).
type Deps struct {
	// Workflows is the workflow store (*workflowstore.Store), reached only through the use
	// cases (workflow.Workflows).
	Workflows workflow.Repo
	Packages  workflow.Packages    // the template packages (*template.Loader): the approvers
	Blobs     workflow.SchemaBlobs // a schemaPath's blob (*blobstore.Store)
	Tokens    *tokens.Codec
	Email     notify.Sender
	PortalURL string           // PORTAL_URL, the portal's base
	Now       func() time.Time // default time.Now
}

// Job is the workflow-notify job (New builds it).
type Job struct{ Deps }

// New makes the job. It does no I/O. Errors: a missing dependency.
func New(d Deps) (*Job, error) {
	if d.Workflows == nil || d.Packages == nil || d.Blobs == nil || d.Tokens == nil || d.Email == nil || d.PortalURL == "" {
		return nil, errors.New("workflownotify: Workflows, Packages, Blobs, Tokens, Email and PortalURL are required")
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Job{Deps: d}, nil
}

// Functions is the job's function table: the workflow e-mail queue and its poison queue.
func (j *Job) Functions() []jobkit.Function {
	return []jobkit.Function{
		{Name: FunctionName, Handler: funcproto.QueueHandler(j.Handle)},
		{Name: PoisonFunctionName, Handler: funcproto.QueueHandler(j.HandlePoison)},
	}
}

var systemActor = kernel.Actor{Kind: "system", ID: "workflow-notify"}

// workflows is the workflow use-case service the job's reads and notices call.
func (j *Job) workflows() *workflow.Workflows {
	return &workflow.Workflows{Store: j.Workflows, Now: j.Now}
}

// Handle is the WorkflowNotify queue function. Replies: nil once the e-mails went out and were
// audited, or without effect for a workflow that is gone, a notice that no longer applies or a
// message sent before; Permanent for a message without ids, of an unknown kind or of another
// tenant, and for a provider's refusal; a plain error (retried, then poisoned) otherwise.
func (j *Job) Handle(ctx context.Context, qm funcproto.QueueMessage) error {
	m, w, err := j.load(ctx, qm)
	if err != nil || w == nil {
		return err
	}
	msgs, skip, err := j.compose(ctx, m, w)
	if err != nil {
		return err
	}
	if skip != "" {
		funcproto.Logf(ctx, "workflow-notify: %s of %s not sent: %s", m.Kind, w.ID, skip)
		return nil
	}
	key := qm.ID
	if key == "" {
		return funcproto.Permanent(apperr.Invalid(funcproto.CodeInvalidMessage, apperr.Field("id", "the queue message has no id")))
	}
	err = j.workflows().Notice(ctx, w, key, m.Kind, m.Resend, systemActor, ClaimLease, func() (int, error) {
		for i, msg := range msgs {
			if err := j.Email.Send(notify.WithDedupeID(ctx, fmt.Sprintf("workflow-%s-%s-%d", w.ID, key, i)), msg); err != nil {
				if apperr.KindOf(err) == apperr.KindInvalid {
					return 0, funcproto.Permanent(err)
				}
				return 0, err
			}
		}
		return len(msgs), nil
	})
	if errors.Is(err, workflow.ErrNoticeSent) {
		funcproto.Logf(ctx, "workflow-notify: %s of %s sent before; acknowledged", m.Kind, w.ID)
		return nil
	}
	if err != nil {
		return err
	}
	funcproto.Logf(ctx, "workflow-notify: %s of %s to %d recipient(s)", m.Kind, w.ID, len(msgs))
	return nil
}

// HandlePoison is the WorkflowNotifyPoison queue function: the host gave up on the message. It
// records workflow.notice_failed {kind}.
func (j *Job) HandlePoison(ctx context.Context, qm funcproto.QueueMessage) error {
	m, w, err := j.load(ctx, qm)
	if err != nil || w == nil {
		return err
	}
	return j.workflows().NoticeFailed(ctx, w.ID, m.Kind, systemActor)
}

// load decodes the message and reads its workflow: nil when it is gone (acknowledged).
func (j *Job) load(ctx context.Context, qm funcproto.QueueMessage) (workflow.NotifyMessage, *workflow.Workflow, error) {
	var m workflow.NotifyMessage
	if err := qm.Decode(&m); err != nil {
		return m, nil, err
	}
	switch m.Kind {
	case workflow.NotifyInvitation, workflow.NotifyChanges, workflow.NotifyApproval:
	default:
		return m, nil, funcproto.Permanent(apperr.Invalid(funcproto.CodeInvalidMessage, apperr.Field("kind", "must be workflow_invitation, workflow_changes or workflow_approval")))
	}
	w, err := jobkit.Workflow(ctx, j.workflows(), "workflow-notify", m.WorkflowID, m.TenantID)
	return m, w, err
}

// compose builds the message's e-mails, or a reason not to send.
func (j *Job) compose(ctx context.Context, m workflow.NotifyMessage, w *workflow.Workflow) ([]notify.Message, string, error) {
	if m.Kind == workflow.NotifyApproval {
		return j.approval(ctx, m, w)
	}
	if !w.Live() { // ended or being sealed: the participant has nothing left to do
		return nil, "the workflow is " + string(w.State), nil
	}
	if len(w.Setup.Recipients) == 0 {
		return nil, "the workflow has no recipients", nil
	}
	link, err := j.link(w.ID, "", workflow.ParticipantID, tokens.RoleParticipant, w.LinkGen)
	if err != nil {
		return nil, "", err
	}
	subject, intro := "Form to complete", "You are invited to fill in a form."
	if m.Kind == workflow.NotifyChanges {
		subject, intro = "Changes requested on your form", "A reviewer asked for changes to the form you submitted."
	}
	var out []notify.Message
	for _, r := range w.Setup.Recipients {
		out = append(out, j.message(w, notify.Kind(m.Kind), r.Email, r.DisplayName, subject, intro, link))
	}
	return out, "", nil
}

// approval is the e-mail to the current approver with a reviewer link for the message's turn.
func (j *Job) approval(ctx context.Context, m workflow.NotifyMessage, w *workflow.Workflow) ([]notify.Message, string, error) {
	if m.Reviewer == "" || !w.ReviewerLive(m.Reviewer) {
		return nil, "the message's approver turn is not the current one", nil
	}
	s, err := workflow.LoadSchema(ctx, j.Packages, j.Blobs, w)
	if err != nil {
		if k := apperr.KindOf(err); k == apperr.KindInvalid || k == apperr.KindNotFound {
			return nil, "", funcproto.Permanent(err)
		}
		return nil, "", err
	}
	if w.Stage >= len(s.Stages) || w.Approver >= len(s.Stages[w.Stage].Approvers) {
		return nil, "the schema names no approver for this turn", nil
	}
	link, err := j.link(w.ID, "/review", m.Reviewer, tokens.RoleReviewer, 0)
	if err != nil {
		return nil, "", err
	}
	stage := s.Stages[w.Stage].Name
	if stage == "" {
		stage = fmt.Sprintf("stage %d", w.Stage+1)
	}
	intro := fmt.Sprintf("A form waits for your review (%s of %d).", stage, w.TotalStages)
	return []notify.Message{j.message(w, notify.Kind(m.Kind), s.Stages[w.Stage].Approvers[w.Approver], "", "Form waiting for your approval", intro, link)}, "", nil
}

// link is {PortalURL}/workflow/{id}{suffix}?pt=<token>, the token of link generation gen.
func (j *Job) link(id, suffix, participant, role string, gen int) (string, error) {
	tok, _, err := j.Tokens.IssueWorkflowPortal(tokens.WorkflowPortal{WorkflowID: id, Participant: participant, Role: role, Gen: gen})
	if err != nil {
		return "", apperr.Wrap(err, apperr.KindInternal, tokens.CodeIssueFailed, "could not issue the portal link")
	}
	return strings.TrimSuffix(j.PortalURL, "/") + "/workflow/" + url.PathEscape(id) + suffix + "?pt=" + url.QueryEscape(tok), nil
}

// message is one plain-text e-mail: greeting, the organisation's message, the link.
func (j *Job) message(w *workflow.Workflow, kind notify.Kind, to, name, subject, intro, link string) notify.Message {
	var sb strings.Builder
	greeting := "Hello"
	if name = oneLine(name); name != "" {
		greeting += " " + name
	}
	fmt.Fprintf(&sb, "%s,\n\n%s\n", greeting, intro)
	if org := oneLine(w.Setup.OrganizationName); org != "" {
		fmt.Fprintf(&sb, "From: %s\n", org)
		subject += " (" + org + ")"
	}
	if w.Setup.Message != "" {
		fmt.Fprintf(&sb, "\n%s\n", w.Setup.Message)
	}
	fmt.Fprintf(&sb, "\nOpen the form: %s\n\nThe link is personal: do not forward it.\n", link)
	return notify.Message{Channel: notify.Email, Kind: kind, To: to, Subject: subject, Text: sb.String(), CorrelationID: w.CorrelationID}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
