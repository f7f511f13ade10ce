package e2e

import (
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/devtools/devkeys"
	"github.com/esign-svc/esign/devtools/funchost"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/licence"
)

// dispatcherWithLicence starts a second dispatcher on the suite's storage whose licence lists
// only features.
func dispatcherWithLicence(t *testing.T, features ...licence.Feature) *funchost.Host {
	t.Helper()
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
		Features: features, ExpiresAt: time.Now().Add(time.Hour).Unix()})
	if err != nil {
		t.Fatal(err)
	}
	h, _ := dispatcherWith(t, map[string]string{"LICENCE_FILE": "", "LICENCE": lic})
	return h
}

// dispatcherWith starts a second dispatcher on the suite's storage with the suite's settings
// changed by change (an empty value removes the setting); it returns the host and its output.
func dispatcherWith(t *testing.T, change map[string]string) (*funchost.Host, *funchost.Output) {
	t.Helper()
	settings := map[string]string{}
	for k, v := range svc.settings {
		settings[k] = v
	}
	for k, v := range change {
		if v == "" {
			delete(settings, k)
		} else {
			settings[k] = v
		}
	}
	root, _ := azuritetest.RepoRoot()
	out := &funchost.Output{}
	h, err := funchost.Start(context.Background(), funchost.Options{
		Apps: []string{filepath.Join(root, "dist", "dispatcher")}, Listen: "127.0.0.1:0", Settings: settings,
		HostKey: settings["HOST_KEY"], MasterKey: settings["MASTER_KEY"], Output: out, DisableSchedules: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h, out
}

// TestLicenceWithoutEsignRefusesSigningRoutes runs a second dispatcher whose licence lacks the
// esign and dispatch features: every signing and batch route answers 403
// licence_feature_missing, health still works.
func TestLicenceWithoutEsignRefusesSigningRoutes(t *testing.T) {
	t.Parallel()
	h := dispatcherWithLicence(t, licence.FeatureDelivery)
	tok := bearer(svc.jwt(t, tenantA, "Esign.Initiator", "Service.Admin"))
	for _, rt := range []struct{ method, path string }{
		{"POST", "/api/esign/session"},
		{"GET", "/api/esign/session/x/status"},
		{"GET", "/api/esign/session/by-group/x/status"},
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

// TestLicenceFeaturesFollowWhatTheRequestMakes runs a dispatcher licensed for dispatch and
// workflow only (DESIGN 14): a render that only renders is made; one whose templateSettings
// would auto-trigger a signing session is 403 naming esign, deliveries 403 naming delivery; a
// batch is accepted without esign, but one delivered by secure e-mail is 403 naming delivery; a
// workflow whose auto-trigger after the seal would sign or deliver is refused at create.
func TestLicenceFeaturesFollowWhatTheRequestMakes(t *testing.T) {
	t.Parallel()
	h := dispatcherWithLicence(t, licence.FeatureDispatch, licence.FeatureWorkflow)
	at := func(route string) string { return h.URL() + "/api/" + route + "?code=" + h.HostKey() }
	initiator := bearer(svc.jwt(t, tenantA, "Esign.Initiator"))
	refused := func(t *testing.T, r reply, feature string) {
		t.Helper()
		if r.Status != 403 || r.code() != "licence_feature_missing" || r.str("feature") != feature {
			t.Fatalf("%d %s, want 403 licence_feature_missing naming %s", r.Status, r.Raw, feature)
		}
	}
	pkg := uploadPackage(t, examplePackage(t))
	t.Run("render only", func(t *testing.T) {
		t.Parallel()
		if r := call(t, "POST", at("render"), renderBody(pkg, offerRecord()), initiator); r.Status != 201 {
			t.Fatalf("%d %s", r.Status, r.Raw)
		}
	})
	t.Run("render with esign", func(t *testing.T) {
		t.Parallel()
		body := renderBody(pkg, offerRecord())
		body["templateSettings"] = map[string]any{"esign": map[string]any{"enabled": true, "signers": offerSigners()}}
		refused(t, call(t, "POST", at("render"), body, initiator), "esign")
	})
	t.Run("render with delivery", func(t *testing.T) {
		t.Parallel()
		body := renderBody(pkg, offerRecord())
		body["templateSettings"] = map[string]any{"delivery": map[string]any{"enabled": true,
			"recipients": []any{map[string]any{"email": email(3)}}}}
		refused(t, call(t, "POST", at("render"), body, initiator), "delivery")
	})
	t.Run("batch", func(t *testing.T) {
		t.Parallel()
		r := call(t, "POST", at("render"), batchBody(pkg, offers(2), false), map[string]string{
			"Authorization": initiator["Authorization"], "Accept": "application/json"})
		if r.Status != 202 {
			t.Fatalf("%d %s", r.Status, r.Raw)
		}
	})
	t.Run("batch by secure e-mail", func(t *testing.T) {
		t.Parallel()
		records := offers(2)
		for i := range records {
			records[i]["recipientEmail"] = email(4)
		}
		body := batchBody(pkg, records, false)
		body["templateSettings"] = map[string]any{"distribution": map[string]any{"deliveryConfig": map[string]any{"mode": "secure-email"}}}
		refused(t, call(t, "POST", at("render"), body, initiator), "delivery")
	})
	wpkg := wfPackage(t, false)
	t.Run("workflow", func(t *testing.T) {
		t.Parallel()
		if r := call(t, "POST", at("workflow"), wfBody(wpkg), initiator); r.Status != 201 {
			t.Fatalf("%d %s", r.Status, r.Raw)
		}
	})
	t.Run("workflow with esign", func(t *testing.T) {
		t.Parallel()
		body := wfBody(wpkg)
		body["templateSettings"].(map[string]any)["esign"] = map[string]any{"enabled": true, "signers": offerSigners()}
		refused(t, call(t, "POST", at("workflow"), body, initiator), "esign")
	})
	t.Run("workflow with delivery", func(t *testing.T) {
		t.Parallel()
		body := wfBody(wpkg)
		body["templateSettings"].(map[string]any)["delivery"] = map[string]any{"enabled": true,
			"recipients": []any{map[string]any{"email": email(5)}}}
		refused(t, call(t, "POST", at("workflow"), body, initiator), "delivery")
	})
}

// TestBatchNeedsOnlyTheDispatchGate runs a dispatcher licensed for dispatch only and submits a
// batch as a caller who holds only Dispatch.Approver (the batch routes' role, no signing role):
// 202 with the receipt PDF and the X-Service-* headers (once 403, the route asked for
// Esign.Initiator first). The batch is then read by the same caller. A single render keeps its
// gate: the same caller is 403 role_required, an Esign.Initiator renders (a render that only
// renders needs no feature).
func TestBatchNeedsOnlyTheDispatchGate(t *testing.T) {
	t.Parallel()
	h := dispatcherWithLicence(t, licence.FeatureDispatch)
	at := func(route string) string { return h.URL() + "/api/" + route + "?code=" + h.HostKey() }
	dispatcher := newPerson(t, tenantA, "dispatcher", "Dispatch.Approver")
	pkg := uploadPackage(t, examplePackage(t))
	r := call(t, "POST", at("render"), batchBody(pkg, offers(2), true), dispatcher.h())
	if r.Status != http.StatusAccepted || !strings.HasPrefix(string(r.Raw), "%PDF-") || r.Header.Get("X-Service-DispatchReadiness") != "READY" {
		t.Fatalf("batch: %d %v %.200s", r.Status, r.Header, r.Raw)
	}
	id := r.Header.Get("X-Service-BatchId")
	if got := call(t, "GET", at("dispatch/batch/"+id), nil, dispatcher.h()); got.Status != http.StatusOK || got.str("state") != "pending-approval" {
		t.Fatalf("the submitted batch: %d %s", got.Status, got.Raw)
	}
	if r := call(t, "POST", at("render"), renderBody(pkg, offerRecord()), dispatcher.h()); r.Status != http.StatusForbidden || r.code() != "role_required" {
		t.Fatalf("single render by Dispatch.Approver: %d %s", r.Status, r.Raw)
	}
	if r := call(t, "POST", at("render"), renderBody(pkg, offerRecord()), bearer(svc.jwt(t, tenantA, "Esign.Initiator"))); r.Status != http.StatusCreated {
		t.Fatalf("single render by Esign.Initiator: %d %s", r.Status, r.Raw)
	}
}
