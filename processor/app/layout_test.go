package app

import (
	"github.com/esign-svc/esign/shared/apptest"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/esign-svc/esign/processor"

// jobPackages are the processor's job packages: every package directly under processor/ but
// app (the wiring), cmd, functions (the function folders) and internal (what jobs share).
func jobPackages(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir("..")
	if err != nil {
		t.Fatal(err)
	}
	var jobs []string
	for _, e := range entries {
		if !e.IsDir() || slices.Contains([]string{"app", "cmd", "functions", "internal"}, e.Name()) {
			continue
		}
		if gofiles, _ := filepath.Glob(filepath.Join("..", e.Name(), "*.go")); len(gofiles) > 0 {
			jobs = append(jobs, module+"/"+e.Name())
		}
	}
	if len(jobs) < 10 {
		t.Fatalf("found only the job packages %v", jobs)
	}
	return jobs
}

// golist lists, by go list, each package's transitive imports (field "Deps") or its own
// ("Imports"), of its non-test files.
func golist(t *testing.T, field string, pkgs ...string) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-f", `{{.ImportPath}} {{join .` + field + ` " "}}`}, pkgs...)...)
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	m := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		m[f[0]] = f[1:]
	}
	return m
}

// TestNoJobImportsAnotherJob: a job package imports no other job package, directly or through
// another package; what two jobs share lives in shared/... or processor/internal/... (issue 23:
// workflowseal imported seal and workflowcallback, seal imported portalpurge).
func TestNoJobImportsAnotherJob(t *testing.T) {
	t.Parallel()
	jobs := jobPackages(t)
	for pkg, ds := range golist(t, "Deps", jobs...) {
		for _, d := range ds {
			if d != pkg && slices.Contains(jobs, d) {
				t.Errorf("job package %s imports job package %s", pkg, d)
			}
		}
	}
}

// TestStoresAreNoProtocol: no aggregate store (nor the kernel's aggstore they are built on)
// imports a protocol package, the Functions protocol, the HTTP layer or net/http (issue 23: the
// workflow store read the jobs' messages through funcproto; that reader is
// processor/internal/jobkit.Workflow now; "stores import no protocol package").
func TestStoresAreNoProtocol(t *testing.T) {
	t.Parallel()
	stores := []string{
		"github.com/esign-svc/esign/shared/kernel/aggstore",
		"github.com/esign-svc/esign/shared/esign/sessionstore",
		"github.com/esign-svc/esign/shared/delivery/deliverystore",
		"github.com/esign-svc/esign/shared/dispatch/batchstore",
		"github.com/esign-svc/esign/shared/workflow/workflowstore",
		"github.com/esign-svc/esign/shared/document/documentstore",
	}
	protocol := []string{"github.com/esign-svc/esign/shared/funcproto", "github.com/esign-svc/esign/shared/web", "net/http"}
	imports := golist(t, "Imports", stores...)
	for _, store := range stores {
		ds, ok := imports[store]
		if !ok {
			t.Errorf("go list did not list %s", store)
		}
		for _, d := range ds {
			if slices.Contains(protocol, d) {
				t.Errorf("%s imports %s", store, d)
			}
		}
	}
}

// TestFunctionNamesAreConstantsOfTheirJob: every entry of a job package's function table
// ([]jobkit.Function{...} in its non-test files) is named by a string constant declared in that
// package; each such constant has its folder processor/functions/<Name>, and each folder is
// named by exactly one table entry (issue 23: three function names were string literals in
// app.go).
func TestFunctionNamesAreConstantsOfTheirJob(t *testing.T) {
	t.Parallel()
	folders, err := filepath.Glob(filepath.Join("..", "functions", "*", "function.json"))
	if err != nil || len(folders) == 0 {
		t.Fatalf("folders %v, %v", folders, err)
	}
	named := map[string]string{} // folder -> the job constant naming it
	for _, f := range folders {
		named[filepath.Base(filepath.Dir(f))] = ""
	}
	for _, pkg := range jobPackages(t) {
		dir := filepath.Join("..", filepath.Base(pkg))
		consts, tables := functionTables(t, dir)
		if len(tables) == 0 {
			t.Errorf("%s: no function table ([]jobkit.Function{...})", pkg)
		}
		for _, e := range tables {
			id, ok := e.(*ast.Ident)
			if !ok {
				t.Errorf("%s: a function is named by %T, not by a constant of the package", pkg, e)
				continue
			}
			name, ok := consts[id.Name]
			if !ok {
				t.Errorf("%s: function name %s is not a string constant declared in the package", pkg, id.Name)
				continue
			}
			prev, ok := named[name]
			switch {
			case !ok:
				t.Errorf("%s.%s = %q has no folder processor/functions/%s", pkg, id.Name, name, name)
			case prev != "":
				t.Errorf("folder %s is named twice: %s and %s.%s", name, prev, pkg, id.Name)
			default:
				named[name] = pkg + "." + id.Name
			}
		}
	}
	for folder, c := range named {
		if c == "" {
			t.Errorf("folder processor/functions/%s has no constant in a job's function table", folder)
		}
	}
}

// functionTables parses dir's non-test Go files: its string constants (name -> value) and the
// Name of every element of a []jobkit.Function literal.
func functionTables(t *testing.T, dir string) (map[string]string, []ast.Expr) {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string]string{}
	var names []ast.Expr
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.GenDecl:
				if n.Tok != token.CONST {
					return true
				}
				for _, spec := range n.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, id := range vs.Names {
						if i < len(vs.Values) {
							if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
								consts[id.Name], _ = strconv.Unquote(lit.Value)
							}
						}
					}
				}
			case *ast.CompositeLit:
				arr, ok := n.Type.(*ast.ArrayType)
				if !ok {
					return true
				}
				if sel, ok := arr.Elt.(*ast.SelectorExpr); !ok || sel.Sel.Name != "Function" {
					return true
				}
				for _, el := range n.Elts {
					cl, ok := el.(*ast.CompositeLit)
					if !ok || len(cl.Elts) == 0 {
						t.Fatalf("%s: a function table entry that is not {Name: ..., Handler: ...}", path)
					}
					name := cl.Elts[0] // positional {Name, Handler}
					for _, e := range cl.Elts {
						if kv, ok := e.(*ast.KeyValueExpr); ok {
							if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "Name" {
								name = kv.Value
							}
						}
					}
					names = append(names, name)
				}
			}
			return true
		})
	}
	return consts, names
}

// TestJobsHaveOneConstructorShape: every job package is built one way, New(Deps) (*Job, error),
// with its table as (*Job).Functions() []jobkit.Function, and none panics on a missing
// dependency (issue 23: six ways to build a job, seal.New panicked).
func TestJobsHaveOneConstructorShape(t *testing.T) {
	t.Parallel()
	for _, pkg := range jobPackages(t) {
		files, err := filepath.Glob(filepath.Join("..", filepath.Base(pkg), "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		var sigs []string
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, decl := range f.Decls {
				fd, ok := decl.(*ast.FuncDecl)
				if !ok || !fd.Name.IsExported() {
					continue
				}
				sig := fd.Name.Name + types(fset, fd.Type.Params) + " " + types(fset, fd.Type.Results)
				if fd.Recv != nil {
					sig = types(fset, fd.Recv) + "." + sig
				}
				sigs = append(sigs, sig)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if c, ok := n.(*ast.CallExpr); ok {
					if id, ok := c.Fun.(*ast.Ident); ok && id.Name == "panic" {
						t.Errorf("%s: panic at %s", pkg, fset.Position(c.Pos()))
					}
				}
				return true
			})
		}
		for _, want := range []string{"New(Deps) (*Job, error)", "(*Job).Functions() ([]jobkit.Function)"} {
			if !slices.Contains(sigs, want) {
				t.Errorf("%s: no %s among its exported functions %v", pkg, want, sigs)
			}
		}
		for _, s := range sigs {
			if strings.HasPrefix(s, "New") && s != "New(Deps) (*Job, error)" {
				t.Errorf("%s: a second constructor %s", pkg, s)
			}
		}
	}
}

// types is a field list's types as source, in parentheses.
func types(fset *token.FileSet, fl *ast.FieldList) string {
	var out []string
	if fl != nil {
		for _, f := range fl.List {
			var b strings.Builder
			_ = printer.Fprint(&b, fset, f.Type)
			for range max(1, len(f.Names)) {
				out = append(out, b.String())
			}
		}
	}
	return "(" + strings.Join(out, ", ") + ")"
}

// TestOnlyTheWiringImportsAStore: no package of the processor but this one imports an
// aggregate's store, the kernel's store half or the table adapter (issue 23). A job decodes its
// message, calls its aggregate's use-case service (esign.SessionJobs, delivery.Deliveries,
// dispatch.Batches, workflow.Workflows, ...) and answers; this package builds the stores.
func TestOnlyTheWiringImportsAStore(t *testing.T) {
	t.Parallel()
	found, wiring := apptest.StoreImports(t, "..", module+"/app", "./...")
	if wiring == 0 { // the rule must see the stores the wiring builds
		t.Fatal("the wiring imports no store by this rule")
	}
	for _, f := range found {
		t.Errorf("%s: a job calls its aggregate's use-case service; only app/ builds stores", f)
	}
}
