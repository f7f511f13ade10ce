package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestDocumentRangeThroughTheHost: the forwarded document route keeps the Range header and the
// 206 answer intact through the Functions host.
func TestDocumentRangeThroughTheHost(t *testing.T) {
	t.Parallel()
	pdf, err := os.ReadFile(filepath.Join("testdata", "template-3p.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	r := createSession(t, tenantA, createBody(t, "single", 1))
	a := activate(t, slotsOf(t, r, "slots")[0].Link)
	if a.Status != http.StatusOK {
		t.Fatalf("activate %d %s", a.Status, a.Raw)
	}
	url := svc.host.URL() + "/api/esign/document/" + a.str("accessToken")
	got := call(t, "GET", url, nil, map[string]string{"Range": "bytes=10-19"})
	if got.Status != http.StatusPartialContent || string(got.Raw) != string(pdf[10:20]) ||
		got.Header.Get("Content-Range") != "bytes 10-19/"+strconv.Itoa(len(pdf)) {
		t.Fatalf("range through the host: %d %q %v", got.Status, got.Raw, got.Header)
	}
}
