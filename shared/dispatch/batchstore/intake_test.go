package batchstore_test

// Issue 26: a failed intake leaves no record rows behind. The store's half: DeleteRecords
// removes a batch's record rows (more than one transaction's worth) and nothing else, and the
// intake schedule's sweep (dispatch.IntakeSweep on this store) removes an orphan partition's
// rows and blobs while a stored batch is untouched.

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/dispatch"
	"github.com/esign-svc/esign/shared/dispatch/batchstore"
	"github.com/esign-svc/esign/shared/dispatch/batchstore/storetest"
)

// DeleteIfExists makes memBlobs a dispatch.BlobDeleter.
func (m memBlobs) DeleteIfExists(_ context.Context, container, name string) error {
	delete(m, container+"/"+name)
	return nil
}

// orphanRecords stores n record rows of a batch that gets no batch row (an intake that died).
func orphanRecords(t *testing.T, st *batchstore.Store, batchID string, n int) {
	t.Helper()
	recs := make([]dispatch.Record, n)
	for i := range recs {
		recs[i] = dispatch.Record{BatchID: batchID, Index: i, Status: dispatch.RecordReady, State: dispatch.RecordPending, DataEnc: "enc"}
	}
	for from := 0; from < n; from += dispatch.RecordChunk {
		if err := st.CreateRecords(context.Background(), batchID, recs[from:min(from+dispatch.RecordChunk, n)]); err != nil {
			t.Fatal(err)
		}
	}
}

// recordCount is how many record rows the batch partition holds (paged through Records).
func recordCount(t *testing.T, st *batchstore.Store, batchID string) int {
	t.Helper()
	n, after := 0, ""
	for {
		p, err := st.Records(context.Background(), batchID, "", after, 1000)
		if err != nil {
			t.Fatal(err)
		}
		n += len(p.Records)
		if p.Next == "" {
			return n
		}
		after = p.Next
	}
}

func TestDeleteRecordsRemovesEveryRecordRowOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	orphan := uuid.NewString()
	orphanRecords(t, st, orphan, 250)
	n, err := st.DeleteRecords(ctx, orphan)
	if err != nil || n != 250 {
		t.Fatalf("DeleteRecords = %d, %v; want 250", n, err)
	}
	if got := recordCount(t, st, orphan); got != 0 {
		t.Fatalf("%d record rows left", got)
	}
	if n, err := st.DeleteRecords(ctx, orphan); err != nil || n != 0 {
		t.Fatalf("DeleteRecords again = %d, %v; want 0, nil", n, err)
	}
	// a stored batch: its record rows go, its batch row, counters and events stay (the caller
	// deletes only a batch without a batch row; this pins that nothing else is touched)
	b, _ := newBatch(t, st, "t1", 120, false, false)
	if n, err := st.DeleteRecords(ctx, b.BatchID); err != nil || n != 120 {
		t.Fatalf("DeleteRecords of a stored batch = %d, %v; want 120", n, err)
	}
	got, err := st.Load(ctx, b.BatchID)
	if err != nil || got.ReadyCount != 120 {
		t.Fatalf("batch row after DeleteRecords: %+v, %v", got, err)
	}
	if evs, err := st.Events(ctx, b.BatchID); err != nil || len(evs) == 0 {
		t.Fatalf("events after DeleteRecords: %d, %v", len(evs), err)
	}
}

// TestIntakeSweepRemovesAnOrphanAndLeavesAStoredBatch: two intakes put on the schedule an hour
// ago; one died after storing 150 record rows and two blobs, the other stored its batch. The
// sweep deletes the orphan's rows and blobs, leaves the stored batch with all its records and
// blobs, and forgets both entries (the next run finds nothing). Before the entry is due nothing
// is touched.
func TestIntakeSweepRemovesAnOrphanAndLeavesAStoredBatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	blobs := memBlobs{}
	start := time.Now().UTC()

	dead := &dispatch.Batch{BatchID: uuid.NewString(), TenantID: "t-" + uuid.NewString()}
	orphanRecords(t, st, dead.BatchID, 150)
	stored, _ := newBatch(t, st, "t1", 30, false, false)
	for _, b := range []*dispatch.Batch{dead, stored} {
		if err := st.Intakes().Add(ctx, dispatch.IntakeEntry(b), start.Add(dispatch.IntakeSafeAge)); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"/records.jsonl", "/receipt.json"} {
			blobs[dispatch.ContainerDispatch+"/"+b.TenantID+"/"+b.BatchID+name] = []byte("x")
		}
		blobs[dispatch.ContainerReceipts+"/"+b.TenantID+"/"+b.BatchID+".pdf"] = []byte("x")
	}
	sweep := &dispatch.IntakeSweep{Schedule: st.Intakes(), Store: st, Blobs: blobs}

	early, err := sweep.Run(ctx, start.Add(dispatch.IntakeSafeAge-time.Minute), 100)
	if err != nil || early.Checked != 0 || recordCount(t, st, dead.BatchID) != 150 {
		t.Fatalf("run before the safe age: %+v, %v", early, err)
	}
	run, err := sweep.Run(ctx, start.Add(dispatch.IntakeSafeAge+time.Minute), 100)
	if err != nil {
		t.Fatal(err)
	}
	if run.Checked != 2 || run.Sent != 1 {
		t.Fatalf("run = %+v; want 2 entries checked, 1 intake discarded", run)
	}
	if got := recordCount(t, st, dead.BatchID); got != 0 {
		t.Errorf("the orphan keeps %d record rows", got)
	}
	if got := recordCount(t, st, stored.BatchID); got != 30 {
		t.Errorf("the stored batch has %d record rows, want 30", got)
	}
	if _, err := st.Load(ctx, stored.BatchID); err != nil {
		t.Errorf("the stored batch: %v", err)
	}
	for name := range blobs {
		if strings.Contains(name, dead.BatchID) {
			t.Errorf("the orphan's blob %s is left", name)
		}
	}
	if len(blobs) != 3 {
		t.Errorf("blobs left %d, want the stored batch's 3", len(blobs))
	}
	if due, err := st.Intakes().Due(ctx, start.Add(2*dispatch.IntakeSafeAge), 100); err != nil || len(due) != 0 {
		t.Errorf("entries left after the sweep: %+v, %v", due, err)
	}
}

// TestIntakeSweepKeepsTheEntryOfAFailedCheck: a store that cannot tell whether the batch row
// exists keeps the entry (the next run tries again) and deletes nothing.
func TestIntakeSweepKeepsTheEntryOfAFailedCheck(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	start := time.Now().UTC()
	dead := &dispatch.Batch{BatchID: uuid.NewString(), TenantID: "t1"}
	orphanRecords(t, st, dead.BatchID, 5)
	if err := st.Intakes().Add(ctx, dispatch.IntakeEntry(dead), start); err != nil {
		t.Fatal(err)
	}
	sweep := &dispatch.IntakeSweep{Schedule: st.Intakes(), Store: failingLoad{st}, Blobs: memBlobs{}}
	run, err := sweep.Run(ctx, start.Add(time.Minute), 100)
	if err == nil || run.Checked != 0 {
		t.Fatalf("run = %+v, %v; want the load's error and nothing checked", run, err)
	}
	if got := recordCount(t, st, dead.BatchID); got != 5 {
		t.Errorf("record rows %d, want 5", got)
	}
	due, err := st.Intakes().Due(ctx, start.Add(time.Minute), 100)
	if err != nil || len(due) != 1 || due[0].ID != dispatch.IntakeEntry(dead) || !due[0].At.Equal(start) {
		t.Errorf("entries = %+v, %v; want the one kept", due, err)
	}
}

type failingLoad struct{ *batchstore.Store }

func (failingLoad) Load(context.Context, string) (*dispatch.Batch, error) {
	return nil, context.DeadlineExceeded
}
