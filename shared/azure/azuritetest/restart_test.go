package azuritetest_test

import (
	"context"
	"testing"

	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/azure/queuestore"
	"github.com/esign-svc/esign/shared/azure/tablestore"
)

// An instance with a Location keeps its tables and queues across Restart, on the same
// endpoints, and the same clients work again.
func TestRestartKeepsData(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	in, err := azuritetest.LaunchWith(ctx, azuritetest.Options{Location: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(in.Stop)
	acct, err := azconn.New(azconn.Config{ConnectionString: in.ConnectionString()})
	if err != nil {
		t.Fatal(err)
	}
	tab, err := tablestore.New(acct, "restart")
	if err != nil {
		t.Fatal(err)
	}
	q, err := queuestore.New(acct, "restart")
	if err != nil {
		t.Fatal(err)
	}
	if err := tab.EnsureTable(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := tab.Insert(ctx, tablestore.Entity{PartitionKey: "p", RowKey: "r", Props: map[string]any{"v": "kept"}}); err != nil {
		t.Fatal(err)
	}
	if err := q.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Send(ctx, map[string]string{"v": "kept"}); err != nil {
		t.Fatal(err)
	}
	before := in.ConnectionString()

	if err := in.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if in.ConnectionString() != before {
		t.Fatalf("endpoints changed: %s", in.ConnectionString())
	}
	e, err := tab.Get(ctx, "p", "r")
	if err != nil || e.String("v") != "kept" {
		t.Fatalf("entity after restart: %+v %v", e, err)
	}
	n, err := q.Count(ctx)
	if err != nil || n != 1 {
		t.Fatalf("queue after restart: %d messages, %v", n, err)
	}

	mem, err := azuritetest.Launch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Stop()
	if err := mem.Restart(ctx); err == nil {
		t.Fatal("an in-memory instance restarted (its data would be lost)")
	}
}
