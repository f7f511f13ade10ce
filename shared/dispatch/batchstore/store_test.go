package batchstore_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/dispatch"
	"github.com/esign-svc/esign/shared/dispatch/batchstore"
	"github.com/esign-svc/esign/shared/dispatch/batchstore/storetest"
)

func TestMain(m *testing.M) { azuritetest.Main(m) }

var now = time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)

// newBatch stores a batch of n records, every seventh with a warning and, when invalid is set,
// every tenth invalid.
func newBatch(t *testing.T, st *batchstore.Store, tenant string, n int, requireApproval, invalid bool) (*dispatch.Batch, []dispatch.Record) {
	t.Helper()
	return newBatchAt(t, st, tenant, n, requireApproval, invalid, now)
}

// newBatchAt is newBatch submitted at at.
func newBatchAt(t *testing.T, st *batchstore.Store, tenant string, n int, requireApproval, invalid bool, at time.Time) (*dispatch.Batch, []dispatch.Record) {
	t.Helper()
	b := &dispatch.Batch{BatchID: uuid.NewString(), TenantID: tenant, CorrelationID: "batch-" + uuid.NewString(),
		Title: "Offers", TemplatePath: "templates/offer.zip", TemplateName: "Offer letter", TemplateVersion: 1,
		SubmittedBy: "oid-sub", Settings: dispatch.Settings{Mode: dispatch.ModeIndividual, DeliveryMode: dispatch.DeliveryNone}}
	recs := make([]dispatch.Record, n)
	for i := range recs {
		recs[i] = dispatch.Record{BatchID: b.BatchID, Index: i, Status: dispatch.RecordReady, State: dispatch.RecordPending, DataEnc: "enc"}
		switch {
		case invalid && i%10 == 9:
			recs[i].Status, recs[i].State, recs[i].Messages = dispatch.RecordInvalid, dispatch.RecordNotQueued, []string{"salary: too high"}
		case i%7 == 6:
			recs[i].Warning, recs[i].Messages = true, []string{"start date in the past"}
		}
	}
	ch := dispatch.Submit(b, recs, requireApproval, at)
	if err := st.Create(context.Background(), b, recs, ch); err != nil {
		t.Fatal(err)
	}
	return b, recs
}

// TestCountersExactUnderConcurrentAndRedeliveredRecords processes every ready record of a
// 250-record batch from 8 workers through the use cases, each record message twice (a
// redelivered message), and checks that each record was counted once, that no record outcome
// wrote the batch row (its ETag is the one of the start: the counters live on shards, issue
// 26), that the finish was asked exactly once, and that the finish, delivered to 8 workers
// twice each, moves the batch to partially-failed exactly once with the exact counters on its
// row. (The batch-row check fails on the code before issue 26, which wrote the batch row
// with every record's outcome.)
func TestCountersExactUnderConcurrentAndRedeliveredRecords(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	b, recs := newBatch(t, st, "t1", 250, false, false)
	if b.State != dispatch.StateQueued || b.ReadyCount != 250 || b.WarningCount != 35 || b.Readiness != dispatch.ReadyPartial {
		t.Fatalf("submitted %s ready %d failed %d", b.State, b.ReadyCount, b.FailedCount)
	}
	uc := &dispatch.Batches{Store: st, Now: func() time.Time { return now }}
	if _, _, err := uc.Start(ctx, "t1", b.BatchID, jobActor); err != nil {
		t.Fatal(err)
	}
	started, err := uc.Load(ctx, b.BatchID)
	if err != nil {
		t.Fatal(err)
	}
	work := make(chan int)
	var mu sync.Mutex
	finishes, dups := 0, 0
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				o := dispatch.Outcome{CorrelationID: fmt.Sprintf("c-%d", i), PDFBlobPath: fmt.Sprintf("documents/dispatch/x/%d.pdf", i)}
				if i%50 == 0 {
					o.Err = "render failed"
				}
				r, err := uc.Record(ctx, b.BatchID, i)
				if err != nil {
					t.Error(err)
					continue
				}
				_, ch, err := uc.Processed(ctx, "t1", started, r, o)
				mu.Lock()
				switch {
				case errors.Is(err, dispatch.ErrRecordDone):
					dups++
				case err != nil:
					t.Error(err)
				}
				for _, e := range ch.Effects {
					if e.Kind == dispatch.EffectFinish {
						finishes++
					}
				}
				mu.Unlock()
			}
		}()
	}
	for round := 0; round < 2; round++ {
		for _, r := range recs {
			if r.Status == dispatch.RecordReady {
				work <- r.Index
			}
		}
	}
	close(work)
	wg.Wait()
	got, err := st.Load(ctx, b.BatchID)
	if err != nil {
		t.Fatal(err)
	}
	if got.ProcessedCount != 250 || got.ErrorCount != 5 || dups != 250 || finishes != 1 {
		t.Fatalf("processed %d errors %d duplicates %d finishes %d", got.ProcessedCount, got.ErrorCount, dups, finishes)
	}
	if got.ETag != started.ETag {
		t.Fatalf("the batch row was written by record outcomes (ETag %s after the start, %s now)", started.ETag, got.ETag)
	}
	var ended, notProcessing int
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 2 {
				_, ch, err := uc.Finish(ctx, "t1", b.BatchID, jobActor, dispatch.Artifacts{})
				mu.Lock()
				switch {
				case errors.Is(err, dispatch.ErrNotProcessing):
					notProcessing++
				case err != nil:
					t.Error(err)
				default:
					ended++
					if len(ch.Effects) != 1 {
						t.Errorf("finish effects %v", ch.Effects)
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if ended != 1 || notProcessing != 15 {
		t.Fatalf("%d finishes ended the batch, %d found it ended; want 1 and 15", ended, notProcessing)
	}
	got, _ = st.Load(ctx, b.BatchID)
	if got.State != dispatch.StatePartiallyFailed || got.ProcessedCount != 250 || got.ErrorCount != 5 {
		t.Fatalf("state %s processed %d errors %d", got.State, got.ProcessedCount, got.ErrorCount)
	}
	evs, err := st.Events(ctx, b.BatchID)
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, ev := range evs {
		n[ev.Kind]++
	}
	if n[dispatch.EvPartiallyFailed] != 1 || n[dispatch.EvCompleted] != 0 || n[dispatch.EvRecordProcessed] != 245 || n[dispatch.EvRecordFailed] != 5 {
		t.Fatalf("events %v", n)
	}
	page, err := st.Records(ctx, b.BatchID, string(dispatch.RecordFailed), "", 100)
	if err != nil || len(page.Records) != 5 || page.Next != "" || page.Records[0].Error != "render failed" {
		t.Fatalf("failed records %+v %v", page, err)
	}
}

// TestBatchStoredBeforeGroupsKeepsGroupsOfTen: a batch whose row does not record its record
// group (stored when every group had 10 records, its counter shards counting groups of 10)
// reads as groups of 10, and its records, processed one at a time by index (each read with its
// counter shard), add up exactly with one finish asked. Read as groups of 25, records 0 to 24
// would all count on shard 0, which holds 10.
func TestBatchStoredBeforeGroupsKeepsGroupsOfTen(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	b := &dispatch.Batch{BatchID: uuid.NewString(), TenantID: "t1", CorrelationID: "batch-" + uuid.NewString(),
		Title: "Offers", TemplatePath: "templates/offer.zip", TemplateName: "Offer letter", TemplateVersion: 1,
		SubmittedBy: "oid-sub", Settings: dispatch.Settings{Mode: dispatch.ModeIndividual}, RecordsPerMessage: dispatch.LegacyRecordsPerMessage}
	recs := make([]dispatch.Record, 60)
	for i := range recs {
		recs[i] = dispatch.Record{BatchID: b.BatchID, Index: i, Status: dispatch.RecordReady, State: dispatch.RecordPending, DataEnc: "enc"}
	}
	if err := st.Create(ctx, b, recs, dispatch.Submit(b, recs, false, now)); err != nil {
		t.Fatal(err)
	}
	if err := st.ForgetGroup(ctx, b.BatchID); err != nil {
		t.Fatal(err)
	}
	uc := &dispatch.Batches{Store: st, Now: func() time.Time { return now }}
	if _, _, err := uc.Start(ctx, "t1", b.BatchID, jobActor); err != nil {
		t.Fatal(err)
	}
	started, err := uc.Load(ctx, b.BatchID)
	if err != nil || started.Group() != dispatch.LegacyRecordsPerMessage {
		t.Fatalf("group %d, %v", started.Group(), err)
	}
	finishes := 0
	for i := range recs {
		r, err := uc.Record(ctx, b.BatchID, i)
		if err != nil {
			t.Fatal(err)
		}
		_, ch, err := uc.Processed(ctx, "t1", started, r, dispatch.Outcome{CorrelationID: fmt.Sprintf("c-%d", i)})
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		for _, e := range ch.Effects {
			if e.Kind == dispatch.EffectFinish {
				finishes++
			}
		}
		if done := finishes == 1; done != (i == len(recs)-1) {
			t.Fatalf("finish asked after record %d of %d", i, len(recs))
		}
	}
	got, err := st.Load(ctx, b.BatchID)
	if err != nil || got.ProcessedCount != 60 || got.ErrorCount != 0 {
		t.Fatalf("processed %d errors %d, %v", got.ProcessedCount, got.ErrorCount, err)
	}
}

// TestRecordsPagesAndList pages a batch's records with continuation tokens and lists the
// tenant's batches by state.
func TestRecordsPagesAndList(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	b, _ := newBatch(t, st, "t2", 120, true, true)
	if b.State != dispatch.StateInvalid || b.Readiness != dispatch.ReadyInvalid || b.FailedCount != 12 {
		t.Fatalf("submitted %s %s failed %d", b.State, b.Readiness, b.FailedCount)
	}
	var all []int
	next := ""
	for pages := 0; ; pages++ {
		p, err := st.Records(ctx, b.BatchID, "", next, 50)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range p.Records {
			all = append(all, r.Index)
		}
		if next = p.Next; next == "" {
			if pages != 2 {
				t.Fatalf("%d pages", pages+1)
			}
			break
		}
	}
	for i, idx := range all {
		if idx != i {
			t.Fatalf("record %d at position %d", idx, i)
		}
	}
	if len(all) != 120 {
		t.Fatalf("%d records", len(all))
	}
	inv, err := st.Records(ctx, b.BatchID, dispatch.RecordInvalid, "", 100)
	if err != nil || len(inv.Records) != 12 {
		t.Fatalf("invalid records %d %v", len(inv.Records), err)
	}
	if _, err := st.Records(ctx, b.BatchID, "", "bogus", 10); err == nil {
		t.Fatal("a forged token was accepted")
	}
	b2, _ := newBatch(t, st, "t2", 3, true, false)
	list, err := st.List(ctx, "t2", dispatch.StatePendingApproval, "", 100)
	if err != nil || len(list.Batches) != 1 || list.Total != 1 || list.Next != "" || list.Batches[0].BatchID != b2.BatchID {
		t.Fatalf("pending batches %+v %v", list, err)
	}
	list, err = st.List(ctx, "t2", "", "", 100)
	if err != nil || len(list.Batches) != 2 || list.Total != 2 {
		t.Fatalf("all batches %+v %v", list, err)
	}
	if other, _ := st.List(ctx, "t3", "", "", 100); len(other.Batches) != 0 || other.Total != 0 {
		t.Fatalf("another tenant sees %d batches", len(other.Batches))
	}
}

// TestListPagesNewestFirst pages a tenant's 5 batches 2 at a time with continuation tokens
// (issue 26: the list read every batch row at once): newest first, each page with the total,
// the last without a token; with a state filter the same; a forged token is 400 naming
// continuationToken.
func TestListPagesNewestFirst(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	tenant := "t-" + uuid.NewString()
	var ids []string
	for i := 0; i < 5; i++ {
		b, _ := newBatchAt(t, st, tenant, 2, i%2 == 0, false, now.Add(time.Duration(i)*time.Second)) // 0, 2, 4 pending approval
		ids = append(ids, b.BatchID)
	}
	var got []string
	after := ""
	for pages := 1; ; pages++ {
		p, err := st.List(ctx, tenant, "", after, 2)
		if err != nil || p.Total != 5 || len(p.Batches) > 2 {
			t.Fatalf("page %d: %+v %v", pages, p, err)
		}
		for _, b := range p.Batches {
			got = append(got, b.BatchID)
		}
		if after = p.Next; after == "" {
			if pages != 3 {
				t.Fatalf("%d pages, want 3", pages)
			}
			break
		}
	}
	if !slices.Equal(got, []string{ids[4], ids[3], ids[2], ids[1], ids[0]}) {
		t.Fatalf("order %v, want newest first %v", got, ids)
	}
	p, err := st.List(ctx, tenant, dispatch.StatePendingApproval, "", 2)
	if err != nil || p.Total != 3 || len(p.Batches) != 2 || p.Next == "" || p.Batches[0].BatchID != ids[4] {
		t.Fatalf("pending page 1: %+v %v", p, err)
	}
	p, err = st.List(ctx, tenant, dispatch.StatePendingApproval, p.Next, 2)
	if err != nil || p.Total != 3 || len(p.Batches) != 1 || p.Next != "" || p.Batches[0].BatchID != ids[0] {
		t.Fatalf("pending page 2: %+v %v", p, err)
	}
	if _, err := st.List(ctx, tenant, "", "rec-00001", 2); apperr.KindOf(err) != apperr.KindInvalid {
		t.Fatalf("a forged token: %v", err)
	}
}

// TestRecordOfIntakeUnderWay: a record read by index while its intake is under way (record
// rows stored, no batch row yet) comes back without a counter, not a fault: its group is
// unknown until the batch row exists, and so are its shards.
func TestRecordOfIntakeUnderWay(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	id := uuid.NewString()
	if err := st.CreateRecords(ctx, id, []dispatch.Record{{BatchID: id, Index: 0, Status: dispatch.RecordReady,
		State: dispatch.RecordPending, DataEnc: "enc"}}); err != nil {
		t.Fatal(err)
	}
	r, err := st.Record(ctx, id, 0)
	if err != nil || r.Index != 0 || r.Counter != "" {
		t.Fatalf("record %+v, %v", r, err)
	}
}
