package workflow_test

// The use cases (workflow.Workflows) on a counting store in memory: a decision reads the workflow once
// (the route used to read it three times: the tenant check, the schema and the update), checks
// the tenant before anything else, stores the change with its actor and queues its effects
// only once stored.

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/template"
	"github.com/esign-svc/esign/shared/workflow"
	"github.com/esign-svc/esign/shared/workflow/workflowtest"
)

type flowPackages []byte

func (f flowPackages) Load(context.Context, string, string) (*template.Package, error) {
	return &template.Package{Schema: f}, nil
}

// service is a workflow.Workflows over a workflow of tenant "t" waiting for stage 1's first approver
// (f1@example.com), with the effects it emits.
func service(t *testing.T) (*workflow.Workflows, *workflowtest.MemStore, *[]kernel.Change) {
	t.Helper()
	raw, err := os.ReadFile("testdata/flow.yaml")
	if err != nil {
		t.Fatal(err)
	}
	repo := &workflowtest.MemStore{W: workflow.Workflow{ID: "wf", Tenant: "t", State: workflow.StatePendingApproval, Step: 1, TotalSteps: 2,
		TotalStages: 2, Round: 1, Content: workflow.Content{Data: []map[string]any{{"name": "Acme"}, {"spend": 50.0}}}}}
	var emitted []kernel.Change
	v := &workflow.Workflows{Store: repo, Packages: flowPackages(raw),
		Emit: func(_ context.Context, _ *workflow.Workflow, ch kernel.Change) error {
			emitted = append(emitted, ch)
			return nil
		},
		EmailHash: func(e string) string { return "h:" + e },
		Now:       func() time.Time { return time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC) }}
	return v, repo, &emitted
}

func TestServiceApproveLoadsOnce(t *testing.T) {
	t.Parallel()
	v, repo, emitted := service(t)
	who := kernel.Actor{Kind: "approver", ID: "oid-f1"}
	d := workflow.Decider{Caller: &workflow.Caller{Tenant: "t", OID: "oid-f1", Email: "F1@example.com"}}
	x, err := v.Approve(context.Background(), "wf", d, who, "fine")
	if err != nil {
		t.Fatal(err)
	}
	if repo.Reads != 1 || repo.Writes != 1 {
		t.Fatalf("approve read the workflow %d times and wrote it %d times, want 1 and 1", repo.Reads, repo.Writes)
	}
	if x.Stage != 1 || x.Approver != 0 || x.State != workflow.StatePendingApproval {
		t.Fatalf("after stage 1: stage %d approver %d state %s, want stage 1 (Legal), approver 0, pending-approval", x.Stage, x.Approver, x.State)
	}
	if n := len(x.Decisions); n != 1 || x.Decisions[0].ApproverHash != "h:F1@example.com" || x.Decisions[0].ApproverOID != "oid-f1" {
		t.Fatalf("decisions %+v, want one by oid-f1 with the e-mail's hash", x.Decisions)
	}
	if len(repo.Stored.Events) == 0 || repo.Stored.Events[0].Actor != who {
		t.Fatalf("stored events %+v, want them stamped by %+v", repo.Stored.Events, who)
	}
	if len(*emitted) != 1 || len((*emitted)[0].Effects) != 1 || (*emitted)[0].Effects[0].Kind != workflow.EffectNotifyApprovers {
		t.Fatalf("emitted %+v, want the next approver's notice", *emitted)
	}
}

// Another tenant's workflow is not found, before the body is read or anything written; a
// reviewer turn that is over is refused the same way on every decision.
func TestServiceRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	v, repo, emitted := service(t)
	bodyRead := false
	_, err := v.Seal(ctx, "other", "wf", kernel.Actor{}, func() (workflow.Sealer, error) { bodyRead = true; return workflow.Sealer{}, nil })
	if !errors.Is(err, workflow.ErrNotFound) || bodyRead {
		t.Fatalf("seal of another tenant's: %v (body read: %v), want workflow_not_found before the body", err, bodyRead)
	}
	if _, err := v.Approve(ctx, "wf", workflow.Decider{Caller: &workflow.Caller{Tenant: "other", Email: "f1@example.com"}}, kernel.Actor{}, ""); !errors.Is(err, workflow.ErrNotFound) {
		t.Fatalf("approve of another tenant's: %v, want workflow_not_found", err)
	}
	if _, err := v.Governance(ctx, "wf", workflow.ReviewerID(1, 1, 1), kernel.Actor{}, "approve", ""); !errors.Is(err, workflow.ErrTurnOver) {
		t.Fatalf("a later approver's turn: %v, want reviewer_token_spent", err)
	}
	if _, err := v.Reject(ctx, "wf", workflow.Decider{Turn: workflow.ReviewerID(1, 1, 0)}, kernel.Actor{}, ""); err != nil {
		t.Fatalf("the current reviewer rejects: %v", err)
	}
	if _, err := v.Reject(ctx, "wf", workflow.Decider{Turn: workflow.ReviewerID(1, 1, 0)}, kernel.Actor{}, ""); !errors.Is(err, workflow.ErrTurnOver) {
		t.Fatalf("the turn after the rejection: %v, want reviewer_token_spent", err)
	}
	if repo.Writes != 1 || len(*emitted) != 1 {
		t.Fatalf("%d writes, %d emits: want only the one reject stored and emitted", repo.Writes, len(*emitted))
	}
	if _, _, err := v.Read(ctx, workflow.Access{Tenant: "other"}, "wf", false); !errors.Is(err, workflow.ErrNotFound) {
		t.Fatalf("read of another tenant's: %v, want workflow_not_found", err)
	}
}

// Create stores the workflow stamped by its actor and queues the invitation; the same
// correlationId again returns the stored workflow with nothing written or queued.
func TestServiceCreateQueuesOnlyWhenCreated(t *testing.T) {
	t.Parallel()
	v, _, emitted := service(t)
	repo := &workflowtest.MemStore{}
	v.Store = repo
	x := &workflow.Workflow{ID: "wf-new", Tenant: "t"}
	who := kernel.Actor{Kind: "initiator", ID: "oid-1"}
	ch := kernel.Change{Events: []kernel.Event{{Kind: "workflow.created"}}, Effects: []kernel.Effect{{Kind: workflow.EffectInviteParticipant}}}
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	if _, created, err := v.Create(context.Background(), x, ch, who, now); err != nil || !created {
		t.Fatalf("create: created %v, %v", created, err)
	}
	if len(*emitted) != 1 || repo.Writes != 1 || repo.Stored.Events[0].Actor != who {
		t.Fatalf("%d emits, %d writes, events %+v: want the invitation queued once, stamped by %+v", len(*emitted), repo.Writes, repo.Stored.Events, who)
	}
	stored, created, err := v.Create(context.Background(), &workflow.Workflow{ID: "wf-again", Tenant: "t"}, ch, who, now)
	if err != nil || created || stored.ID != "wf-new" || len(*emitted) != 1 || repo.Writes != 1 {
		t.Fatalf("repeat: %v created %v (%v), %d emits, %d writes: want the first workflow, nothing queued or written", stored, created, err, len(*emitted), repo.Writes)
	}
}
