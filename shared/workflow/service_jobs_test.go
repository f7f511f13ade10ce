package workflow_test

// The processor's use cases (service_jobs.go) on the store in memory: each checks the tenant
// inside the update, stamps the job's actor, returns the change instead of emitting it, reads
// a workflow that moved on as done where the job acknowledges, and sends a notice once.

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/workflow"
	"github.com/esign-svc/esign/shared/workflow/workflowtest"
)

var jobActor = kernel.Actor{Kind: "system", ID: "workflow-job"}

// jobService is a workflow.Workflows over workflow "wf" of tenant "t" in state with a callbackUrl,
// whose Emit fails the test: the jobs' use cases never emit.
func jobService(t *testing.T, state workflow.State) (*workflow.Workflows, *workflowtest.MemStore) {
	t.Helper()
	repo := &workflowtest.MemStore{W: workflow.Workflow{ID: "wf", Tenant: "t", State: state,
		Content: workflow.Content{Setup: workflow.Setup{CallbackURL: "https://crm.example/hook"}}}}
	v := &workflow.Workflows{Store: repo,
		Emit: func(context.Context, *workflow.Workflow, kernel.Change) error {
			t.Error("a job's use case emitted its change")
			return nil
		},
		Now: func() time.Time { return time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC) }}
	return v, repo
}

func kinds(repo *workflowtest.MemStore) []string {
	var out []string
	for _, r := range repo.Trail {
		out = append(out, r.Kind)
	}
	return out
}

func TestJobCompleteChecksTheTenantAndReturnsTheOutputs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	v, repo := jobService(t, workflow.StateSealing)
	if _, _, err := v.Complete(ctx, "other", "wf", jobActor, "signed/t/workflows/wf.pdf", "sha256:ab"); !errors.Is(err, workflow.ErrNotFound) {
		t.Fatalf("another tenant's complete: %v, want ErrNotFound", err)
	}
	if repo.Writes != 0 || repo.W.State != workflow.StateSealing {
		t.Fatalf("another tenant's complete wrote %d change(s), state %s", repo.Writes, repo.W.State)
	}
	x, ch, err := v.Complete(ctx, "t", "wf", jobActor, "signed/t/workflows/wf.pdf", "sha256:ab")
	if err != nil || x.State != workflow.StateComplete || x.SealedHash != "sha256:ab" || repo.Writes != 1 {
		t.Fatalf("complete: %v, %+v, %d write(s)", err, x, repo.Writes)
	}
	asks := func(k kernel.EffectKind) bool {
		return slices.ContainsFunc(ch.Effects, func(e kernel.Effect) bool { return e.Kind == k })
	}
	if !asks(workflow.EffectCallback) || !asks(workflow.EffectAutoTrigger) {
		t.Fatalf("complete's effects %+v: want the callback and the auto-trigger", ch.Effects)
	}
	for _, e := range ch.Events {
		if e.Actor != jobActor {
			t.Fatalf("event %s by %+v, want the job's actor", e.Kind, e.Actor)
		}
	}
	if _, _, err := v.Complete(ctx, "t", "wf", jobActor, "p", "h"); !errors.Is(err, workflow.ErrInvalidState) || repo.Writes != 1 {
		t.Fatalf("second complete: %v, %d write(s); want ErrInvalidState and nothing written", err, repo.Writes)
	}
	// a seal failure after the completion (another attempt) is no error and writes nothing
	if err := v.SealFailed(ctx, "t", "wf", jobActor, "retries_exhausted"); err != nil || repo.Writes != 1 {
		t.Fatalf("seal failed on a complete workflow: %v, %d write(s)", err, repo.Writes)
	}
}

func TestJobSealFailedRecordsOnASealingWorkflow(t *testing.T) {
	t.Parallel()
	v, repo := jobService(t, workflow.StateSealing)
	if err := v.SealFailed(context.Background(), "other", "wf", jobActor, "template_missing"); !errors.Is(err, workflow.ErrNotFound) || repo.Writes != 0 {
		t.Fatalf("another tenant's seal failure: %v, %d write(s)", err, repo.Writes)
	}
	if err := v.SealFailed(context.Background(), "t", "wf", jobActor, "template_missing"); err != nil {
		t.Fatal(err)
	}
	if got := kinds(repo); !slices.Equal(got, []string{workflow.EvSealFailed}) || repo.W.State != workflow.StateSealing {
		t.Fatalf("trail %v, state %s; want one seal_failed and still sealing", got, repo.W.State)
	}
}

func TestJobCallbackAndTriggerRecords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	v, repo := jobService(t, workflow.StateComplete)
	if pending, err := v.CallbackUnattempted(ctx, &repo.W); err != nil || !pending {
		t.Fatalf("before any attempt: %v, %v; want the callback pending", pending, err)
	}
	a := workflow.CallbackAttempt{Attempt: 1, Status: 200, End: workflow.CallbackDelivered}
	if err := v.RecordCallback(ctx, "other", "wf", jobActor, a); !errors.Is(err, workflow.ErrNotFound) || repo.Writes != 0 {
		t.Fatalf("another tenant's callback: %v, %d write(s)", err, repo.Writes)
	}
	if err := v.RecordCallback(ctx, "t", "wf", jobActor, a); err != nil {
		t.Fatal(err)
	}
	if pending, err := v.CallbackUnattempted(ctx, &repo.W); err != nil || pending {
		t.Fatalf("after an attempt: %v, %v; want nothing pending", pending, err)
	}
	if err := v.TriggerStarted(ctx, "t", "wf", jobActor, "g-1", nil); err != nil || repo.W.ESignGroupID != "g-1" {
		t.Fatalf("trigger started: %v, group %q", err, repo.W.ESignGroupID)
	}
	// a redelivered trigger message finds the trigger ended: no error, nothing written
	writes := repo.Writes
	if err := v.TriggerFailed(ctx, "t", "wf", jobActor, "retries_exhausted"); err != nil || repo.Writes != writes {
		t.Fatalf("trigger failed after it started: %v, %d write(s) (was %d)", err, repo.Writes, writes)
	}
	want := []string{workflow.EvCallbackAttempted, workflow.EvCallbackDelivered, workflow.EvESignStarted}
	if got := kinds(repo); !slices.Equal(got, want) {
		t.Fatalf("trail %v, want %v", got, want)
	}
}

func TestJobNoticeIsSentOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	v, repo := jobService(t, workflow.StatePendingApproval)
	sends := 0
	failing := func() (int, error) { sends++; return 0, errors.New("provider down") }
	if err := v.Notice(ctx, &repo.W, "msg-1", workflow.NotifyApproval, false, jobActor, time.Minute, failing); err == nil || sends != 1 {
		t.Fatalf("failed send: %v after %d send(s); want the send's error", err, sends)
	}
	if len(repo.Trail) != 0 {
		t.Fatalf("a failed send audited %v", kinds(repo))
	}
	ok := func() (int, error) { sends++; return 2, nil }
	if err := v.Notice(ctx, &repo.W, "msg-1", workflow.NotifyApproval, true, jobActor, time.Minute, ok); err != nil || sends != 2 {
		t.Fatalf("retried send: %v after %d send(s)", err, sends)
	}
	if err := v.Notice(ctx, &repo.W, "msg-1", workflow.NotifyApproval, true, jobActor, time.Minute, ok); !errors.Is(err, workflow.ErrNoticeSent) || sends != 2 {
		t.Fatalf("redelivered message: %v after %d send(s); want ErrNoticeSent without sending", err, sends)
	}
	if len(repo.Trail) != 1 {
		t.Fatalf("trail %v, want one notice_sent", kinds(repo))
	}
	r := repo.Trail[0]
	if r.Kind != workflow.EvNoticeSent || r.ActorID != jobActor.ID || r.Data["kind"] != workflow.NotifyApproval || r.Data["count"] != 2 || r.Data["resend"] != true {
		t.Fatalf("notice audited as %+v", r)
	}
	if err := v.NoticeFailed(ctx, "wf", workflow.NotifyInvitation, jobActor); err != nil {
		t.Fatal(err)
	}
	if last := repo.Trail[len(repo.Trail)-1]; last.Kind != workflow.EvNoticeFailed || last.Data["code"] != "retries_exhausted" || repo.Writes != 0 {
		t.Fatalf("notice failure audited as %+v with %d state write(s)", last, repo.Writes)
	}
}
