package workflow

// The use cases (Service) on a counting store in memory: a decision reads the workflow once
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
)

// countingRepo is a store in memory that counts its reads (Load, and the read inside Update)
// and its writes.
type countingRepo struct {
	w             Workflow
	reads, writes int
	stored        kernel.Change
}

func (c *countingRepo) Load(_ context.Context, id string) (*Workflow, error) {
	c.reads++
	if id != c.w.ID {
		return nil, ErrNotFound
	}
	x := c.w
	return &x, nil
}

func (c *countingRepo) Update(ctx context.Context, id string, step func(*Workflow) (kernel.Change, error)) (*Workflow, kernel.Change, error) {
	x, err := c.Load(ctx, id)
	if err != nil {
		return nil, kernel.Change{}, err
	}
	ch, err := step(x)
	if err != nil {
		return nil, kernel.Change{}, err
	}
	c.w, c.stored = *x, ch
	c.writes++
	return x, ch, nil
}

type flowPackages []byte

func (f flowPackages) Load(context.Context, string, string) (*template.Package, error) {
	return &template.Package{Schema: f}, nil
}

// service is a Service over a workflow of tenant "t" waiting for stage 1's first approver
// (f1@example.com), with the effects it emits.
func service(t *testing.T) (*Service, *countingRepo, *[]kernel.Change) {
	t.Helper()
	raw, err := os.ReadFile("testdata/flow.yaml")
	if err != nil {
		t.Fatal(err)
	}
	flow, _, _, _ := schemas(t)
	repo := &countingRepo{w: *start{state: StatePendingApproval, step: 1, spend: 50}.build(flow)}
	var emitted []kernel.Change
	v := &Service{Store: repo, Packages: flowPackages(raw),
		Emit: func(_ context.Context, _ *Workflow, ch kernel.Change) error {
			emitted = append(emitted, ch)
			return nil
		},
		EmailHash: func(e string) string { return "h:" + e },
		Now:       func() time.Time { return t0.Add(time.Hour) }}
	return v, repo, &emitted
}

func TestServiceApproveLoadsOnce(t *testing.T) {
	t.Parallel()
	v, repo, emitted := service(t)
	who := kernel.Actor{Kind: "approver", ID: "oid-f1"}
	d := Decider{Caller: &Caller{Tenant: "t", OID: "oid-f1", Email: "F1@example.com"}}
	x, err := v.Approve(context.Background(), "wf", d, who, "fine")
	if err != nil {
		t.Fatal(err)
	}
	if repo.reads != 1 || repo.writes != 1 {
		t.Fatalf("approve read the workflow %d times and wrote it %d times, want 1 and 1", repo.reads, repo.writes)
	}
	if x.Stage != 1 || x.Approver != 0 || x.State != StatePendingApproval {
		t.Fatalf("after stage 1: stage %d approver %d state %s, want stage 1 (Legal), approver 0, pending-approval", x.Stage, x.Approver, x.State)
	}
	if n := len(x.Decisions); n != 1 || x.Decisions[0].ApproverHash != "h:F1@example.com" || x.Decisions[0].ApproverOID != "oid-f1" {
		t.Fatalf("decisions %+v, want one by oid-f1 with the e-mail's hash", x.Decisions)
	}
	if len(repo.stored.Events) == 0 || repo.stored.Events[0].Actor != who {
		t.Fatalf("stored events %+v, want them stamped by %+v", repo.stored.Events, who)
	}
	if len(*emitted) != 1 || len((*emitted)[0].Effects) != 1 || (*emitted)[0].Effects[0].Kind != EffectNotifyApprovers {
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
	_, err := v.Seal(ctx, "other", "wf", kernel.Actor{}, func() (Sealer, error) { bodyRead = true; return Sealer{}, nil })
	if !errors.Is(err, ErrNotFound) || bodyRead {
		t.Fatalf("seal of another tenant's: %v (body read: %v), want workflow_not_found before the body", err, bodyRead)
	}
	if _, err := v.Approve(ctx, "wf", Decider{Caller: &Caller{Tenant: "other", Email: "f1@example.com"}}, kernel.Actor{}, ""); !errors.Is(err, ErrNotFound) {
		t.Fatalf("approve of another tenant's: %v, want workflow_not_found", err)
	}
	if _, err := v.Governance(ctx, "wf", ReviewerID(1, 1, 1), kernel.Actor{}, "approve", ""); !errors.Is(err, ErrTurnOver) {
		t.Fatalf("a later approver's turn: %v, want reviewer_token_spent", err)
	}
	if _, err := v.Reject(ctx, "wf", Decider{Turn: ReviewerID(1, 1, 0)}, kernel.Actor{}, ""); err != nil {
		t.Fatalf("the current reviewer rejects: %v", err)
	}
	if _, err := v.Reject(ctx, "wf", Decider{Turn: ReviewerID(1, 1, 0)}, kernel.Actor{}, ""); !errors.Is(err, ErrTurnOver) {
		t.Fatalf("the turn after the rejection: %v, want reviewer_token_spent", err)
	}
	if repo.writes != 1 || len(*emitted) != 1 {
		t.Fatalf("%d writes, %d emits: want only the one reject stored and emitted", repo.writes, len(*emitted))
	}
	if _, _, err := v.Read(ctx, Access{Tenant: "other"}, "wf", false); !errors.Is(err, ErrNotFound) {
		t.Fatalf("read of another tenant's: %v, want workflow_not_found", err)
	}
}
