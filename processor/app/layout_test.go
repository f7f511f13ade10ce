package app

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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

// TestWorkflowStoreIsNoProtocol: the workflow store, a domain package, does not import the
// Functions protocol (issue 23: it read the jobs' messages through funcproto; that reader is
// processor/internal/jobkit.Workflow now).
func TestWorkflowStoreIsNoProtocol(t *testing.T) {
	t.Parallel()
	const store = "github.com/esign-svc/esign/shared/workflow/workflowstore"
	for _, d := range golist(t, "Imports", store)[store] {
		if d == "github.com/esign-svc/esign/shared/funcproto" {
			t.Fatalf("%s imports %s", store, d)
		}
	}
}
