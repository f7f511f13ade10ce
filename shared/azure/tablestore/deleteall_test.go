package tablestore

import (
	"context"
	"fmt"
	"testing"

	"github.com/esign-svc/esign/shared/apperr"
)

// TestDeleteAll deletes the rows a prefix selects across pages and transactions (250: three
// transactions) and leaves the partition's other rows and other partitions alone.
func TestDeleteAll(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	for _, pk := range []string{"p1", "p2"} {
		for from := 0; from < 250; from += MaxBatchOps {
			var ops []Op
			for i := from; i < min(from+MaxBatchOps, 250); i++ {
				ops = append(ops, InsertOp(Entity{RowKey: fmt.Sprintf("rec-%05d", i), Props: map[string]any{"n": int64(i)}}))
			}
			if err := s.Transact(ctx, pk, ops); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.Insert(ctx, Entity{PartitionKey: pk, RowKey: "batch"}); err != nil {
			t.Fatal(err)
		}
	}
	n, err := s.DeleteAll(ctx, "p1", &QueryOptions{RowKeyPrefix: "rec-", Limit: 7})
	if err != nil || n != 250 {
		t.Fatalf("DeleteAll = %d, %v; want 250", n, err)
	}
	left, err := s.Query(ctx, "p1", nil)
	if err != nil || len(left) != 1 || left[0].RowKey != "batch" {
		t.Fatalf("p1 keeps %d rows (%v), want the batch row", len(left), err)
	}
	if other, err := s.Query(ctx, "p2", nil); err != nil || len(other) != 251 {
		t.Fatalf("p2 keeps %d rows (%v), want 251", len(other), err)
	}
	if n, err := s.DeleteAll(ctx, "p1", &QueryOptions{RowKeyPrefix: "rec-"}); err != nil || n != 0 {
		t.Fatalf("DeleteAll again = %d, %v; want 0", n, err)
	}
	if _, err := s.DeleteAll(ctx, "", nil); apperr.KindOf(err) != apperr.KindInvalid {
		t.Fatalf("DeleteAll of no partition: %v, want invalid", err)
	}
}
