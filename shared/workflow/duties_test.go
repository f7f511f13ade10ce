package workflow

// Separation of duties (DESIGN 14) as a table: the creator may not decide, a person decides at
// most one stage of a round (the same oid or the same e-mail, through a JWT or a reviewer link),
// only a stage's named approver decides it, an admin stands in only with a reason, and
// WORKFLOW_ALLOW_SELF_APPROVAL lifts the first rule only. Expectations come from DESIGN 14.

import (
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/kernel"
)

func TestDuties(t *testing.T) {
	t.Parallel()
	flow, gov, open, _ := schemas(t)
	now := t0.Add(time.Hour)
	const creatorOID, creatorHash = "oid-creator", "h-creator"
	// who decided stage 1 of round 1: a JWT (oid and hash) or a reviewer link (hash only).
	decidedByJWT := Decision{Stage: 1, Round: 1, ApproverOID: "oid-f1", ApproverHash: "h-f1", Decision: DecisionApprove, At: t0}
	decidedByLink := Decision{Stage: 1, Round: 1, ApproverHash: "h-f1", Decision: DecisionApprove, At: t0}
	earlierRound := Decision{Stage: 1, Round: 0, ApproverOID: "oid-l1", ApproverHash: "h-l1", Decision: DecisionRequestChanges, At: t0}

	type row struct {
		name      string
		sc        *Schema
		stage     int
		decisions []Decision
		by        Approver
		decide    string // approve, reject, changes, governance
		err       string
		standIn   string // the reason the decision keeps
	}
	rows := []row{
		// the creator, by oid or by e-mail, JWT or reviewer link, every kind of decision
		{name: "creator approves (oid)", by: Approver{Index: 0, OID: creatorOID, Hash: "h-other"}, decide: "approve", err: CodeSelfApproval},
		{name: "creator approves (e-mail)", by: Approver{Index: 0, OID: "oid-other", Hash: creatorHash}, decide: "approve", err: CodeSelfApproval},
		{name: "creator rejects by reviewer link", by: Approver{Index: 0, Hash: creatorHash}, decide: "reject", err: CodeSelfApproval},
		{name: "creator requests changes", by: Approver{Index: 0, Hash: creatorHash}, decide: "changes", err: CodeSelfApproval},
		{name: "creator governance decision", sc: gov, by: Approver{Index: 0, Hash: creatorHash}, decide: "governance", err: CodeSelfApproval},
		{name: "creator as admin with a reason", by: Approver{Index: -1, OID: creatorOID, Admin: true, Reason: "cover"}, decide: "approve", err: CodeSelfApproval},
		{name: "self-approval setting lets the creator decide", by: Approver{Index: 0, OID: creatorOID, Hash: "h-f1", AllowSelf: true}, decide: "approve"},
		// the same person at a second stage
		{name: "second stage, same oid (JWT after JWT)", stage: 1, decisions: []Decision{decidedByJWT},
			by: Approver{Index: 0, OID: "oid-f1", Hash: "h-l1"}, decide: "approve", err: CodeStageAlreadyDecided},
		{name: "second stage, same e-mail (JWT after JWT)", stage: 1, decisions: []Decision{decidedByJWT},
			by: Approver{Index: 0, OID: "oid-l1", Hash: "h-f1"}, decide: "approve", err: CodeStageAlreadyDecided},
		{name: "second stage, reviewer link after JWT", stage: 1, decisions: []Decision{decidedByJWT},
			by: Approver{Index: 0, Hash: "h-f1"}, decide: "reject", err: CodeStageAlreadyDecided},
		{name: "second stage, JWT after reviewer link", stage: 1, decisions: []Decision{decidedByLink},
			by: Approver{Index: 0, OID: "oid-f1", Hash: "h-f1"}, decide: "approve", err: CodeStageAlreadyDecided},
		{name: "second stage, governance by link after link", sc: gov, stage: 1, decisions: []Decision{decidedByLink},
			by: Approver{Index: 0, Hash: "h-f1"}, decide: "governance", err: CodeStageAlreadyDecided},
		{name: "second stage, self-approval setting does not lift it", stage: 1, decisions: []Decision{decidedByJWT},
			by: Approver{Index: 0, OID: "oid-f1", Hash: "h-f1", AllowSelf: true}, decide: "approve", err: CodeStageAlreadyDecided},
		{name: "second stage, another person", stage: 1, decisions: []Decision{decidedByJWT},
			by: Approver{Index: 0, OID: "oid-l1", Hash: "h-l1"}, decide: "approve"},
		{name: "a decision of an earlier round does not count", stage: 0, decisions: []Decision{earlierRound},
			by: Approver{Index: 0, OID: "oid-l1", Hash: "h-l1"}, decide: "approve"},
		// named approvers
		{name: "unnamed approver", by: Approver{Index: -1, OID: "oid-x", Hash: "h-x"}, decide: "approve", err: CodeApproverNotNamed},
		{name: "unnamed approver rejects", by: Approver{Index: -1, OID: "oid-x", Hash: "h-x"}, decide: "reject", err: CodeApproverNotNamed},
		{name: "self-approval setting does not lift the named rule", by: Approver{Index: -1, OID: "oid-x", AllowSelf: true}, decide: "approve",
			err: CodeApproverNotNamed},
		{name: "named approver", by: Approver{Index: 0, OID: "oid-f1", Hash: "h-f1"}, decide: "approve"},
		{name: "admin stand-in without a reason", by: Approver{Index: -1, OID: "oid-admin", Admin: true, Reason: "  "}, decide: "approve",
			err: CodeReasonRequired},
		{name: "admin stand-in with a reason", by: Approver{Index: -1, OID: "oid-admin", Admin: true, Reason: "Approver on leave"},
			decide: "approve", standIn: "Approver on leave"},
		// without approval stages nobody is named: any approver but the creator decides
		{name: "no stages, an approver", sc: open, by: Approver{Index: -1, OID: "oid-x", Hash: "h-x"}, decide: "approve"},
		{name: "no stages, an approver rejects", sc: open, by: Approver{Index: -1, OID: "oid-x", Hash: "h-x"}, decide: "reject"},
		{name: "no stages, an approver requests changes", sc: open, by: Approver{Index: -1, OID: "oid-x", Hash: "h-x"}, decide: "changes"},
		{name: "no stages, an admin needs no reason", sc: open, by: Approver{Index: -1, OID: "oid-admin", Admin: true}, decide: "approve"},
		{name: "no stages, the creator", sc: open, by: Approver{Index: -1, OID: creatorOID}, decide: "approve", err: CodeSelfApproval},
		{name: "no stages, the creator by e-mail", sc: open, by: Approver{Index: -1, OID: "oid-y", Hash: creatorHash}, decide: "reject",
			err: CodeSelfApproval},
		{name: "admin who is the named approver needs no reason", by: Approver{Index: 0, OID: "oid-admin", Hash: "h-f1", Admin: true},
			decide: "approve"},
	}
	kinds := map[string]apperr.Kind{CodeSelfApproval: apperr.KindForbidden, CodeStageAlreadyDecided: apperr.KindForbidden,
		CodeApproverNotNamed: apperr.KindForbidden, CodeReasonRequired: apperr.KindForbidden}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			sc := r.sc
			if sc == nil {
				sc = flow
			}
			w := start{state: StatePendingApproval, step: 1, stage: r.stage, spend: 50, outcome: OutcomePassed}.build(sc)
			w.CreatedBy, w.CreatorHash, w.Decisions = creatorOID, creatorHash, r.decisions
			before := len(w.Decisions)
			var (
				c   kernel.Change
				err error
			)
			switch r.decide {
			case "approve":
				c, err = w.Approve(r.by, "ok", now)
			case "reject":
				c, err = w.Reject(r.by, "no", now)
			case "changes":
				c, err = w.RequestChanges(sc, r.by, item, now)
			case "governance":
				c, err = w.GovernanceDecision(r.by, DecisionApprove, "", now)
			}
			if r.err != "" {
				e, ok := apperr.As(err)
				if !ok || e.Code != r.err || e.Kind != kinds[r.err] {
					t.Fatalf("err = %v, want %s", err, r.err)
				}
				if len(w.Decisions) != before || !c.Empty() || w.State != StatePendingApproval {
					t.Fatalf("a refused decision changed the workflow: %+v", w)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			d := w.Decisions[len(w.Decisions)-1]
			if d.Stage != r.stage+1 || d.ApproverOID != r.by.OID || d.ApproverHash != r.by.Hash || d.StandIn != r.standIn {
				t.Fatalf("decision %+v", d)
			}
			if r.standIn != "" && c.Events[0].Data["standInReason"] != r.standIn {
				t.Fatalf("the stand-in is not audited: %+v", c.Events[0].Data)
			}
		})
	}
}

// TestSealAroundStages: the manual seal's reason is kept and audited, bounded and checked as
// free text; around approval stages still pending of a template that locks
// workflow.schemaPath only an admin seals (DESIGN 14).
func TestSealAroundStages(t *testing.T) {
	t.Parallel()
	flow, _, open, _ := schemas(t)
	now := t0.Add(time.Hour)
	long := make([]byte, MaxReason+1)
	for i := range long {
		long[i] = 'x'
	}
	rows := []struct {
		name   string
		sc     *Schema
		state  State
		locked bool
		by     Sealer
		err    string
	}{
		{name: "initiator around pending stages, schema locked", sc: flow, state: StatePendingApproval, locked: true, by: Sealer{Reason: "urgent"},
			err: CodeSealAdminOnly},
		{name: "initiator in progress, schema locked", sc: flow, state: StateInProgress, locked: true, err: CodeSealAdminOnly},
		{name: "admin around pending stages, schema locked", sc: flow, state: StatePendingApproval, locked: true, by: Sealer{Admin: true, Reason: "Board order 7"}},
		{name: "initiator around pending stages, schema not locked", sc: flow, state: StatePendingApproval, by: Sealer{Reason: "urgent"}},
		{name: "initiator, locked schema without stages", sc: open, state: StateInProgress, locked: true},
		{name: "initiator retries a seal, schema locked", sc: flow, state: StateSealing, locked: true, by: Sealer{Reason: "retry after outage"}},
		{name: "reason too long", sc: flow, state: StatePendingApproval, by: Sealer{Admin: true, Reason: string(long)}, err: CodeInvalidRequest},
		{name: "reason with a control character", sc: flow, state: StatePendingApproval, by: Sealer{Admin: true, Reason: "a\u202eb"}, err: CodeInvalidRequest},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			w := start{state: r.state, step: 1, spend: 50, outcome: OutcomePassed}.build(r.sc)
			w.Setup.SchemaLocked = r.locked
			c, err := w.Seal(r.sc, r.by, now)
			if r.err != "" {
				e, ok := apperr.As(err)
				if !ok || e.Code != r.err || w.State != r.state || !c.Empty() {
					t.Fatalf("err = %v, want %s (state %s)", err, r.err, w.State)
				}
				if r.err == CodeSealAdminOnly && e.Kind != apperr.KindForbidden {
					t.Fatalf("kind %v", e.Kind)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if w.State != StateSealing || w.SealReason != r.by.Reason {
				t.Fatalf("state %s reason %q", w.State, w.SealReason)
			}
			ev := c.Events[len(c.Events)-1]
			if ev.Kind != EvSealing || (r.by.Reason != "" && ev.Data["sealReason"] != r.by.Reason) {
				t.Fatalf("event %+v", ev)
			}
		})
	}
}
