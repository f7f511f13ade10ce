package app

import (
	"strings"
	"testing"
)

// useCaseJobs are the job packages that reach their aggregates only through the domain's
// use-case services (issue 23): delivery.Deliveries; esign.SessionJobs for the signing-session
// jobs (invitecheck reaches deliveries through delivery.InviteChecks).
var useCaseJobs = []string{"./deliveryupload",
	"./expiry", "./seal", "./signeddelivery", "./notifyjob", "./portalpurge", "./invitecheck"}

// TestDeliveryJobsImportNoStore: the delivery and signing-session jobs call one use case per
// transition or read; only the app's wiring constructs stores (a package of the module whose
// name ends in "store", but the blob client the upload and the seal read the document with).
func TestDeliveryJobsImportNoStore(t *testing.T) {
	t.Parallel()
	const module = "github.com/esign-svc/esign/"
	imports := golist(t, "Imports", useCaseJobs...)
	if len(imports) != len(useCaseJobs) {
		t.Fatalf("go list answered %d packages, want %d", len(imports), len(useCaseJobs))
	}
	for pkg, imps := range imports {
		for _, imp := range imps {
			if strings.HasPrefix(imp, module) && strings.HasSuffix(imp, "store") && imp != module+"shared/azure/blobstore" {
				t.Errorf("%s imports %s: a job calls its aggregate's use case (delivery.Deliveries, esign.SessionJobs)", pkg, imp)
			}
		}
	}
}
