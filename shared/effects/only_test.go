package effects

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// outputAPI is the call that adds a queue output to an invocation.
const (
	funcprotoPath = "github.com/esign-svc/esign/shared/funcproto"
	outputAPI     = "AddOutput"
)

// addOutputCalls lists file:line of every call (or use as a value) of funcproto.AddOutput in
// the non-test Go files under dir, outside funcproto itself.
func addOutputCalls(t *testing.T, dir string) []string {
	t.Helper()
	var found []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == "node_modules" || n == "testdata" || strings.HasPrefix(n, ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		local := "" // funcproto's name in this file
		for _, im := range f.Imports {
			if p, _ := strconv.Unquote(im.Path.Value); p == funcprotoPath {
				local = "funcproto"
				if im.Name != nil {
					local = im.Name.Name
				}
			}
		}
		if local == "" {
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == outputAPI {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == local {
					found = append(found, fset.Position(sel.Pos()).String())
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// Only this package adds queue outputs: no other package of the repository (the apps, the
// domain, the connector, the portal, the tests' helpers) calls funcproto.AddOutput.
func TestOnlyEffectsAddsQueueOutputs(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	here, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	mine := 0
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || e.Name() == "node_modules" {
			continue
		}
		for _, at := range addOutputCalls(t, filepath.Join(root, e.Name())) {
			abs, _ := filepath.Abs(at)
			if filepath.Dir(abs) == here {
				mine++
				continue
			}
			t.Errorf("%s: funcproto.%s outside shared/effects; declare the queue in shared/queues and queue through effects", at, outputAPI)
		}
	}
	if mine == 0 {
		t.Fatal("found no call in shared/effects itself: the scan does not see the calls")
	}
}
