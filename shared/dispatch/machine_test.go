package dispatch

// The batch machine as a table, without storage: every state x every event the machine
// exports, with the resulting state, the audit events in order and the effects asked for, or
// the refusal's status and code. The expectations are written out from the spec's "Batch
// states" rows and the machine's documented errors, never computed by the machine; a refused
// event must leave the batch and its record untouched and produce no event.

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/kernel"
)

var bNow = time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)

// batchIn is a batch in state st: two ready records, the first processed (the second one
// pending), submitted by "submitter".
func batchIn(st State) (*Batch, *Record) {
	b := &Batch{BatchID: "b1", CorrelationID: "c1", SubmittedBy: "submitter", State: st, Readiness: ReadyAll,
		DocumentCount: 2, ReadyCount: 2, ProcessedCount: 1, CreatedAt: bNow.Add(-time.Hour), UpdatedAt: bNow.Add(-time.Hour)}
	return b, &Record{BatchID: "b1", Index: 1, Status: RecordReady, State: RecordPending}
}

// outcome is "<state>: <event kinds> [<effects>]" for an accepted event, "<status> <code>" for a
// refused one.
func outcome(b *Batch, c kernel.Change, err error) string {
	if err != nil {
		e, _ := apperr.As(err)
		code := ""
		if e != nil {
			code = e.Code
		}
		return fmt.Sprintf("%d %s", apperr.KindOf(err).Status(), code)
	}
	var kinds, effects []string
	for _, e := range c.Events {
		kinds = append(kinds, e.Kind)
	}
	for _, e := range c.Effects {
		effects = append(effects, string(e.Kind))
	}
	return fmt.Sprintf("%s: %s [%s]", b.State, strings.Join(kinds, " "), strings.Join(effects, " "))
}

// batchEvents are the machine's events on a batch (and its pending record).
var batchEvents = []struct {
	name string
	do   func(b *Batch, r *Record) (kernel.Change, error)
}{
	{"approve", func(b *Batch, _ *Record) (kernel.Change, error) {
		return Decide(b, DecisionApprove, "approver", "ok", false, bNow)
	}},
	{"reject", func(b *Batch, _ *Record) (kernel.Change, error) {
		return Decide(b, DecisionReject, "approver", "no", false, bNow)
	}},
	{"request_changes", func(b *Batch, _ *Record) (kernel.Change, error) {
		return Decide(b, DecisionRequestChanges, "approver", "fix row 2", false, bNow)
	}},
	{"unknown_decision", func(b *Batch, _ *Record) (kernel.Change, error) {
		return Decide(b, Decision("maybe"), "approver", "", false, bNow)
	}},
	{"self_approve", func(b *Batch, _ *Record) (kernel.Change, error) {
		return Decide(b, DecisionApprove, "submitter", "", false, bNow)
	}},
	{"self_approve_allowed", func(b *Batch, _ *Record) (kernel.Change, error) {
		return Decide(b, DecisionApprove, "submitter", "", true, bNow)
	}},
	{"cancel", func(b *Batch, _ *Record) (kernel.Change, error) { return Cancel(b, bNow) }},
	{"start", func(b *Batch, _ *Record) (kernel.Change, error) { return StartProcessing(b, bNow) }},
	{"record_done", func(b *Batch, r *Record) (kernel.Change, error) {
		return Processed(b, r, Outcome{CorrelationID: "c1-2", DocumentID: "d2"}, bNow)
	}},
	{"record_failed", func(b *Batch, r *Record) (kernel.Change, error) {
		return Processed(b, r, Outcome{CorrelationID: "c1-2", Err: "render_failed"}, bNow)
	}},
	{"record_again", func(b *Batch, r *Record) (kernel.Change, error) {
		r.State = RecordDone // a redelivered record message
		return Processed(b, r, Outcome{CorrelationID: "c1-2"}, bNow)
	}},
	{"finish_early", func(b *Batch, _ *Record) (kernel.Change, error) { return Finish(b, "", "", bNow) }},
	{"finish", func(b *Batch, _ *Record) (kernel.Change, error) {
		b.ProcessedCount = 2
		return Finish(b, "", "", bNow)
	}},
	{"finish_with_failure", func(b *Batch, _ *Record) (kernel.Change, error) {
		b.ProcessedCount, b.ErrorCount = 2, 1
		return Finish(b, "", "", bNow)
	}},
}

const (
	notDecidable  = "409 invalid_state"
	notQueued     = "409 batch_not_queued"
	notProcessing = "409 batch_not_processing"
)

// refusedAll is the row of a state that no event acts on.
var refusedAll = map[string]string{
	"approve": notDecidable, "reject": notDecidable, "request_changes": notDecidable, "unknown_decision": notDecidable,
	"self_approve": notDecidable, "self_approve_allowed": notDecidable, "cancel": notDecidable, "start": notQueued,
	"record_done": notProcessing, "record_failed": notProcessing, "record_again": notProcessing,
	"finish_early": notProcessing, "finish": notProcessing, "finish_with_failure": notProcessing,
}

// decidable is the row of pending-approval and changes-requested.
var decidable = map[string]string{
	"approve":              "queued: batch.approved batch.queued [enqueue]",
	"reject":               "rejected: batch.rejected []",
	"request_changes":      "changes-requested: batch.changes_requested []",
	"unknown_decision":     "400 invalid_request",
	"self_approve":         "403 self_approval",
	"self_approve_allowed": "queued: batch.approved batch.queued [enqueue]",
	"cancel":               "cancelled: batch.cancelled []",
	"start":                notQueued, "record_done": notProcessing, "record_failed": notProcessing,
	"record_again": notProcessing, "finish_early": notProcessing, "finish": notProcessing, "finish_with_failure": notProcessing,
}

// with is row with some cells replaced.
func with(row map[string]string, cells map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range row {
		out[k] = v
	}
	for k, v := range cells {
		out[k] = v
	}
	return out
}

var batchTable = map[State]map[string]string{
	StatePendingApproval:  decidable,
	StateChangesRequested: decidable,
	StateInvalid:          refusedAll,
	StateApproved:         refusedAll, // a moment inside the approve, never stored
	StateQueued:           with(refusedAll, map[string]string{"start": "processing: batch.processing []"}),
	StateProcessing: with(refusedAll, map[string]string{
		"record_done":         "processing: batch.record_processed [finish]",
		"record_failed":       "processing: batch.record_failed [finish]",
		"record_again":        "409 record_already_processed",
		"finish_early":        "409 records_outstanding",
		"finish":              "completed: batch.completed [notify_submitter]",
		"finish_with_failure": "partially-failed: batch.partially_failed [notify_submitter]",
	}),
	StateCompleted:       refusedAll,
	StatePartiallyFailed: refusedAll,
	StateRejected:        refusedAll,
	StateCancelled:       refusedAll,
}

func TestBatchTransitions(t *testing.T) {
	t.Parallel()
	if len(batchTable) != len(States) {
		t.Fatalf("the table has %d states, the machine %d", len(batchTable), len(States))
	}
	for _, st := range States {
		row, ok := batchTable[st]
		if !ok {
			t.Fatalf("state %s has no row", st)
		}
		for _, ev := range batchEvents {
			t.Run(string(st)+"/"+ev.name, func(t *testing.T) {
				t.Parallel()
				want, ok := row[ev.name]
				if !ok {
					t.Fatalf("no expectation for %s in %s", ev.name, st)
				}
				b, r := batchIn(st)
				ch, err := ev.do(b, r)
				if got := outcome(b, ch, err); got != want {
					t.Fatalf("%s in %s: %s, want %s", ev.name, st, got, want)
				}
				if err != nil {
					before, rb := batchIn(st)
					if ev.name == "record_again" {
						rb.State = RecordDone
					}
					// the setup of an event may set counters before it is refused: only state,
					// times and events matter here
					if b.State != before.State || !b.UpdatedAt.Equal(before.UpdatedAt) || !reflect.DeepEqual(r, rb) || len(ch.Events)+len(ch.Effects) != 0 {
						t.Fatalf("a refused %s changed the batch or record: %+v %+v %v", ev.name, b, r, ch)
					}
				}
			})
		}
	}
}

// A decision records the decider, the comments and the time; the pickup and the finish their
// times; a processed record its outcome and the batch's counters.
func TestBatchTransitionFields(t *testing.T) {
	t.Parallel()
	b, _ := batchIn(StatePendingApproval)
	if _, err := Decide(b, DecisionApprove, "approver", "ok", false, bNow); err != nil {
		t.Fatal(err)
	}
	if b.ApprovedBy != "approver" || b.DecisionComments != "ok" || !b.DecidedAt.Equal(bNow) || !b.QueuedAt.Equal(bNow) {
		t.Fatalf("after approve: %+v", b)
	}
	b, r := batchIn(StateProcessing)
	ch, err := Processed(b, r, Outcome{CorrelationID: "c1-2", Err: "render_failed"}, bNow)
	if err != nil || b.ProcessedCount != 2 || b.ErrorCount != 1 || r.State != RecordFailed || r.Error != "render_failed" ||
		!reflect.DeepEqual(ch.Slots, []int{1}) || ch.Events[0].Slot != 1 {
		t.Fatalf("after a failed record: %v %+v %+v %+v", err, b, r, ch)
	}
	if _, err := Finish(b, "documents/dispatch/b1/combined.pdf", "", bNow); err != nil || b.CombinedPath != "documents/dispatch/b1/combined.pdf" || !b.CompletedAt.Equal(bNow) {
		t.Fatalf("finish: %v %+v", err, b)
	}
}

// Submit: invalid when a record is invalid, pending-approval (approvers notified) when
// approval is required, else queued at once.
func TestBatchSubmit(t *testing.T) {
	t.Parallel()
	ready := Record{Status: RecordReady}
	warned := Record{Status: RecordReady, Warning: true}
	invalid := Record{Status: RecordInvalid}
	for _, tc := range []struct {
		name     string
		records  []Record
		approval bool
		want     string
		counts   [4]int // document, ready, failed, warning
		ready    Readiness
	}{
		{"an invalid record", []Record{ready, invalid}, true, "invalid: batch.submitted batch.invalid []", [4]int{2, 1, 1, 0}, ReadyInvalid},
		{"approval required", []Record{ready, warned}, true, "pending-approval: batch.submitted batch.pending_approval [notify_approvers]", [4]int{2, 2, 0, 1}, ReadyPartial},
		{"auto-approved", []Record{ready}, false, "queued: batch.submitted batch.queued [enqueue]", [4]int{1, 1, 0, 0}, ReadyAll},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := &Batch{BatchID: "b1"}
			ch := Submit(b, tc.records, tc.approval, bNow)
			if got := outcome(b, ch, nil); got != tc.want {
				t.Fatalf("%s, want %s", got, tc.want)
			}
			if got := [4]int{b.DocumentCount, b.ReadyCount, b.FailedCount, b.WarningCount}; got != tc.counts || b.Readiness != tc.ready {
				t.Fatalf("counts %v %s, want %v %s", got, b.Readiness, tc.counts, tc.ready)
			}
		})
	}
}
