package app

import (
	"os/exec"
	"path"
	"strings"
	"testing"
)

// batchRoutePackages are the route packages that reach their aggregate only through its use-case
// service (issue 23: dispatchapi through dispatch.Batches, reads included).
var batchRoutePackages = []string{"github.com/esign-svc/esign/dispatcher/dispatchapi"}

// batchRouteStoreImports lists, by go list, the domain stores (shared/.../<name>store but the Azure
// adapters) each package's non-test files import.
func batchRouteStoreImports(t *testing.T, pkgs ...string) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-f", `{{.ImportPath}} {{join .Imports " "}}`}, pkgs...)...)
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const shared = "github.com/esign-svc/esign/shared/"
	m := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		m[f[0]] = []string{}
		for _, imp := range f[1:] {
			if strings.HasPrefix(imp, shared) && !strings.HasPrefix(imp, shared+"azure/") && strings.HasSuffix(path.Base(imp), "store") {
				m[f[0]] = append(m[f[0]], imp)
			}
		}
	}
	return m
}

// TestBatchRoutesImportNoAggregateStore: the batch routes import no store; the wiring (this
// package) builds it and the routes call dispatch.Batches.
func TestBatchRoutesImportNoAggregateStore(t *testing.T) {
	t.Parallel()
	const wiring = "github.com/esign-svc/esign/dispatcher/app"
	found := batchRouteStoreImports(t, append([]string{wiring}, batchRoutePackages...)...)
	if len(found[wiring]) == 0 { // the rule must see the stores the wiring builds
		t.Fatalf("the wiring imports no store by this rule")
	}
	for _, pkg := range batchRoutePackages {
		imps, ok := found[pkg]
		if !ok {
			t.Fatalf("go list did not list %s", pkg)
		}
		for _, imp := range imps {
			t.Errorf("%s imports %s: its routes call dispatch.Batches", pkg, imp)
		}
	}
}
