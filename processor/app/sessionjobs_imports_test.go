package app

import (
	"strings"
	"testing"
)

// sessionJobs are the job packages that reach signing sessions only through the domain's
// use-case service esign.SessionJobs (issue 23); invitecheck reaches deliveries through
// delivery.InviteChecks.
var sessionJobs = []string{"./expiry", "./seal", "./signeddelivery", "./notifyjob", "./portalpurge", "./invitecheck"}

// TestSessionJobsImportNoStore: the signing-session jobs call one use case per transition or
// read; only the app's wiring constructs stores. A store is a package of the module whose name
// ends in "store" (sessionstore, deliverystore, aggstore, tablestore, ...), but the blob client
// the seal reads the document and writes its outputs with.
func TestSessionJobsImportNoStore(t *testing.T) {
	t.Parallel()
	const module = "github.com/esign-svc/esign/"
	imports := golist(t, "Imports", sessionJobs...)
	if len(imports) != len(sessionJobs) {
		t.Fatalf("go list answered %d packages, want %d", len(imports), len(sessionJobs))
	}
	for pkg, imps := range imports {
		for _, imp := range imps {
			if strings.HasPrefix(imp, module) && strings.HasSuffix(imp, "store") && imp != module+"shared/azure/blobstore" {
				t.Errorf("%s imports %s: a session job calls esign.SessionJobs", pkg, imp)
			}
		}
	}
}
