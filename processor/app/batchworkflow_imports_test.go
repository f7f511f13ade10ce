package app

import (
	"path"
	"slices"
	"strings"
	"testing"
)

// batchWorkflowJobs are the jobs that reach their aggregate only through its use-case service
// (issue 23: dispatch.Batches for the batch jobs, workflow.Workflows for the workflow jobs and
// jobkit's workflow read).
var batchWorkflowJobs = []string{
	module + "/dispatchjob",
	module + "/workflowseal",
	module + "/workflowtrigger",
	module + "/workflowcallback",
	module + "/workflownotify",
	module + "/internal/jobkit",
}

// isDomainStoreImport reports whether an import is a store of the domain (sessionstore,
// batchstore, workflowstore... and the kernel's aggstore), as opposed to an Azure adapter
// (shared/azure/blobstore, queuestore: no aggregate's rows).
func isDomainStoreImport(imp string) bool {
	const shared = "github.com/esign-svc/esign/shared/"
	return strings.HasPrefix(imp, shared) && !strings.HasPrefix(imp, shared+"azure/") && strings.HasSuffix(path.Base(imp), "store")
}

// TestBatchAndWorkflowJobsImportNoAggregateStore: the batch and workflow jobs import no
// aggregate store; only the wiring (this package) builds the stores and hands them to the
// jobs, which call one use-case method per read or transition.
func TestBatchAndWorkflowJobsImportNoAggregateStore(t *testing.T) {
	t.Parallel()
	imports := golist(t, "Imports", append([]string{module + "/app"}, batchWorkflowJobs...)...)
	// the rule must see a store where one is imported: the wiring builds them
	if !slices.ContainsFunc(imports[module+"/app"], isDomainStoreImport) {
		t.Fatalf("the wiring imports no aggregate store by this rule: %v", imports[module+"/app"])
	}
	for _, pkg := range batchWorkflowJobs {
		imps, ok := imports[pkg]
		if !ok {
			t.Fatalf("go list did not list %s", pkg)
		}
		for _, imp := range imps {
			if isDomainStoreImport(imp) {
				t.Errorf("%s imports %s: it calls its aggregate's use cases (dispatch.Batches, workflow.Workflows)", pkg, imp)
			}
		}
	}
}
