package e2e

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/delivery"
)

// putSigned stores b where the seal job writes a session's signed PDF,
// signed/<tenant>/<groupId>/signed.pdf, and returns that pdfBlobPath.
func putSigned(t *testing.T, tenant string, b []byte) string {
	t.Helper()
	if err := blobs(t).EnsureContainer(context.Background(), "signed"); err != nil {
		t.Fatal(err)
	}
	path := "signed/" + tenant + "/" + uuid.NewString() + "/signed.pdf"
	sealPutBlob(t, path, b)
	return path
}

// A delivery sends a signed PDF of the caller's own tenant: the recipient downloads its bytes
// and the library upload carries them. Another tenant's signed PDF is refused (400
// invalid_blob_path on pdfBlobPath), exactly as a path that holds nothing is, so the answer
// does not reveal what another tenant stored.
func TestDeliverySignedDocument(t *testing.T) {
	t.Parallel()
	want, err := os.ReadFile(filepath.Join("testdata", "template-3p.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	path := putSigned(t, tenantA, want)

	t.Run("own tenant", func(t *testing.T) {
		t.Parallel()
		body := deliveryBody(t, "secure-email", 1)
		body["pdfBlobPath"] = path
		d := createDelivery(t, tenantA, body)[0]
		r := recipientCall(t, "GET", d.ID, "/sas", d.Token, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("sas: %d %s", r.Status, r.Raw)
		}
		checkSAS(t, r.str("sasUrl"), r.str("expiresAt"), want)
	})
	t.Run("library upload", func(t *testing.T) {
		t.Parallel()
		body := deliveryBody(t, "sharepoint", 1)
		body["pdfBlobPath"] = path
		body["documentName"] = "Signed " + uuid.NewString()[:8] + ".pdf"
		corr := body["correlationId"].(string)
		d := createDelivery(t, tenantA, body)[0]
		var s map[string]any
		eventually(t, "the upload", func() bool {
			s = summaryOf(t, tenantA, corr, d.ID)
			return s["uploadState"] != "pending"
		})
		if s["uploadState"] != "uploaded" {
			t.Fatalf("summary: %v", s)
		}
		got, ok := graphStub.file("drive-site-legal|Deliveries/2026/" + body["documentName"].(string))
		if !ok || !bytes.Equal(got, want) {
			t.Fatalf("the library holds %d bytes (found %v), want the %d of the signed PDF", len(got), ok, len(want))
		}
	})
	t.Run("another tenant", func(t *testing.T) {
		t.Parallel()
		other := putSigned(t, tenantB, want)
		for _, tc := range []struct{ tenant, path string }{
			{tenantB, path},  // tenant A's signed PDF, asked for by tenant B
			{tenantA, other}, // tenant B's, asked for by tenant A
			{tenantA, "signed/" + tenantB + "/" + uuid.NewString() + "/signed.pdf"}, // nothing there: the same answer
			{tenantA, "signed/" + strings.TrimPrefix(path, "signed/"+tenantA+"/")},  // no tenant prefix at all
		} {
			body := deliveryBody(t, "secure-email", 1)
			body["pdfBlobPath"] = tc.path
			r := call(t, "POST", svc.url("delivery"), body, bearer(svc.jwt(t, tc.tenant, "Esign.Initiator")))
			if r.Status != http.StatusBadRequest || r.code() != "invalid_blob_path" || !contains(r.fields(), "pdfBlobPath") {
				t.Errorf("tenant %s, %s: %d %s, want 400 invalid_blob_path on pdfBlobPath", tc.tenant, tc.path, r.Status, r.Raw)
			}
			if got := deliverySessions(t, tc.tenant, body["correlationId"].(string)); len(got) != 0 {
				t.Errorf("the refused create stored %d sessions", len(got))
			}
		}
	})
}

// Revoke ends the download URLs already issued, at once: the URL that worked before the revoke
// answers 404 after it, while the other deliveries of the same document keep their URLs and
// can issue new ones. The source document stays.
func TestDeliveryRevokeEndsIssuedURLs(t *testing.T) {
	t.Parallel()
	want, err := os.ReadFile(filepath.Join("testdata", "plain-1p.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	body := deliveryBody(t, "secure-email", 2)
	ds := createDelivery(t, tenantA, body)
	issue := func(d delivered, method, sub string) string {
		t.Helper()
		r := recipientCall(t, method, d.ID, sub, d.Token, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("%s %s: %d %s", d.ID, sub, r.Status, r.Raw)
		}
		checkSAS(t, r.str("sasUrl"), r.str("expiresAt"), want)
		return r.str("sasUrl")
	}
	revoked := []string{issue(ds[0], "GET", "/sas"), issue(ds[0], "POST", "/download")}
	kept := issue(ds[1], "GET", "/sas")

	if r := call(t, "POST", svc.url("delivery/"+ds[0].ID+"/revoke"), nil, bearer(svc.jwt(t, tenantA, "Esign.Initiator"))); r.Status != http.StatusOK {
		t.Fatalf("revoke: %d %s", r.Status, r.Raw)
	}
	for i, u := range revoked {
		if code, _ := fetch(t, u); code != http.StatusNotFound && code != http.StatusForbidden {
			t.Errorf("URL %d issued before the revoke answers %d after it, want 403 or 404", i, code)
		}
	}
	if code, got := fetch(t, kept); code != http.StatusOK || !bytes.Equal(got, want) {
		t.Fatalf("the other delivery's URL: %d, %d bytes", code, len(got))
	}
	issue(ds[1], "POST", "/download")
	checkGone(t, ds[0].ID, ds[0].Token, "delivery_revoked")
	src := strings.SplitN(body["pdfBlobPath"].(string), "/", 2)
	if ok, err := blobs(t).Exists(context.Background(), src[0], src[1]); err != nil || !ok {
		t.Fatalf("the source document is gone after the revoke (%v)", err)
	}
	if !contains(auditKinds(t, ds[0].ID), delivery.EvRevoked) {
		t.Errorf("no %s event", delivery.EvRevoked)
	}
}

// fetch GETs u and returns the status and body.
func fetch(t *testing.T, u string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}
