package dispatch_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/dispatch"
	"github.com/esign-svc/esign/shared/dispatch/batchstore"
)

// failingRecords is the batch store whose CreateRecords fails from its third chunk on.
type failingRecords struct {
	*batchstore.Store
	chunks int
}

var errStorage = errors.New("storage down")

func (s *failingRecords) CreateRecords(ctx context.Context, batchID string, records []dispatch.Record) error {
	if len(records) > dispatch.RecordChunk {
		return errors.New("a chunk of more than RecordChunk records")
	}
	if s.chunks++; s.chunks >= 3 {
		return errStorage
	}
	return s.Store.CreateRecords(ctx, batchID, records)
}

// TestIntakeFailingHalfWayIsNotVisible: the record rows are stored in chunks while the records
// are read; an intake whose third chunk fails answers the store's error and leaves no batch a
// read sees (the batch row is written last), and the first two chunks' record rows are deleted
// before it answers, its intake entry forgotten (issue 26: this test used to pin that the first
// two chunks stayed stored).
func TestIntakeFailingHalfWayIsNotVisible(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	st := &failingRecords{Store: f.store}
	in := *f.in
	in.Store = st
	id := f.capture(&in)
	recs := make([]map[string]any, 450)
	for i := range recs {
		recs[i] = offer(i)
	}
	by := alice
	by.TenantID = "t-" + uuid.NewString()
	_, err := in.Submit(context.Background(), by, request(f.pkg, recs, ""))
	if !errors.Is(err, errStorage) {
		t.Fatalf("err = %v, want the store's", err)
	}
	ctx := context.Background()
	if _, err := f.store.Load(ctx, *id); !errors.Is(err, batchstore.ErrNotFound) {
		t.Errorf("Load after a failed intake: err = %v, want not found", err)
	}
	if p, err := f.store.List(ctx, by.TenantID, "", "", 10); err != nil || p.Total != 0 || len(p.Batches) != 0 {
		t.Errorf("List after a failed intake = %+v, %v; want none", p, err)
	}
	if st.chunks != 3 {
		t.Errorf("%d chunks tried, want 3", st.chunks)
	}
	f.wantNothingLeft(t, by.TenantID, *id)
}
