package app

import (
	"go/build"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// sessionRoutePackages are the dispatcher's signing-session packages (issue 23): their routes
// call esign.Sessions (the transitions) and esign.SessionReads (the reads), and only this
// package's wiring builds the session store.
var sessionRoutePackages = []string{"esignapi", "portalapi", "callbackapi", "renderapi"}

// blobAdapter is the blob storage adapter: the document proxy streams the session's PDF through
// it (bytes, not an aggregate), so it is the one *store package those routes may import.
const blobAdapter = "github.com/esign-svc/esign/shared/azure/blobstore"

// storeImport says whether an import path is a storage package a session route must not import:
// an aggregate store (sessionstore, deliverystore, documentstore, batchstore, workflowstore),
// the table adapter, or any other *store package but the blob adapter.
func storeImport(p string) bool {
	base := path.Base(p)
	return base != "store" && strings.HasSuffix(base, "store") && p != blobAdapter
}

func TestSessionRoutesImportNoStore(t *testing.T) {
	t.Parallel()
	for _, dir := range sessionRoutePackages {
		pkg, err := build.ImportDir(filepath.Join("..", dir), 0)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		if len(pkg.GoFiles) == 0 || len(pkg.Imports) == 0 { // the package must have been read, not an empty folder
			t.Fatalf("%s: no Go source read", dir)
		}
		for _, imp := range pkg.Imports { // GoFiles' imports: tests may build a store for their set-up
			if storeImport(imp) {
				t.Errorf("dispatcher/%s imports %s: a session route calls esign.Sessions or esign.SessionReads, which reach the store through their interfaces", dir, imp)
			}
		}
	}
}

func TestStoreImportTellsStoresFromTheRest(t *testing.T) {
	t.Parallel()
	for p, want := range map[string]bool{
		"github.com/esign-svc/esign/shared/esign/sessionstore":     true,
		"github.com/esign-svc/esign/shared/delivery/deliverystore": true,
		"github.com/esign-svc/esign/shared/azure/tablestore":       true,
		"github.com/esign-svc/esign/shared/workflow/workflowstore": true,
		blobAdapter: false,
		"github.com/esign-svc/esign/shared/esign":                        false,
		"github.com/esign-svc/esign/shared/esign/sessionstore/storetest": false,
		"store": false,
	} {
		if got := storeImport(p); got != want {
			t.Errorf("storeImport(%q) = %v, want %v", p, got, want)
		}
	}
}
