package app

import (
	"os/exec"
	"strings"
	"testing"
)

// useCaseRoutes are the route packages that reach their aggregates only through the domain's
// use-case services (issue 23): delivery.Creator and delivery.Deliveries, document.Uploader;
// esign.Creator, esign.Sessions and esign.SessionReads for the signing-session routes.
var useCaseRoutes = []string{"./deliveryapi", "./documentapi", "./esignapi", "./portalapi", "./callbackapi", "./renderapi"}

// aggregateStore reports whether an import path is an aggregate's store or the table adapter
// (deliverystore, documentstore, sessionstore, batchstore, workflowstore, tablestore, ...): a
// package of the module whose name ends in "store", but the blob client.
func aggregateStore(path string) bool {
	const module = "github.com/esign-svc/esign/"
	return strings.HasPrefix(path, module) && strings.HasSuffix(path, "store") && path != module+"shared/azure/blobstore"
}

// TestUseCaseRoutesImportNoStore: the delivery, document and signing-session routes call one
// use case per route; only the app's wiring constructs stores.
func TestUseCaseRoutesImportNoStore(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("go", append([]string{"list", "-f", `{{.ImportPath}} {{join .Imports " "}}`}, useCaseRoutes...)...)
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(useCaseRoutes) {
		t.Fatalf("go list answered %d packages, want %d", len(lines), len(useCaseRoutes))
	}
	for _, line := range lines {
		f := strings.Fields(line)
		for _, imp := range f[1:] {
			if aggregateStore(imp) {
				t.Errorf("%s imports %s: a route calls its aggregate's use case (delivery.Deliveries, document.Documents, esign.Sessions, esign.SessionReads)", f[0], imp)
			}
		}
	}
}

func TestAggregateStoreNamesTheStores(t *testing.T) {
	t.Parallel()
	for path, want := range map[string]bool{
		"github.com/esign-svc/esign/shared/delivery/deliverystore":   true,
		"github.com/esign-svc/esign/shared/document/documentstore":   true,
		"github.com/esign-svc/esign/shared/esign/sessionstore":       true,
		"github.com/esign-svc/esign/shared/azure/tablestore":         true,
		"github.com/esign-svc/esign/shared/azure/blobstore":          false,
		"github.com/esign-svc/esign/shared/delivery":                 false,
		"github.com/esign-svc/esign/shared/document":                 false,
		"github.com/esign-svc/esign/shared/delivery/deliverystore/x": false,
	} {
		if got := aggregateStore(path); got != want {
			t.Errorf("aggregateStore(%s) = %t, want %t", path, got, want)
		}
	}
}
