package tablestore

import (
	"context"
	"strings"
	"testing"

	"github.com/esign-svc/esign/shared/apperr"
)

// snapshot is the partition's rows by row key, with their ETags and a property.
func snapshot(t *testing.T, s *Store, pk string) map[string]string {
	t.Helper()
	rows, err := s.Query(context.Background(), pk, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range rows {
		out[e.RowKey] = e.ETag + "|" + e.String("state")
	}
	return out
}

func TestTransactCommits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	sessEtag, err := s.Insert(ctx, Entity{PartitionKey: "g", RowKey: "session", Props: map[string]any{"state": "open", "v": 1}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Insert(ctx, Entity{PartitionKey: "g", RowKey: "gone"}); err != nil {
		t.Fatal(err)
	}
	err = s.Transact(ctx, "g", []Op{
		ReplaceOp(Entity{RowKey: "session", ETag: sessEtag, Props: map[string]any{"state": "signed", "v": 2}}),
		InsertOp(Entity{RowKey: "audit-0001", Props: map[string]any{"kind": "slot.signed"}}),
		UpsertOp(Entity{RowKey: "slot-0", Props: map[string]any{"state": "signed"}}),
		MergeOp(Entity{RowKey: "gone", ETag: "*", Props: map[string]any{"x": "y"}}),
	})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := s.Get(ctx, "g", "session")
	if err != nil || sess.String("state") != "signed" || sess.Int64("v") != 2 || sess.ETag == sessEtag {
		t.Fatalf("session after commit: %+v, %v", sess, err)
	}
	if a, err := s.Get(ctx, "g", "audit-0001"); err != nil || a.String("kind") != "slot.signed" {
		t.Errorf("audit row: %+v, %v", a, err)
	}
	if err := s.Transact(ctx, "g", []Op{DeleteOp("gone", ""), DeleteOp("slot-0", "")}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "g", "gone"); apperr.KindOf(err) != apperr.KindNotFound {
		t.Errorf("deleted row still there: %v", err)
	}
	if err := s.Transact(ctx, "g", nil); err != nil {
		t.Errorf("empty transaction: %v", err)
	}
}

// TestTransactAllOrNothing makes each kind of operation fail in the middle or at the end of a
// batch and proves that nothing of the batch was written.
func TestTransactAllOrNothing(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		failing   func(staleEtag string) Op
		kind      apperr.Kind
		code      string
		failIndex int
	}{
		{"stale etag replace", func(stale string) Op {
			return ReplaceOp(Entity{RowKey: "session", ETag: stale, Props: map[string]any{"state": "B"}})
		}, apperr.KindPrecondition, CodePrecondition, 1},
		{"stale etag merge", func(stale string) Op {
			return MergeOp(Entity{RowKey: "session", ETag: stale, Props: map[string]any{"state": "B"}})
		}, apperr.KindPrecondition, CodePrecondition, 1},
		{"stale etag delete", func(stale string) Op { return DeleteOp("session", stale) }, apperr.KindPrecondition, CodePrecondition, 1},
		{"insert existing", func(string) Op { return InsertOp(Entity{RowKey: "index-token"}) }, apperr.KindConflict, CodeEntityExists, 1},
		{"replace missing", func(string) Op { return ReplaceOp(Entity{RowKey: "nope", ETag: "*"}) }, apperr.KindNotFound, CodeEntityNotFound, 1},
		{"delete missing", func(string) Op { return DeleteOp("nope", "") }, apperr.KindNotFound, CodeEntityNotFound, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := newStore(t)
			stale, err := s.Insert(ctx, Entity{PartitionKey: "g", RowKey: "session", Props: map[string]any{"state": "A"}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Insert(ctx, Entity{PartitionKey: "g", RowKey: "index-token", Props: map[string]any{"state": "used"}}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Insert(ctx, Entity{PartitionKey: "g", RowKey: "other", Props: map[string]any{"state": "kept"}}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Merge(ctx, Entity{PartitionKey: "g", RowKey: "session", ETag: "*", Props: map[string]any{"state": "A2"}}); err != nil {
				t.Fatal(err) // makes `stale` out of date
			}
			before := snapshot(t, s, "g")
			ops := []Op{
				InsertOp(Entity{RowKey: "audit-0001", Props: map[string]any{"state": "new"}}),
				tc.failing(stale),
				UpsertOp(Entity{RowKey: "slot-1", Props: map[string]any{"state": "new"}}),
				DeleteOp("other", ""),
			}
			err = s.Transact(ctx, "g", ops)
			wantErr(t, err, tc.kind, tc.code)
			if i, ok := FailedOp(err); !ok || i != tc.failIndex {
				t.Errorf("FailedOp = %d, %v; want %d", i, ok, tc.failIndex)
			}
			after := snapshot(t, s, "g")
			if len(after) != len(before) {
				t.Fatalf("rows before %v, after %v: the batch was partly written", before, after)
			}
			for k, v := range before {
				if after[k] != v {
					t.Errorf("row %s was %s, now %s: the batch was partly written", k, v, after[k])
				}
			}
		})
	}
}

func TestTransactRefusedBeforeSending(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	many := make([]Op, MaxBatchOps+1)
	for i := range many {
		many[i] = InsertOp(Entity{RowKey: "r" + itoa(i)})
	}
	tests := []struct {
		name string
		ops  []Op
		kind apperr.Kind
	}{
		{"too many", many, apperr.KindInternal},
		{"other partition", []Op{InsertOp(Entity{PartitionKey: "h", RowKey: "a"})}, apperr.KindInternal},
		{"repeated row", []Op{InsertOp(Entity{RowKey: "a"}), UpsertOp(Entity{RowKey: "a"})}, apperr.KindInternal},
		{"replace without etag", []Op{ReplaceOp(Entity{RowKey: "a"})}, apperr.KindInternal},
		{"unknown kind", []Op{{Kind: "frobnicate", Entity: Entity{RowKey: "a"}}}, apperr.KindInternal},
		{"oversized property", []Op{InsertOp(Entity{RowKey: "a", Props: map[string]any{"v": strings.Repeat("x", 40000)}})}, apperr.KindTooLarge},
		{"bad row key", []Op{InsertOp(Entity{RowKey: "a/b"})}, apperr.KindInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := s.Transact(ctx, "g", tc.ops)
			if err == nil || apperr.KindOf(err) != tc.kind {
				t.Fatalf("err = %v, want kind %d", err, tc.kind)
			}
		})
	}
	if rows := snapshot(t, s, "g"); len(rows) != 0 {
		t.Errorf("refused transactions wrote %v", rows)
	}
}

// TestTransactRace: two writers holding the same ETag; exactly one wins.
func TestTransactRace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	etag, err := s.Insert(ctx, Entity{PartitionKey: "g", RowKey: "session", Props: map[string]any{"state": "open"}})
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 2)
	for i := 0; i < 2; i++ {
		go func() {
			errs <- s.Transact(ctx, "g", []Op{
				ReplaceOp(Entity{RowKey: "session", ETag: etag, Props: map[string]any{"state": "completed"}}),
				InsertOp(Entity{RowKey: "audit-" + itoa(i), Props: map[string]any{"kind": "session.completed"}}),
			})
		}()
	}
	var ok, pre int
	for i := 0; i < 2; i++ {
		switch err := <-errs; apperr.KindOf(err) {
		case apperr.KindPrecondition:
			pre++
		default:
			if err != nil {
				t.Fatal(err)
			}
			ok++
		}
	}
	if ok != 1 || pre != 1 {
		t.Fatalf("%d won, %d lost on the ETag; want 1 and 1", ok, pre)
	}
	if rows := snapshot(t, s, "g"); len(rows) != 2 {
		t.Errorf("rows %v: want the session and one audit row", rows)
	}
}
