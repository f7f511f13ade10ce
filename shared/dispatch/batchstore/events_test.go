package batchstore_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/dispatch"
	"github.com/esign-svc/esign/shared/dispatch/batchstore/storetest"
	"github.com/esign-svc/esign/shared/kernel"
)

// A batch's life through the store (submitted for approval, approved, picked up, its records
// processed, one failing, finished) writes its audit trail: read back, the kinds come in the
// order the spec's batch states are passed, record events carry the record's index as their
// slot, and the failed record's event names its error.
func TestBatchLifeAuditEvents(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	b, _ := newBatch(t, st, "tenant-events", 3, true, false)
	at := func(minutes int) time.Time { return now.Add(time.Duration(minutes) * time.Minute) }
	steps := []func(*dispatch.Batch) (dispatch.Change, error){
		func(b *dispatch.Batch) (dispatch.Change, error) {
			return dispatch.Decide(b, dispatch.DecisionApprove, "oid-approver", "fine", false, at(1))
		},
		func(b *dispatch.Batch) (dispatch.Change, error) { return dispatch.StartProcessing(b, at(2)) },
	}
	for i, step := range steps {
		if _, _, err := st.Update(ctx, b.BatchID, step); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	for i, o := range []dispatch.Outcome{{CorrelationID: "c-0", DocumentID: "d-0"}, {CorrelationID: "c-1", Err: "render_failed"}, {CorrelationID: "c-2", DocumentID: "d-2"}} {
		if _, _, err := st.Processed(ctx, b.BatchID, i, o, at(3+i)); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
	}
	// A redelivered record message writes nothing.
	if _, _, err := st.Processed(ctx, b.BatchID, 0, dispatch.Outcome{CorrelationID: "c-0"}, at(7)); !errors.Is(err, dispatch.ErrRecordDone) {
		t.Fatalf("redelivered record: %v, want ErrRecordDone", err)
	}
	// the finish through its use case: the counters are on the store's shards, summed by it
	uc := &dispatch.Batches{Store: st, Now: func() time.Time { return at(8) }}
	if _, _, err := uc.Finish(ctx, b.TenantID, b.BatchID, dispatch.Actor{Kind: "system", ID: "dispatch"}, dispatch.Artifacts{}); err != nil {
		t.Fatalf("finish: %v", err)
	}

	evs, err := st.Events(ctx, b.BatchID)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range evs {
		kinds = append(kinds, e.Kind)
	}
	want := []string{"batch.submitted", "batch.pending_approval", "batch.approved", "batch.queued", "batch.processing",
		"batch.record_processed", "batch.record_failed", "batch.record_processed", "batch.partially_failed"}
	if !slices.Equal(kinds, want) {
		t.Fatalf("events %v\nwant %v", kinds, want)
	}
	wantSlots := []int{kernel.NoSlot, kernel.NoSlot, kernel.NoSlot, kernel.NoSlot, kernel.NoSlot, 0, 1, 2, kernel.NoSlot}
	for i, e := range evs {
		if e.Slot != wantSlots[i] {
			t.Errorf("%s: slot %d, want %d", e.Kind, e.Slot, wantSlots[i])
		}
	}
	if evs[2].Data["decision"] != "approve" || evs[2].Data["comments"] != "fine" {
		t.Errorf("approved: %v", evs[2].Data)
	}
	if evs[6].Data["error"] != "render_failed" || evs[6].Data["correlationId"] != "c-1" {
		t.Errorf("record_failed: %v", evs[6].Data)
	}
	if !evs[2].At.Equal(at(1)) || !evs[8].At.Equal(at(8)) {
		t.Errorf("times %s %s, want %s %s", evs[2].At, evs[8].At, at(1), at(8))
	}
}
