package workflow

// The workflow state machine as a table, without storage: every row of the spec's "Workflow
// states" table and every move DESIGN 10 adds, with the refusals. Expectations are written from
// the spec and DESIGN, never by calling the machine; a refused transition must leave the
// workflow and the change untouched.

import (
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/kernel"
)

var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// schemas: the flow (2 steps, stages Finance [2 approvers] and Legal [1]), the same with
// governance, without approval stages, and with governance but no stages.
func schemas(t *testing.T) (flow, gov, open, openGov *Schema) {
	t.Helper()
	raw, err := os.ReadFile("testdata/flow.yaml")
	if err != nil {
		t.Fatal(err)
	}
	parse := func(b string) *Schema {
		s, err := ParseSchema("schema", []byte(b))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	y := string(raw)
	noStages := y[:strings.Index(y, "approval:")]
	return parse(y), parse("governance: true\n" + y), parse(noStages), parse("governance: true\n" + noStages)
}

// start is a workflow in state at step, stage and approver, with data whose spend is spend
// (a failing "cap" when above 100).
type start struct {
	state    State
	step     int
	stage    int
	approver int
	outcome  Outcome
	spend    float64
	noName   bool
}

func (s start) build(sc *Schema) *Workflow {
	w := &Workflow{ID: "wf", Tenant: "t", State: s.state, Step: s.step, TotalSteps: len(sc.Steps), Stage: s.stage,
		TotalStages: len(sc.Stages), Approver: s.approver, Outcome: s.outcome, Round: 1, CreatedAt: t0}
	name := map[string]any{"name": "Acme"}
	if s.noName {
		name = map[string]any{}
	}
	w.Data = []map[string]any{name, {"spend": s.spend}}
	return w
}

type want struct {
	err      string
	state    State
	step     int
	stage    int // 0-based
	approver int
	outcome  Outcome
	events   []string
	effects  []kernel.EffectKind
}

var errKinds = map[string]apperr.Kind{
	CodeInvalidState:      apperr.KindConflict,
	CodeRulesFailed:       apperr.KindConflict,
	CodeNoFurtherApprover: apperr.KindConflict,
	CodeNotApprover:       apperr.KindForbidden,
	CodeInvalidRequest:    apperr.KindInvalid,
	"record_invalid":      apperr.KindInvalid,
	CodeInvalidStep:       apperr.KindInvalid,
	CodeApproverNotNamed:  apperr.KindForbidden,
}

func fails(code string) want { return want{err: code} }

var (
	first  = Approver{Index: 0, Hash: "h-f1"}
	second = Approver{Index: 1, Hash: "h-f2"}
	role   = Approver{Index: -1, Hash: "h-role"}
	item   = []ChangeRequest{{Message: "Spend looks wrong", FieldKey: "spend", Severity: "error", DueDate: "2026-03-10"}}
)

type eff = kernel.EffectKind

func TestTransitions(t *testing.T) {
	t.Parallel()
	flow, gov, open, openGov := schemas(t)
	now := t0.Add(time.Hour)
	ip := start{state: StateInProgress}
	final := start{state: StateInProgress, step: 1, spend: 50}
	pa := start{state: StatePendingApproval, step: 1, spend: 50, outcome: OutcomePassed}
	paLast := pa
	paLast.stage = 1
	paFailed := start{state: StatePendingApproval, step: 1, spend: 500, outcome: OutcomeFailed}
	all := []State{StateInProgress, StatePendingApproval, StateValidationFailed, StateChangesRequested, StateSealing,
		StateComplete, StateRejected, StateCancelled}
	type row struct {
		name string
		sc   *Schema
		from start
		call func(w *Workflow, s *Schema) (kernel.Change, error)
		want want
	}
	save := func(step int, d map[string]any) func(*Workflow, *Schema) (kernel.Change, error) {
		return func(w *Workflow, s *Schema) (kernel.Change, error) { return w.SaveStep(s, step, d, now) }
	}
	advance := func(w *Workflow, s *Schema) (kernel.Change, error) { return w.Advance(s, now) }
	fix := func(w *Workflow, s *Schema) (kernel.Change, error) { return w.FixValidation(s, now) }
	approve := func(a Approver) func(*Workflow, *Schema) (kernel.Change, error) {
		return func(w *Workflow, _ *Schema) (kernel.Change, error) { return w.Approve(a, "ok", now) }
	}
	rejectBy := func(a Approver) func(*Workflow, *Schema) (kernel.Change, error) {
		return func(w *Workflow, _ *Schema) (kernel.Change, error) { return w.Reject(a, "no", now) }
	}
	reject := rejectBy(first)
	changesBy := func(a Approver, items []ChangeRequest) func(*Workflow, *Schema) (kernel.Change, error) {
		return func(w *Workflow, s *Schema) (kernel.Change, error) { return w.RequestChanges(s, a, items, now) }
	}
	changes := func(items []ChangeRequest) func(*Workflow, *Schema) (kernel.Change, error) {
		return changesBy(first, items)
	}
	governance := func(d, j string) func(*Workflow, *Schema) (kernel.Change, error) {
		return func(w *Workflow, _ *Schema) (kernel.Change, error) { return w.GovernanceDecision(first, d, j, now) }
	}
	escalate := func(w *Workflow, s *Schema) (kernel.Change, error) { return w.Escalate(s, now) }
	cancel := func(w *Workflow, _ *Schema) (kernel.Change, error) { return w.Cancel(now) }
	seal := func(w *Workflow, s *Schema) (kernel.Change, error) { return w.Seal(s, Sealer{}, now) }
	complete := func(w *Workflow, _ *Schema) (kernel.Change, error) {
		return w.Complete("signed/workflows/wf.pdf", "sha256:00", now)
	}
	sealFailed := func(w *Workflow, _ *Schema) (kernel.Change, error) { return w.SealFailed("sealer_unavailable", now) }

	rows := []row{
		// PATCH: in-progress and changes-requested only.
		{"save in-progress", flow, ip, save(0, map[string]any{"name": "Beta"}), want{state: StateInProgress, events: []string{EvStepSaved}}},
		{"save changes-requested", flow, start{state: StateChangesRequested, step: 1, spend: 50}, save(1, map[string]any{"spend": 60.0}),
			want{state: StateChangesRequested, step: 1, events: []string{EvStepSaved}}},
		{"save a bad value", flow, ip, save(0, map[string]any{"name": strings.Repeat("x", 51)}), fails("record_invalid")},
		{"save another step's field", flow, ip, save(0, map[string]any{"spend": 1.0}), fails("record_invalid")},
		{"save no such step", flow, ip, save(2, map[string]any{}), fails(CodeInvalidStep)},
		// advance
		{"advance to the next step", flow, ip, advance, want{state: StateInProgress, step: 1, events: []string{EvAdvanced}}},
		{"advance final, passes", flow, final, advance, want{state: StatePendingApproval, step: 1, outcome: OutcomePassed,
			events: []string{EvAdvanced, EvPendingApproval}, effects: []eff{EffectNotifyApprovers}}},
		{"advance final, fails", flow, start{state: StateInProgress, step: 1, spend: 500}, advance, want{state: StateValidationFailed,
			step: 1, outcome: OutcomeFailed, events: []string{EvAdvanced, EvValidationFailed}}},
		{"advance final, required missing", flow, start{state: StateInProgress, step: 1, spend: 50, noName: true}, advance,
			want{state: StateValidationFailed, step: 1, outcome: OutcomeFailed, events: []string{EvAdvanced, EvValidationFailed}}},
		{"advance final, fails, governance", gov, start{state: StateInProgress, step: 1, spend: 500}, advance, want{state: StatePendingApproval,
			step: 1, outcome: OutcomeFailed, events: []string{EvAdvanced, EvPendingApproval}, effects: []eff{EffectNotifyApprovers}}},
		{"advance final, fails, governance without stages", openGov, start{state: StateInProgress, step: 1, spend: 500}, advance,
			want{state: StateValidationFailed, step: 1, outcome: OutcomeFailed, events: []string{EvAdvanced, EvValidationFailed}}},
		// spec "in-progress -> pending-approval" holds without approval stages too (it used to go
		// straight to sealing); no approver is named, so no approval e-mail is asked for.
		{"advance final, no stages", open, final, advance, want{state: StatePendingApproval, step: 1, outcome: OutcomePassed,
			events: []string{EvAdvanced, EvPendingApproval}}},
		{"advance from changes-requested validates again at stage 1", flow,
			start{state: StateChangesRequested, step: 1, stage: 1, approver: 0, spend: 50}, advance,
			want{state: StatePendingApproval, step: 1, stage: 0, outcome: OutcomePassed, events: []string{EvAdvanced, EvPendingApproval},
				effects: []eff{EffectNotifyApprovers}}},
		{"advance changes-requested before the final step", flow, start{state: StateChangesRequested, spend: 50}, advance,
			want{state: StateInProgress, step: 1, events: []string{EvAdvanced}}},
		// fix-validation: back at the first failing field's step (name is on step 0).
		{"fix-validation", flow, start{state: StateValidationFailed, step: 1, noName: true}, fix, want{state: StateInProgress,
			step: 0, events: []string{EvValidationReopened}}},
		// approve
		{"approve at stage 1 of 2", flow, pa, approve(first), want{state: StatePendingApproval, step: 1, stage: 1, outcome: OutcomePassed,
			events: []string{EvApproved, EvStageAdvanced}, effects: []eff{EffectNotifyApprovers}}},
		{"approve at the last stage", flow, paLast, approve(first), want{state: StateSealing, step: 1, stage: 1, outcome: OutcomePassed,
			events: []string{EvApproved, EvSealing}, effects: []eff{EffectSeal}}},
		{"approve by a role holder the stage does not name", flow, paLast, approve(role), fails(CodeApproverNotNamed)},
		{"approve by an approver not yet escalated to", flow, pa, approve(second), fails(CodeNotApprover)},
		{"approve failed rules", gov, paFailed, approve(first), fails(CodeRulesFailed)},
		// without approval stages any Workflow.Approver decides (the route checks the role)
		{"approve without stages, by an approver no stage names", open, pa, approve(role), want{state: StateSealing, step: 1,
			outcome: OutcomePassed, events: []string{EvApproved, EvSealing}, effects: []eff{EffectSeal}}},
		{"reject without stages", open, pa, rejectBy(role), want{state: StateRejected, step: 1, outcome: OutcomePassed,
			events: []string{EvRejected}, effects: []eff{EffectCallback}}},
		{"request-changes without stages", open, pa, changesBy(role, item), want{state: StateChangesRequested, step: 1,
			outcome: OutcomePassed, events: []string{EvChangesRequested}, effects: []eff{EffectNotifyParticipant}}},
		{"escalate without stages", open, pa, escalate, fails(CodeNoFurtherApprover)},
		// reject, request-changes
		{"reject", flow, pa, reject, want{state: StateRejected, step: 1, outcome: OutcomePassed, events: []string{EvRejected},
			effects: []eff{EffectCallback}}},
		{"request-changes", flow, pa, changes(item), want{state: StateChangesRequested, step: 1, outcome: OutcomePassed,
			events: []string{EvChangesRequested}, effects: []eff{EffectNotifyParticipant}}},
		{"request-changes without items", flow, pa, changes(nil), fails(CodeInvalidRequest)},
		{"request-changes bad item", flow, pa, changes([]ChangeRequest{{Message: "x", Severity: "fatal", DueDate: "10.3.2026", FieldKey: "nope"}}),
			fails(CodeInvalidRequest)},
		// governance decisions
		{"governance approve, rules passed", gov, pa, governance(DecisionApprove, ""), want{state: StatePendingApproval, step: 1, stage: 1,
			outcome: OutcomePassed, events: []string{EvGovernanceDecision, EvApproved, EvStageAdvanced}, effects: []eff{EffectNotifyApprovers}}},
		{"governance approve, rules failed", gov, paFailed, governance(DecisionApprove, ""), fails(CodeRulesFailed)},
		{"governance exception without justification", gov, paFailed, governance(DecisionApproveWithException, "  "), fails(CodeInvalidRequest)},
		{"governance exception", gov, paFailed, governance(DecisionApproveWithException, "Board minute 12"), want{state: StatePendingApproval,
			step: 1, stage: 1, outcome: OutcomeFailed, events: []string{EvGovernanceDecision, EvApproved, EvStageAdvanced},
			effects: []eff{EffectNotifyApprovers}}},
		{"governance reject", gov, paFailed, governance(DecisionReject, ""), want{state: StateRejected, step: 1, outcome: OutcomeFailed,
			events: []string{EvGovernanceDecision, EvRejected}, effects: []eff{EffectCallback}}},
		{"governance unknown decision", gov, pa, governance("maybe", ""), fails(CodeInvalidRequest)},
		// escalate
		{"escalate", flow, pa, escalate, want{state: StatePendingApproval, step: 1, approver: 1, outcome: OutcomePassed,
			events: []string{EvEscalated}, effects: []eff{EffectNotifyApprovers}}},
		{"escalate at the end", flow, start{state: StatePendingApproval, step: 1, approver: 1, spend: 50}, escalate, fails(CodeNoFurtherApprover)},
		{"approve after escalation", flow, start{state: StatePendingApproval, step: 1, approver: 1, spend: 50, outcome: OutcomePassed},
			approve(second), want{state: StatePendingApproval, step: 1, stage: 1, outcome: OutcomePassed,
				events: []string{EvApproved, EvStageAdvanced}, effects: []eff{EffectNotifyApprovers}}},
		{"escalated-past approver", flow, start{state: StatePendingApproval, step: 1, approver: 1, spend: 50}, approve(first), fails(CodeNotApprover)},
		// seal, complete
		{"seal retry", flow, start{state: StateSealing, step: 1, spend: 50}, seal, want{state: StateSealing, step: 1,
			events: []string{EvSealing}, effects: []eff{EffectSeal}}},
		{"seal without the gate", flow, ip, seal, want{state: StateSealing, outcome: OutcomePassed,
			events: []string{EvSealing}, effects: []eff{EffectSeal}}},
		// spec "any -> sealing": failing data are sealed too (they used to be 409 rules_failed),
		// with the failed outcome kept for the sealed record.
		{"seal failing data", flow, start{state: StateInProgress, spend: 500}, seal, want{state: StateSealing, outcome: OutcomeFailed,
			events: []string{EvSealing}, effects: []eff{EffectSeal}}},
		{"seal validation-failed", flow, start{state: StateValidationFailed, step: 1, spend: 500, outcome: OutcomeFailed}, seal,
			want{state: StateSealing, step: 1, outcome: OutcomeFailed, events: []string{EvSealing}, effects: []eff{EffectSeal}}},
		{"seal an exception still to decide", gov, paFailed, seal, want{state: StateSealing, step: 1, outcome: OutcomeFailed,
			events: []string{EvSealing}, effects: []eff{EffectSeal}}},
		{"seal failed", flow, start{state: StateSealing}, sealFailed, want{state: StateSealing, events: []string{EvSealFailed}}},
		{"complete", flow, start{state: StateSealing}, complete, want{state: StateComplete, events: []string{EvCompleted},
			effects: []eff{EffectCallback, EffectAutoTrigger}}},
	}
	// every state: cancel where live, refusals elsewhere.
	for _, st := range all {
		from := start{state: st, step: 1, spend: 50}
		live := st != StateSealing && !st.Terminal()
		w := fails(CodeInvalidState)
		if live {
			w = want{state: StateCancelled, step: 1, events: []string{EvCancelled}, effects: []eff{EffectCallback}}
		}
		rows = append(rows, row{"cancel " + string(st), flow, from, cancel, w})
		if st != StateInProgress && st != StateChangesRequested {
			rows = append(rows, row{"save " + string(st), flow, from, save(0, map[string]any{"name": "X"}), fails(CodeInvalidState)},
				row{"advance " + string(st), flow, from, advance, fails(CodeInvalidState)})
		}
		if st != StatePendingApproval {
			rows = append(rows, row{"approve " + string(st), flow, from, approve(first), fails(CodeInvalidState)},
				row{"reject " + string(st), flow, from, reject, fails(CodeInvalidState)},
				row{"request-changes " + string(st), flow, from, changes(item), fails(CodeInvalidState)},
				row{"governance " + string(st), gov, from, governance(DecisionReject, ""), fails(CodeInvalidState)},
				row{"escalate " + string(st), flow, from, escalate, fails(CodeInvalidState)})
		}
		if st != StateValidationFailed {
			rows = append(rows, row{"fix-validation " + string(st), flow, from, fix, fails(CodeInvalidState)})
		}
		if st != StateSealing {
			rows = append(rows, row{"complete " + string(st), flow, from, complete, fails(CodeInvalidState)},
				row{"seal failed " + string(st), flow, from, sealFailed, fails(CodeInvalidState)})
		}
		if st.Terminal() {
			rows = append(rows, row{"seal " + string(st), flow, from, seal, fails(CodeInvalidState)})
		} else if st != StateSealing {
			rows = append(rows, row{"seal " + string(st), flow, from, seal, want{state: StateSealing, step: 1, outcome: OutcomePassed,
				events: []string{EvSealing}, effects: []eff{EffectSeal}}})
		}
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			w := r.from.build(r.sc)
			before := r.from.build(r.sc)
			c, err := r.call(w, r.sc)
			if r.want.err != "" {
				e, ok := apperr.As(err)
				if !ok || e.Code != r.want.err || e.Kind != errKinds[r.want.err] {
					t.Fatalf("err = %v, want %s", err, r.want.err)
				}
				if !reflect.DeepEqual(w, before) || !c.Empty() {
					t.Fatalf("a refused transition changed the workflow or returned a change: %+v %+v", w, c)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := want{state: w.State, step: w.Step, stage: w.Stage, approver: w.Approver, outcome: w.Outcome}
			for _, e := range c.Events {
				got.events = append(got.events, e.Kind)
				if e.Slot != kernel.NoSlot || !e.At.Equal(now) {
					t.Errorf("event %s: slot %d at %v", e.Kind, e.Slot, e.At)
				}
				assertNoPersonalData(t, e.Data)
			}
			for _, f := range c.Effects {
				got.effects = append(got.effects, f.Kind)
			}
			exp := r.want
			exp.err = ""
			if !reflect.DeepEqual(got, exp) {
				t.Fatalf("got  %+v\nwant %+v", got, exp)
			}
		})
	}
}

// assertNoPersonalData: audit data hold no value, comment, justification or address.
func assertNoPersonalData(t *testing.T, data map[string]any) {
	t.Helper()
	for k, v := range data {
		s, _ := v.(string)
		for _, bad := range []string{"@", "Acme", "Board minute", "ok", "Spend looks"} {
			if s != "" && strings.Contains(s, bad) && k != "approverHash" {
				t.Errorf("audit data %s = %q holds personal data", k, s)
			}
		}
	}
}
