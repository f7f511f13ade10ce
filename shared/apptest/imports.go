package apptest

import (
	"os/exec"
	"path"
	"strings"
	"testing"
)

// module is the import path prefix of every package of the repository.
const module = "github.com/esign-svc/esign/"

// IsStore reports whether an import path is an aggregate's store, the kernel's store half or the
// table adapter (sessionstore, batchstore, aggstore, tablestore, ...): a package of the
// repository whose name ends in "store", but the blob and queue clients, which hold no
// aggregate's rows. The rule of issue 23: in either app only the wiring (app/) imports one; a
// handler or job calls its aggregate's use-case service.
func IsStore(importPath string) bool {
	switch importPath {
	case module + "shared/azure/blobstore", module + "shared/azure/queuestore":
		return false
	}
	return strings.HasPrefix(importPath, module) && strings.HasSuffix(path.Base(importPath), "store")
}

// Imports lists, by go list run in dir, the imports of the non-test files of each package the
// patterns match, by import path.
func Imports(tb testing.TB, dir string, patterns ...string) map[string][]string {
	tb.Helper()
	cmd := exec.Command("go", append([]string{"list", "-f", `{{.ImportPath}} {{join .Imports " "}}`}, patterns...)...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("go list %v: %v", patterns, err)
	}
	m := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		m[f[0]] = f[1:]
	}
	return m
}

// StoreImports are the store imports (IsStore) of every package the patterns match but the
// wiring package, as "package imports store" lines; wiringStores is how many stores the wiring
// imports (a rule that sees none there sees nothing).
func StoreImports(tb testing.TB, dir, wiring string, patterns ...string) (found []string, wiringStores int) {
	tb.Helper()
	for pkg, imps := range Imports(tb, dir, patterns...) {
		for _, imp := range imps {
			switch {
			case !IsStore(imp):
			case pkg == wiring:
				wiringStores++
			default:
				found = append(found, pkg+" imports "+imp)
			}
		}
	}
	return found, wiringStores
}
