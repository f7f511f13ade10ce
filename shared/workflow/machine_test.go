package workflow

import (
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/template"
)

func kinds(c kernel.Change) []string {
	var out []string
	for _, e := range c.Events {
		out = append(out, e.Kind)
	}
	return out
}

func must(t *testing.T) func(kernel.Change, error) kernel.Change {
	return func(c kernel.Change, err error) kernel.Change {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
}

func TestCreate(t *testing.T) {
	t.Parallel()
	flow, _, _, _ := schemas(t)
	w := &Workflow{ID: "wf"}
	c := must(t)(Create(w, flow, nil, t0))
	if w.State != StateInProgress || w.TotalSteps != 2 || w.TotalStages != 2 || len(w.Data) != 2 || !reflect.DeepEqual(kinds(c), []string{EvCreated}) ||
		!c.Asks(EffectInviteParticipant) {
		t.Fatalf("w = %+v, c = %+v", w, c)
	}
	// initialData go to their fields' steps; no validation without autoValidateOnCreate.
	w = &Workflow{ID: "wf"}
	must(t)(Create(w, flow, map[string]any{"spend": 5.0}, t0))
	if w.State != StateInProgress || !reflect.DeepEqual(w.Data, []map[string]any{{}, {"spend": 5.0}}) {
		t.Fatalf("data = %v", w.Data)
	}
	// a bad initialData: 400 at initialData.<key>, nothing changed.
	w = &Workflow{ID: "wf"}
	_, err := Create(w, flow, map[string]any{"spend": -1.0, "nope": 1}, t0)
	e, ok := apperr.As(err)
	if !ok || e.Kind != apperr.KindInvalid || len(e.Fields) != 2 || e.Fields[0].Field != "initialData.nope" || e.Fields[1].Field != "initialData.spend" ||
		!reflect.DeepEqual(w, &Workflow{ID: "wf"}) {
		t.Fatalf("err = %v, w = %+v", err, w)
	}
	// autoValidateOnCreate with initialData: validated at once, the participant skipped.
	auto, err := ParseSchema("s", []byte("autoValidateOnCreate: true\n"+string(mustRead(t, "testdata/flow.yaml"))))
	if err != nil {
		t.Fatal(err)
	}
	w = &Workflow{ID: "wf"}
	c = must(t)(Create(w, auto, map[string]any{"name": "Acme", "spend": 5.0}, t0))
	if w.State != StatePendingApproval || w.Outcome != OutcomePassed || w.Step != 1 || w.Round != 1 || c.Asks(EffectInviteParticipant) ||
		!reflect.DeepEqual(kinds(c), []string{EvCreated, EvPendingApproval}) {
		t.Fatalf("w = %+v, events %v", w, kinds(c))
	}
	w = &Workflow{ID: "wf"}
	c = must(t)(Create(w, auto, map[string]any{"name": "Acme", "spend": 500.0}, t0))
	want := []template.Result{{RuleID: "cap", FieldKey: "spend", Severity: template.SeverityError, Message: "Spend above 100"},
		{RuleID: "small", Passed: true, FieldKey: "spend", Severity: template.SeverityWarning, Message: "Tiny spend"}}
	if w.State != StateValidationFailed || !c.Asks(EffectInviteParticipant) || !reflect.DeepEqual(w.Results, want) {
		t.Fatalf("w = %+v, c = %+v", w, c)
	}
}

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestWholeFlow: two stages, request-changes and a second round that restarts at stage 1, a
// governance exception whose justification is kept verbatim, then sealing and complete.
func TestWholeFlow(t *testing.T) {
	t.Parallel()
	_, gov, _, _ := schemas(t)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	w := &Workflow{ID: "wf"}
	must(t)(Create(w, gov, nil, at(0)))
	must(t)(w.SaveStep(gov, 0, map[string]any{"name": "Acme"}, at(1)))
	must(t)(w.Advance(gov, at(2)))
	must(t)(w.SaveStep(gov, 1, map[string]any{"spend": 50.0}, at(3)))
	must(t)(w.Advance(gov, at(4)))
	if w.State != StatePendingApproval || w.Stage != 0 || w.Round != 1 {
		t.Fatalf("w = %+v", w)
	}
	must(t)(w.Approve(first, "fine", at(5)))
	must(t)(w.RequestChanges(gov, Approver{Index: 0, Hash: "h-legal"}, item, at(6)))
	if w.State != StateChangesRequested || w.Step != 1 || len(w.Changes) != 1 {
		t.Fatalf("w = %+v", w)
	}
	must(t)(w.SaveStep(gov, 1, map[string]any{"spend": 500.0}, at(7)))
	must(t)(w.Advance(gov, at(8)))
	if w.State != StatePendingApproval || w.Stage != 0 || w.Approver != 0 || w.Round != 2 || w.Outcome != OutcomeFailed || w.Changes != nil {
		t.Fatalf("round 2: %+v", w)
	}
	justification := "  Board minute 12:\nthe spend is agreed.  "
	must(t)(w.GovernanceDecision(first, DecisionApproveWithException, justification, at(9)))
	must(t)(w.GovernanceDecision(Approver{Index: 0, Hash: "h-legal"}, DecisionApproveWithException, justification, at(10)))
	if w.State != StateSealing {
		t.Fatalf("w = %+v", w)
	}
	c := must(t)(w.Complete("signed/workflows/wf.pdf", "sha256:ab", at(11)))
	if w.State != StateComplete || !w.CompletedAt.Equal(at(11)) || !c.Asks(EffectCallback) || !c.Asks(EffectAutoTrigger) {
		t.Fatalf("w = %+v", w)
	}
	want := []Decision{
		{Stage: 1, Round: 1, ApproverHash: "h-f1", Decision: DecisionApprove, Comment: "fine", At: at(5)},
		{Stage: 2, Round: 1, ApproverHash: "h-legal", Decision: DecisionRequestChanges, At: at(6)},
		{Stage: 1, Round: 2, ApproverHash: "h-f1", Decision: DecisionApproveWithException, Justification: justification, At: at(9)},
		{Stage: 2, Round: 2, ApproverHash: "h-legal", Decision: DecisionApproveWithException, Justification: justification, At: at(10)},
	}
	if !reflect.DeepEqual(w.Decisions, want) {
		t.Fatalf("decisions = %+v", w.Decisions)
	}
}

func TestSaveStepMergesAndClears(t *testing.T) {
	t.Parallel()
	flow, _, _, _ := schemas(t)
	w := &Workflow{ID: "wf"}
	must(t)(Create(w, flow, map[string]any{"name": "Acme"}, t0))
	must(t)(w.SaveStep(flow, 1, map[string]any{"spend": 3.0}, t0))
	must(t)(w.SaveStep(flow, 0, map[string]any{"name": nil}, t0))
	if !reflect.DeepEqual(w.AllData(), map[string]any{"spend": 3.0}) {
		t.Fatalf("data = %v", w.AllData())
	}
}

func TestContentLimit(t *testing.T) {
	t.Parallel()
	big, err := ParseSchema("s", []byte("steps:\n  - id: a\n    fields:\n      - {key: a, type: text}\n      - {key: b, type: text}\n"))
	if err != nil {
		t.Fatal(err)
	}
	w := &Workflow{ID: "wf"}
	must(t)(Create(w, big, nil, t0))
	half := strings.Repeat("x", MaxContentBytes/2)
	must(t)(w.SaveStep(big, 0, map[string]any{"a": half[:len(half)-100]}, t0))
	before := w.AllData()
	_, err = w.SaveStep(big, 0, map[string]any{"b": half + strings.Repeat("y", 200)}, t0)
	if e, ok := apperr.As(err); !ok || e.Kind != apperr.KindTooLarge || !reflect.DeepEqual(w.AllData(), before) {
		t.Fatalf("err = %v", err)
	}
}

// TestSealFailedData: spec "any -> sealing" from validation-failed: the manual seal validates
// the data again and keeps every result, the failed error rule and the passed warning rule, the
// failed outcome and the reason, for the sealed record; the audit names the outcome and counts,
// not the values. It used to answer 409 rules_failed.
func TestSealFailedData(t *testing.T) {
	t.Parallel()
	flow, _, _, _ := schemas(t)
	w := start{state: StateValidationFailed, step: 1, spend: 500, outcome: OutcomeFailed}.build(flow)
	c, err := w.Seal(flow, Sealer{Reason: "Signed off on paper, file 12."}, t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	want := []template.Result{{RuleID: "cap", FieldKey: "spend", Severity: template.SeverityError, Message: "Spend above 100"},
		{RuleID: "small", Passed: true, FieldKey: "spend", Severity: template.SeverityWarning, Message: "Tiny spend"}}
	if w.State != StateSealing || w.Outcome != OutcomeFailed || !reflect.DeepEqual(w.Results, want) || w.SealReason != "Signed off on paper, file 12." {
		t.Fatalf("w = %+v", w)
	}
	ev := c.Events[0].Data
	if c.Events[0].Kind != EvSealing || ev["reason"] != "manual" || ev["validationOutcome"] != "failed" || ev["errors"] != 1 || ev["warnings"] != 0 ||
		ev["sealReason"] != "Signed off on paper, file 12." || !c.Asks(EffectSeal) {
		t.Fatalf("change %+v", c)
	}
}
