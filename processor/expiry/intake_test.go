package expiry

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apptest"
	"github.com/esign-svc/esign/shared/dispatch"
	"github.com/esign-svc/esign/shared/esign"
)

// intakes is the intake sweep on a fresh batch store of the test's own.
func intakes(t *testing.T) *dispatch.IntakeSweep {
	e := apptest.New(t)
	st := e.Batches()
	return &dispatch.IntakeSweep{Schedule: st.Intakes(), Store: st, Blobs: e.Blobs}
}

// TestRunDiscardsADeadIntake (issue 26): an intake that died after storing 120 record rows and
// its records' JSONL, and one that stored its batch, both on the intake schedule. The run before
// the safe age touches nothing; the run after it deletes the dead intake's record rows and blob
// and forgets both entries, the stored batch untouched.
func TestRunDiscardsADeadIntake(t *testing.T) {
	t.Parallel()
	ctx, e := context.Background(), apptest.New(t)
	st := e.Batches()
	e.Containers(dispatch.ContainerDispatch, dispatch.ContainerReceipts)
	tenant := "t-" + apptest.Hex(8)
	dead := &dispatch.Batch{BatchID: apptest.Hex(16), TenantID: tenant}
	recs := make([]dispatch.Record, 120)
	for i := range recs {
		recs[i] = dispatch.Record{BatchID: dead.BatchID, Index: i, Status: dispatch.RecordReady, State: dispatch.RecordPending, DataEnc: "enc"}
	}
	if err := st.CreateRecords(ctx, dead.BatchID, recs[:100]); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateRecords(ctx, dead.BatchID, recs[100:]); err != nil {
		t.Fatal(err)
	}
	jsonl := tenant + "/" + dead.BatchID + "/records.jsonl"
	if _, err := e.Blobs.Put(ctx, dispatch.ContainerDispatch, jsonl, bytes.NewReader([]byte("{}\n")), "application/x-ndjson", nil); err != nil {
		t.Fatal(err)
	}
	stored := &dispatch.Batch{BatchID: apptest.Hex(16), TenantID: tenant, Title: "Offers"}
	ok := []dispatch.Record{{BatchID: stored.BatchID, Status: dispatch.RecordReady, State: dispatch.RecordPending, DataEnc: "enc"}}
	if err := st.Create(ctx, stored, ok, dispatch.Submit(stored, ok, false, e.Now())); err != nil {
		t.Fatal(err)
	}
	for _, b := range []*dispatch.Batch{dead, stored} {
		if err := st.Intakes().Add(ctx, dispatch.IntakeEntry(b), e.Now().Add(dispatch.IntakeSafeAge)); err != nil {
			t.Fatal(err)
		}
	}
	sweep := &dispatch.IntakeSweep{Schedule: st.Intakes(), Store: st, Blobs: e.Blobs}
	job, err := New(Deps{Sessions: &esign.SessionJobs{Store: e.Sessions()}, Deliveries: deliveries(t), Intakes: sweep, Now: e.Now})
	if err != nil {
		t.Fatal(err)
	}
	rows := func(id string) int {
		p, err := st.Records(ctx, id, "", "", 1000)
		if err != nil {
			t.Fatal(err)
		}
		return len(p.Records)
	}

	e.Clock.Add(dispatch.IntakeSafeAge - time.Minute)
	if n, err := job.Run(ctx); err != nil || n.Intakes != 0 || rows(dead.BatchID) != 120 {
		t.Fatalf("run before the safe age: %+v, %v, %d rows", n, err, rows(dead.BatchID))
	}
	e.Clock.Add(2 * time.Minute)
	n, err := job.Run(ctx)
	if err != nil || n.Intakes != 1 {
		t.Fatalf("run = %+v, %v; want 1 intake discarded", n, err)
	}
	if got := rows(dead.BatchID); got != 0 {
		t.Errorf("the dead intake keeps %d record rows", got)
	}
	if _, _, err := e.Blobs.ReadAll(ctx, dispatch.ContainerDispatch, jsonl, 1<<20); err == nil {
		t.Error("the dead intake's records.jsonl is left")
	}
	if b, err := st.Load(ctx, stored.BatchID); err != nil || b.Title != "Offers" || rows(stored.BatchID) != 1 {
		t.Errorf("the stored batch: %+v, %v", b, err)
	}
	if due, err := st.Intakes().Due(ctx, e.Now().Add(dispatch.IntakeSafeAge), 100); err != nil || len(due) != 0 {
		t.Errorf("entries left: %+v, %v", due, err)
	}
	if n, err := job.Run(ctx); err != nil || n.Intakes != 0 {
		t.Errorf("the next run = %+v, %v; want nothing", n, err)
	}
}
