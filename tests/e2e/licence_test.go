package e2e

import (
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/licence"
	"github.com/esign-svc/esign/tests/devkeys"
	"github.com/esign-svc/esign/tests/funchost"
)

// TestLicenceWithoutEsignRefusesSigningRoutes runs a second dispatcher whose licence lacks the
// esign and dispatch features: every signing and batch route answers 403
// licence_feature_missing, health still works.
func TestLicenceWithoutEsignRefusesSigningRoutes(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join(svc.keysDir, devkeys.KeysDir, devkeys.FileOperatorKey))
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(raw)
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	lic, err := licence.Sign(k.(ed25519.PrivateKey), licence.Claims{Issuer: "test", CustomerID: "c",
		Features: []licence.Feature{licence.FeatureDelivery}, ExpiresAt: time.Now().Add(time.Hour).Unix()})
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string]string{}
	for k, v := range svc.settings {
		settings[k] = v
	}
	delete(settings, "LICENCE_FILE")
	settings["LICENCE"] = lic
	root, _ := azuritetest.RepoRoot()
	h, err := funchost.Start(context.Background(), funchost.Options{
		Apps: []string{filepath.Join(root, "dist", "dispatcher")}, Listen: "127.0.0.1:0", Settings: settings,
		HostKey: settings["HOST_KEY"], MasterKey: settings["MASTER_KEY"], Output: &funchost.Output{}, DisableSchedules: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	tok := bearer(svc.jwt(t, tenantA, "Esign.Initiator", "Service.Admin"))
	for _, rt := range []struct{ method, path string }{
		{"POST", "/api/esign/session"},
		{"GET", "/api/esign/session/x/status"},
		{"POST", "/api/esign/session/x/resend-invite"},
		{"POST", "/api/esign/session/x/cancel"},
		{"POST", "/api/esign/session/x/revoke"},
		{"DELETE", "/api/esign/session/x/slots/0/email"},
		{"GET", "/api/dispatch/batch"},
		{"GET", "/api/dispatch/batch/x"},
		{"GET", "/api/dispatch/batch/x/records"},
		{"GET", "/api/dispatch/batch/x/receipt"},
		{"POST", "/api/dispatch/batch/x/decide"},
		{"POST", "/api/dispatch/batch/x/cancel"},
	} {
		r := call(t, rt.method, h.URL()+rt.path+"?code="+h.HostKey(), createBody(t, "single", 1), tok)
		if r.Status != 403 || r.code() != "licence_feature_missing" {
			t.Errorf("%s %s: %d %s", rt.method, rt.path, r.Status, r.Raw)
		}
	}
	// The document upload serves delivery as well as signing: under this licence it reads the
	// body (not a PDF: 400) instead of answering 403.
	r := call(t, "POST", h.URL()+"/api/documents?code="+h.HostKey(), "not a PDF",
		map[string]string{"Authorization": tok["Authorization"], "Content-Type": "application/pdf"})
	if r.Status != 400 || r.code() != "pdf_unreadable" {
		t.Errorf("POST /api/documents: %d %s", r.Status, r.Raw)
	}
	if r := call(t, "GET", h.URL()+"/api/health", nil, nil); r.Status != 200 {
		t.Errorf("health %d", r.Status)
	}
}
