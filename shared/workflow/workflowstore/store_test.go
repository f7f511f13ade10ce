package workflowstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/kernel/aggstore"
	"github.com/esign-svc/esign/shared/workflow"
	"github.com/esign-svc/esign/shared/workflow/workflowstore"
	"github.com/esign-svc/esign/shared/workflow/workflowstore/storetest"
)

func TestMain(m *testing.M) { azuritetest.Main(m) }

var now = time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)

const schemaYAML = `
steps:
  - id: one
    fields:
      - { key: name, type: string, required: true }
      - { key: notes, type: text }
  - id: two
    fields:
      - { key: spend, type: number, required: true }
rules:
  - { id: cap, expr: "data.spend <= 100", message: "Spend above 100", fieldKey: spend }
approval:
  stages:
    - { name: Finance, approvers: [f@example.com] }
    - { name: Legal, approvers: [l@example.com] }
`

type env struct {
	st     *workflowstore.Store
	schema *workflow.Schema
	tab    string
}

func newEnv(t *testing.T) env {
	t.Helper()
	st, _, sfx := storetest.New(t)
	s, err := workflow.ParseSchema("schema", []byte(schemaYAML))
	if err != nil {
		t.Fatal(err)
	}
	return env{st: st, schema: s, tab: "wf" + sfx}
}

func (e env) create(t *testing.T, tenant, corr string, initial map[string]any) (*workflow.Workflow, bool) {
	t.Helper()
	w := &workflow.Workflow{ID: uuid.NewString(), Tenant: tenant, CorrelationID: corr, TemplatePath: "templates/onboard.zip", CreatedBy: "oid",
		CreatorHash: "hash-creator"}
	ch, err := workflow.Create(w, e.schema, initial, now)
	if err != nil {
		t.Fatal(err)
	}
	ch.By(kernel.Actor{Kind: "initiator", ID: "oid"})
	got, created, err := e.st.Create(context.Background(), w, ch, now)
	if err != nil {
		t.Fatal(err)
	}
	return got, created
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestLifecycle: create, steps saved, two approvals to sealing, complete; every state and the
// content read back after each write; the audit trail in order with no personal data; the
// content encrypted in the row.
func TestLifecycle(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	w, created := e.create(t, "t1", "corr-1", map[string]any{"name": "Ada Example"})
	if !created || w.State != workflow.StateInProgress {
		t.Fatalf("created %v, %+v", created, w)
	}
	steps := []func(w *workflow.Workflow) (kernel.Change, error){
		func(w *workflow.Workflow) (kernel.Change, error) {
			return w.SaveStep(e.schema, 0, map[string]any{"notes": "line 1\nline 2"}, now.Add(time.Minute))
		},
		func(w *workflow.Workflow) (kernel.Change, error) { return w.Advance(e.schema, now.Add(2*time.Minute)) },
		func(w *workflow.Workflow) (kernel.Change, error) {
			return w.SaveStep(e.schema, 1, map[string]any{"spend": json.Number("42.5")}, now.Add(3*time.Minute))
		},
		func(w *workflow.Workflow) (kernel.Change, error) { return w.Advance(e.schema, now.Add(4*time.Minute)) },
		func(w *workflow.Workflow) (kernel.Change, error) {
			return w.Approve(workflow.Approver{Index: 0, Hash: "hash-f", OID: "oid-f", Name: "Fiona"}, "Looks right, Ada", now.Add(5*time.Minute))
		},
		func(w *workflow.Workflow) (kernel.Change, error) {
			return w.Approve(workflow.Approver{Index: 0, Hash: "hash-l"}, "", now.Add(6*time.Minute))
		},
		func(w *workflow.Workflow) (kernel.Change, error) {
			return w.Complete(workflow.SealedPath(w.Tenant, w.ID), "sha256:ab", now.Add(7*time.Minute))
		},
		func(w *workflow.Workflow) (kernel.Change, error) {
			return w.TriggerStarted("", []string{"d-1", "d-2"}, now.Add(8*time.Minute))
		},
	}
	for i, step := range steps {
		got, _, err := e.st.Update(ctx, w.ID, step)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		back, err := e.st.Load(ctx, w.ID)
		if err != nil {
			t.Fatal(err)
		}
		got.ETag, back.ETag = "", ""
		if jsonOf(t, got) != jsonOf(t, back) {
			t.Fatalf("step %d: stored %+v, read back %+v", i, got, back)
		}
	}
	back, err := e.st.Load(ctx, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	if back.State != workflow.StateComplete || back.Stage != 1 || len(back.Decisions) != 2 || back.Decisions[0].Comment != "Looks right, Ada" ||
		back.AllData()["spend"] != json.Number("42.5") || back.AllData()["notes"] != "line 1\nline 2" || back.SealedHash != "sha256:ab" ||
		strings.Join(back.DeliveryIDs, " ") != "d-1 d-2" || !back.Triggered() {
		t.Fatalf("read back %+v", back)
	}
	evs, err := e.st.Events(ctx, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, ev := range evs {
		kinds = append(kinds, ev.Kind)
		if s := jsonOf(t, ev.Data); strings.Contains(s, "Ada") || strings.Contains(s, "@") || strings.Contains(s, "Looks right") {
			t.Fatalf("event %s holds personal data: %s", ev.Kind, s)
		}
	}
	want := []string{workflow.EvCreated, workflow.EvStepSaved, workflow.EvAdvanced, workflow.EvStepSaved, workflow.EvAdvanced,
		workflow.EvPendingApproval, workflow.EvApproved, workflow.EvStageAdvanced, workflow.EvApproved, workflow.EvSealing, workflow.EvCompleted,
		workflow.EvDeliveryStarted}
	if !reflect.DeepEqual(kinds, want) {
		t.Fatalf("events %v\nwant   %v", kinds, want)
	}
	row, err := e.st.Rows().Get(ctx, w.ID, workflowstore.RowWorkflow)
	if err != nil {
		t.Fatal(err)
	}
	if s := jsonOf(t, row.Props); strings.Contains(s, "Ada") || strings.Contains(s, "42.5") || strings.Contains(s, "Looks right") {
		t.Fatalf("row holds plain personal data: %s", s)
	}
}

// TestIdempotentCreate: a repeated correlationId of the tenant returns the first workflow and
// writes nothing; another tenant's same correlationId is a new workflow; of concurrent creates
// of one correlationId exactly one creates, the others get it back or a retryable conflict.
func TestIdempotentCreate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	first, created := e.create(t, "t1", "corr-x", nil)
	again, createdAgain := e.create(t, "t1", "corr-x", map[string]any{"name": "Other"})
	if !created || createdAgain || again.ID != first.ID || len(again.AllData()) != 0 {
		t.Fatalf("first %s created %v; again %s created %v", first.ID, created, again.ID, createdAgain)
	}
	other, created := e.create(t, "t2", "corr-x", nil)
	if !created || other.ID == first.ID {
		t.Fatalf("t2: %s created %v", other.ID, created)
	}
	evs, err := e.st.Events(ctx, first.ID)
	if err != nil || len(evs) != 1 {
		t.Fatalf("events %v %v", evs, err)
	}

	var wg sync.WaitGroup
	var mu sync.Mutex
	ids := map[string]int{}
	createdN, conflicts := 0, 0
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := &workflow.Workflow{ID: uuid.NewString(), Tenant: "t1", CorrelationID: "corr-race"}
			ch, err := workflow.Create(w, e.schema, nil, now)
			if err != nil {
				t.Error(err)
				return
			}
			got, created, err := e.st.Create(ctx, w, ch, now)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case errors.Is(err, aggstore.ErrConcurrent):
				conflicts++
			case err != nil:
				t.Error(err)
			default:
				ids[got.ID]++
				if created {
					createdN++
				}
			}
		}()
	}
	wg.Wait()
	if createdN != 1 || len(ids) != 1 || conflicts+ids[firstKey(ids)] != 6 {
		t.Fatalf("created %d, ids %v, conflicts %d", createdN, ids, conflicts)
	}
}

func firstKey(m map[string]int) string {
	for k := range m {
		return k
	}
	return ""
}

// TestUpdateRetriesAndRefusals: a refused transition writes nothing; concurrent updates each
// land once (the kernel's retry) or fail as a lost race, never lost or doubled.
func TestUpdateRetriesAndRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	w, _ := e.create(t, "t1", "corr-u", nil)
	_, _, err := e.st.Update(ctx, w.ID, func(w *workflow.Workflow) (kernel.Change, error) {
		return w.Approve(workflow.Approver{Index: 0}, "", now)
	})
	if !errors.Is(err, workflow.ErrInvalidState) {
		t.Fatalf("approve in-progress: %v", err)
	}
	if _, err := e.st.Load(ctx, "nope"); !errors.Is(err, workflowstore.ErrNotFound) {
		t.Fatalf("load missing: %v", err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	landed := 0
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, err := e.st.Update(ctx, w.ID, func(w *workflow.Workflow) (kernel.Change, error) {
				return w.SaveStep(e.schema, 0, map[string]any{"notes": fmt.Sprintf("n%d", i), "name": fmt.Sprintf("k%d", i)}, now)
			})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				landed++
			case !errors.Is(err, aggstore.ErrConcurrent):
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	evs, err := e.st.Events(ctx, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	if landed == 0 || len(evs) != 1+landed {
		t.Fatalf("landed %d, events %d", landed, len(evs))
	}
}

// TestLargeContent: content near the machine's limit fits one row and reads back whole.
func TestLargeContent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	w, _ := e.create(t, "t1", "corr-big", nil)
	notes := strings.Repeat("x", workflow.MaxContentBytes-300) // the largest content the machine allows
	if _, _, err := e.st.Update(ctx, w.ID, func(w *workflow.Workflow) (kernel.Change, error) {
		return w.SaveStep(e.schema, 0, map[string]any{"notes": notes}, now)
	}); err != nil {
		t.Fatal(err)
	}
	back, err := e.st.Load(ctx, w.ID)
	if err != nil || back.AllData()["notes"] != notes {
		t.Fatalf("read back: %v", err)
	}
}
