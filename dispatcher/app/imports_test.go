package app

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// adapterImports are the storage adapters no dispatcher handler may import (issue 23): a route
// calls a use case in the domain, whose store builds the table operations.
var adapterImports = []string{"github.com/esign-svc/esign/shared/azure/tablestore"}

// forbiddenImports lists "file: import" for every forbidden import of a Go source (tests
// excluded) under root.
func forbiddenImports(t *testing.T, root string) (found []string, files int) {
	t.Helper()
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		files++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			for _, bad := range adapterImports {
				if p == bad {
					found = append(found, path+": "+p)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found, files
}

func TestNoHandlerImportsTheTableAdapter(t *testing.T) {
	t.Parallel()
	found, files := forbiddenImports(t, "..")
	if files < 30 { // the walk must have seen the dispatcher's packages, not an empty folder
		t.Fatalf("scanned only %d Go files under dispatcher/", files)
	}
	for _, f := range found {
		t.Errorf("%s: handlers call a use case (esign.Sessions and its peers); the store builds table operations", f)
	}
}

func TestForbiddenImportsFindsOne(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := "package x\n\nimport _ \"github.com/esign-svc/esign/shared/azure/tablestore\"\n"
	if err := os.WriteFile(filepath.Join(dir, "x.go"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "x_test.go"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	found, files := forbiddenImports(t, dir)
	if files != 1 || len(found) != 1 || !strings.HasSuffix(found[0], "x.go: "+adapterImports[0]) {
		t.Fatalf("files %d, found %q; want x.go alone", files, found)
	}
}
