package dispatch_test

// Issue 26: a failed intake leaves no record rows behind. An intake that fails once its first
// chunk may be stored (a storage error, a blob that cannot be written, the CreateBatch failing,
// the caller's context cancelled) deletes its record rows and blobs before it answers and
// forgets its intake entry; one whose CreateBatch answer was lost but whose batch row exists
// keeps everything (the sweep drops its entry).

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/azure/blobstore"
	"github.com/esign-svc/esign/shared/dispatch"
	"github.com/esign-svc/esign/shared/dispatch/batchstore"
)

// capture makes in's first NewID (the batch id) readable through the answer, and puts in's
// clock at the real time (the intake schedule's watermark is the store's start hour: an entry
// at the fixture's fixed past time would sit below it).
func (f *fixture) capture(in *dispatch.Intake) *string {
	id := new(string)
	start := time.Now().UTC()
	in.Now = func() time.Time { return start }
	in.NewID = func() string {
		if *id == "" {
			*id = uuid.NewString()
			return *id
		}
		return uuid.NewString()
	}
	return id
}

// leftBehind is what an intake of batch id (tenant's) left: its record rows, its blobs (of the
// three the intake writes) and its intake entries.
func (f *fixture) leftBehind(t *testing.T, tenant, id string) (rows int, blobs []string, entries int) {
	t.Helper()
	ctx := context.Background()
	p, err := f.store.Records(ctx, id, "", "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	rows = len(p.Records)
	for _, b := range []struct{ container, name string }{
		{dispatch.ContainerDispatch, tenant + "/" + id + "/records.jsonl"},
		{dispatch.ContainerDispatch, tenant + "/" + id + "/" + dispatch.ReceiptJSONName},
		{dispatch.ContainerReceipts, tenant + "/" + id + ".pdf"},
	} {
		if _, _, err := f.blobs.ReadAll(ctx, b.container, b.name, 64<<20); err == nil {
			blobs = append(blobs, b.container+"/"+b.name)
		}
	}
	due, err := f.store.Intakes().Due(ctx, time.Now().Add(3*dispatch.IntakeSafeAge), 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range due {
		if strings.HasPrefix(d.ID, id+"|") {
			entries++
		}
	}
	return rows, blobs, entries
}

// wantNothingLeft fails unless a failed intake of batch id left nothing.
func (f *fixture) wantNothingLeft(t *testing.T, tenant, id string) {
	t.Helper()
	if id == "" {
		t.Fatal("no batch id was drawn")
	}
	rows, blobs, entries := f.leftBehind(t, tenant, id)
	if rows != 0 || len(blobs) != 0 || entries != 0 {
		t.Errorf("a failed intake left %d record rows, blobs %v, %d intake entries; want nothing", rows, blobs, entries)
	}
}

// failingBatch is the batch store whose CreateBatch fails; with write set it writes the batch
// first (a success whose answer was lost).
type failingBatch struct {
	*batchstore.Store
	write bool
}

func (s *failingBatch) CreateBatch(ctx context.Context, b *dispatch.Batch, t dispatch.Tally, ch dispatch.Change) error {
	if s.write {
		if err := s.Store.CreateBatch(ctx, b, t, ch); err != nil {
			return err
		}
	}
	return errStorage
}

// failingPut is the blob store whose Put of a name ending in suffix fails.
type failingPut struct {
	*blobstore.Store
	suffix string
}

func (b *failingPut) Put(ctx context.Context, container, name string, r io.Reader, ctype string, md map[string]string) (string, error) {
	if strings.HasSuffix(name, b.suffix) {
		return "", errStorage
	}
	return b.Store.Put(ctx, container, name, r, ctype, md)
}

// cancelling is the batch store whose third chunk finds the caller's context cancelled.
type cancelling struct {
	*batchstore.Store
	cancel context.CancelFunc
	chunks int
}

func (s *cancelling) CreateRecords(ctx context.Context, batchID string, records []dispatch.Record) error {
	if s.chunks++; s.chunks == 3 {
		s.cancel()
	}
	return s.Store.CreateRecords(ctx, batchID, records)
}

func records(n int) []map[string]any {
	recs := make([]map[string]any, n)
	for i := range recs {
		recs[i] = offer(i)
	}
	return recs
}

func TestIntakeFailedCreateBatchLeavesNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	in := *f.in
	in.Store = &failingBatch{Store: f.store}
	id := f.capture(&in)
	by := alice
	by.TenantID = "t-" + uuid.NewString()
	if _, err := in.Submit(context.Background(), by, request(f.pkg, records(450), "")); !errors.Is(err, errStorage) {
		t.Fatalf("err = %v, want the store's", err)
	}
	f.wantNothingLeft(t, by.TenantID, *id)
}

// TestIntakeFailedBlobLeavesNothing: the JSON receipt cannot be written (the records' JSONL
// was): the record rows and the JSONL are deleted.
func TestIntakeFailedBlobLeavesNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	in := *f.in
	in.Blobs = &failingPut{Store: f.blobs, suffix: "/" + dispatch.ReceiptJSONName}
	id := f.capture(&in)
	by := alice
	by.TenantID = "t-" + uuid.NewString()
	if _, err := in.Submit(context.Background(), by, request(f.pkg, records(150), "")); !errors.Is(err, errStorage) {
		t.Fatalf("err = %v, want the blob store's", err)
	}
	f.wantNothingLeft(t, by.TenantID, *id)
}

// TestIntakeCancelledLeavesNothing: the caller goes away while the third chunk is stored; the
// clean-up runs on a context of its own.
func TestIntakeCancelledLeavesNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st := &cancelling{Store: f.store, cancel: cancel}
	in := *f.in
	in.Store = st
	id := f.capture(&in)
	by := alice
	by.TenantID = "t-" + uuid.NewString()
	if _, err := in.Submit(ctx, by, request(f.pkg, records(450), "")); err == nil {
		t.Fatal("a cancelled intake succeeded")
	}
	if st.chunks != 3 {
		t.Fatalf("%d chunks tried, want 3", st.chunks)
	}
	f.wantNothingLeft(t, by.TenantID, *id)
}

// TestIntakeLostCreateBatchAnswerKeepsTheBatch: CreateBatch wrote the batch but its answer was
// lost: the intake answers the error, yet deletes nothing of a batch that exists, and leaves
// its entry, which the sweep then drops without touching the batch. A stored intake leaves its
// entry the same way (CreateBatch adds no call to drop it).
func TestIntakeLostCreateBatchAnswerKeepsTheBatch(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	in := *f.in
	in.Store = &failingBatch{Store: f.store, write: true}
	id := f.capture(&in)
	by := alice
	by.TenantID = "t-" + uuid.NewString()
	if _, err := in.Submit(ctx, by, request(f.pkg, records(150), "")); !errors.Is(err, errStorage) {
		t.Fatalf("err = %v, want the store's", err)
	}
	if rows, blobs, entries := f.leftBehind(t, by.TenantID, *id); rows != 150 || len(blobs) != 3 || entries != 1 {
		t.Fatalf("left %d record rows, blobs %v, %d entries; want all 150, 3 blobs and the entry", rows, blobs, entries)
	}

	ok := *f.in
	okID := f.capture(&ok)
	if _, err := ok.Submit(ctx, by, request(f.pkg, records(3), "")); err != nil {
		t.Fatal(err)
	}
	if rows, blobs, entries := f.leftBehind(t, by.TenantID, *okID); rows != 3 || len(blobs) != 3 || entries != 1 {
		t.Fatalf("a stored intake: %d record rows, blobs %v, %d entries; want 3, 3 blobs and its entry", rows, blobs, entries)
	}

	sweep := &dispatch.IntakeSweep{Schedule: f.store.Intakes(), Store: f.store, Blobs: f.blobs}
	run, err := sweep.Run(ctx, time.Now().Add(dispatch.IntakeSafeAge+time.Minute), 100)
	if err != nil || run.Sent != 0 || run.Checked < 2 {
		t.Fatalf("sweep = %+v, %v; want both entries checked, nothing discarded", run, err)
	}
	for _, b := range []string{*id, *okID} {
		if _, err := f.store.Load(ctx, b); err != nil {
			t.Errorf("batch %s after the sweep: %v", b, err)
		}
		if _, blobs, entries := f.leftBehind(t, by.TenantID, b); len(blobs) != 3 || entries != 0 {
			t.Errorf("batch %s after the sweep: blobs %v, %d entries; want its 3 blobs, no entry", b, blobs, entries)
		}
	}
}
