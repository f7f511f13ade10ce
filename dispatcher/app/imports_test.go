package app

import (
	"testing"

	"github.com/esign-svc/esign/shared/apptest"
)

// TestOnlyTheWiringImportsAStore: no package of the dispatcher but this one imports an
// aggregate's store, the kernel's store half or the table adapter (issue 23). A route decodes,
// authorises, calls one method of its aggregate's use-case service (esign.Sessions,
// esign.SessionReads, delivery.Deliveries, document.Documents, dispatch.Batches,
// workflow.Workflows) and encodes; this package builds the stores and hands them to the services.
func TestOnlyTheWiringImportsAStore(t *testing.T) {
	t.Parallel()
	found, wiring := apptest.StoreImports(t, "..", "github.com/esign-svc/esign/dispatcher/app", "./...")
	if wiring == 0 { // the rule must see the stores the wiring builds
		t.Fatal("the wiring imports no store by this rule")
	}
	for _, f := range found {
		t.Errorf("%s: a route calls its aggregate's use-case service; only app/ builds stores", f)
	}
}
