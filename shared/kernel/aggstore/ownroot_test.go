package aggstore_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/azure/tablestore"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/kernel/aggstore"
)

// ownCounters is a table of counters whose roots have RowKeys of their own (Kind.OwnRoot).
func ownCounters(t *testing.T) *aggstore.Table[*counter] {
	t.Helper()
	tab, err := aggstore.NewTable(azuritetest.Account(t), azuritetest.Name("ownroot"), aggstore.Kind[*counter]{
		Root: "root", OwnRoot: true, NotFound: errNoCounter,
		ID: func(c *counter) string { return c.ID },
		Encode: func(c *counter) (tablestore.Entity, error) {
			return tablestore.Entity{PartitionKey: c.ID, RowKey: "root", ETag: c.ETag, Props: map[string]any{"n": c.N}}, nil
		},
		Decode: func(e tablestore.Entity) (*counter, error) {
			return &counter{ID: e.PartitionKey, N: e.Int64("n"), ETag: e.ETag}, nil
		},
	})
	return azuritetest.Ensured(t, tab, err)
}

func add(n int64) aggstore.Step[*counter] {
	return aggstore.Plain(func(c *counter) (kernel.Change, error) {
		c.N += n
		var ch kernel.Change
		ch.Record("counter.added", kernel.NoSlot, time.Now().UTC(), nil)
		return ch, nil
	})
}

// TestOwnRoot: with Kind.OwnRoot an aggregate's root is written, read and updated under
// Root-<id>, never under the shared Root; a root written under Root before (a table of an
// older version) is read, moved to its own key the first time (one row left, under the new
// key), and updated there, also when many readers move it at once; a missing aggregate is
// Kind.NotFound.
func TestOwnRoot(t *testing.T) {
	t.Parallel()
	ctx, tab := context.Background(), ownCounters(t)
	if err := tab.Create(ctx, &counter{ID: "new", N: 1}, kernel.Change{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := tab.Update(ctx, "new", add(2)); err != nil {
		t.Fatal(err)
	}
	if c, err := tab.Load(ctx, "new"); err != nil || c.N != 3 {
		t.Fatalf("loaded %+v, %v", c, err)
	}
	assertRoots(t, tab, "new")

	for _, id := range []string{"old", "raced"} {
		if _, err := tab.Rows().Insert(ctx, tablestore.Entity{PartitionKey: id, RowKey: "root", Props: map[string]any{"n": int64(5)}}); err != nil {
			t.Fatal(err)
		}
	}
	if c, err := tab.Load(ctx, "old"); err != nil || c.N != 5 {
		t.Fatalf("a root written under Root: %+v, %v", c, err)
	}
	assertRoots(t, tab, "old")
	if c, _, err := tab.Update(ctx, "old", add(1)); err != nil || c.N != 6 {
		t.Fatalf("update of a moved root: %+v, %v", c, err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if c, err := tab.Load(ctx, "raced"); err != nil || c.N != 5 {
				t.Errorf("concurrent move: %+v, %v", c, err)
			}
		}()
	}
	wg.Wait()
	assertRoots(t, tab, "raced")

	if _, err := tab.Load(ctx, "missing"); apperr.KindOf(err) != apperr.KindNotFound {
		t.Fatalf("missing: %v", err)
	}
}

// assertRoots checks that aggregate id has one root row, under root-<id>.
func assertRoots(t *testing.T, tab *aggstore.Table[*counter], id string) {
	t.Helper()
	rows, err := tab.Rows().Query(context.Background(), id, &tablestore.QueryOptions{RowKeyPrefix: "root"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].RowKey != "root-"+id {
		keys := []string{}
		for _, r := range rows {
			keys = append(keys, r.RowKey)
		}
		t.Fatalf("%s: root rows %v, want [root-%s]", id, keys, id)
	}
}
