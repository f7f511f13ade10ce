package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/esign-svc/esign/shared/dispatch/batchstore"
)

// TestBatchIntakeStorageCalls counts the dispatcher's storage calls for a 250-record batch
// intake through the local host (docs/storage.md "Calls per batch intake"): the record rows in
// three transactions and the batch row in a fourth, and in the index table exactly two upserts,
// the tenant's member row and, issue 26, the intake schedule's entry (written before the first
// chunk, left by CreateBatch for the processor's sweep). It runs alone (not parallel): the
// dispatcher serves nothing else meanwhile.
func TestBatchIntakeStorageCalls(t *testing.T) {
	const app = "esign-dispatcher"
	if svc.counter == nil {
		t.Skip("the storage counter is off in a benchmark-only run")
	}
	alice := newPerson(t, tenantA, "alice", "Esign.Initiator")
	pkg := uploadPackage(t, examplePackage(t))
	body := batchBody(pkg, offers(250), true)
	m := svc.counter.mark(app)
	submitBatch(t, alice, body, http.StatusAccepted)
	calls := svc.counter.since(app, m)
	index := 0
	for _, c := range calls {
		if strings.HasPrefix(c, "PUT table ") && strings.HasSuffix(c, "/"+batchstore.TableIndex) {
			index++
		}
	}
	t.Logf("intake of 250 records: %d storage calls: %v", len(calls), calls)
	if batches(calls) != 4 || index != 2 {
		t.Errorf("intake made %d transactions and %d index upserts, want 4 (3 chunks, the batch) and 2 (member, intake entry): %v",
			batches(calls), index, calls)
	}
}
