package delivery

import (
	"testing"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/blobpath"
)

func TestSourceOfConfinesSignedDocumentsToTheTenant(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		tenant, path string
		ok           bool
	}{
		{"t1", "documents/a.pdf", true},
		{"t1", "documents/t2/a.pdf", true}, // documents is not per tenant (as for sessions)
		{"t1", "signed/t1/g1/signed.pdf", true},
		{"t1", "signed/t1/g1/certificate.pdf", true},
		{"t1", "signed/t2/g1/signed.pdf", false},
		{"t1", "signed/t1x/g1/signed.pdf", false}, // a tenant id that only starts like the caller's
		{"t1", "signed/t1", false},
		{"t1", "signed/g1/signed.pdf", false},
		{"", "signed/t1/g1/signed.pdf", false},
		{"t1", "evidence/t1/g1/evidence.jsonl", false},
		{"t1", "deliveries/x.pdf", false}, // another delivery's copy
		{"t1", "signed/t1/../t2/g1/signed.pdf", false},
	} {
		_, err := SourceOf(&Session{TenantID: tc.tenant, PDFBlobPath: tc.path})
		if tc.ok != (err == nil) {
			t.Errorf("tenant %q path %q: err %v, want ok=%v", tc.tenant, tc.path, err, tc.ok)
			continue
		}
		if err != nil {
			e, _ := apperr.As(err)
			if e == nil || e.Kind != apperr.KindInvalid || e.Code != blobpath.CodeInvalidBlobPath ||
				len(e.Fields) != 1 || e.Fields[0].Field != "pdfBlobPath" {
				t.Errorf("%q: %+v, want 400 invalid_blob_path naming pdfBlobPath", tc.path, err)
			}
		}
	}
}

func TestCopyPathIsPerDelivery(t *testing.T) {
	t.Parallel()
	a, b := CopyPath(&Session{TenantID: "t1", DeliveryID: "d-1"}), CopyPath(&Session{TenantID: "t1", DeliveryID: "d-2"})
	if a.Container != ContainerCopies || a.Name != "t1/d-1.pdf" || a == b {
		t.Fatalf("copy paths %v %v", a, b)
	}
	if _, err := blobpath.ParseIn("p", a.String(), ContainerCopies); err != nil {
		t.Fatalf("copy path %q does not parse: %v", a, err)
	}
}

// TestCopyPath: a delivery's download copy lies under its tenant's folder; a revoke also reaches
// the place copies were made before tenant folders.
func TestCopyPath(t *testing.T) {
	t.Parallel()
	s := &Session{TenantID: "11111111-1111-4111-8111-111111111111", DeliveryID: "d-1"}
	if got := CopyPath(s).String(); got != "deliveries/11111111-1111-4111-8111-111111111111/d-1.pdf" {
		t.Fatalf("CopyPath %s", got)
	}
	var all []string
	for _, p := range CopyPaths(s) {
		all = append(all, p.String())
	}
	if len(all) != 2 || all[0] != CopyPath(s).String() || all[1] != "deliveries/d-1.pdf" {
		t.Fatalf("CopyPaths %v", all)
	}
}
