package app

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/esign-svc/esign/shared/appstatus"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/licence/licencetest"
	"github.com/esign-svc/esign/shared/settings"
)

func TestMain(m *testing.M) { azuritetest.Main(m) }

func key() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

// sealFiles writes one self-signed RSA-2048 seal certificate and key for the package's tests.
var sealFiles = sync.OnceValues(func() (string, string) {
	dir, err := os.MkdirTemp("", "seal-")
	if err != nil {
		panic(err)
	}
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test seal"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageContentCommitment}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		panic(err)
	}
	pk, _ := x509.MarshalPKCS8PrivateKey(k)
	cert, key := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	_ = os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	_ = os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pk}), 0o600)
	return cert, key
})

// testLicence is the package's licence settings, every feature.
var testLicence = sync.OnceValue(func() map[string]string { return licencetest.MustSettings() })

func settings(conn string, extra map[string]string) map[string]string {
	cert, sealKey := sealFiles()
	m := map[string]string{
		"STORAGE_CONNECTION_STRING": conn, "TOKEN_KEYS": "k1:" + key(), "PII_HASH_KEY": key(),
		"PII_ENC_KEYS": "e1:" + key(), "PORTAL_URL": "http://127.0.0.1:5173",
		"SEAL_CERT_FILE": cert, "SEAL_KEY_FILE": sealKey,
	}
	for k, v := range testLicence() {
		m[k] = v
	}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

func TestLoadNamesTheSettingAtFault(t *testing.T) {
	t.Parallel()
	conn := "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + key() + ";TableEndpoint=http://127.0.0.1:1/devstoreaccount1;"
	tests := []struct {
		name    string
		extra   map[string]string
		wantErr []string
	}{
		{"defaults", nil, nil},
		{"operator needs its settings", map[string]string{"EMAIL_PROVIDER": "operator"}, []string{"NOTIFICATION_SERVICE_URL", "NOTIFICATION_SERVICE_KEY"}},
		{"unknown provider", map[string]string{"EMAIL_PROVIDER": "pigeon", "SMS_PROVIDER": "smtp"}, []string{"EMAIL_PROVIDER", "SMS_PROVIDER"}},
		{"portal must be https", map[string]string{"PORTAL_URL": "http://portal.example.net"}, []string{"PORTAL_URL"}},
		{"keys", map[string]string{"TOKEN_KEYS": "nonsense", "PII_ENC_KEYS": ""}, []string{"TOKEN_KEYS", "PII_ENC_KEYS"}},
		{"graph: secret and managed identity", map[string]string{"GRAPH_USE_MANAGED_IDENTITY": "true", "GRAPH_CLIENT_SECRET": "s"}, []string{"GRAPH_USE_MANAGED_IDENTITY"}},
		{"graph: secret alone", map[string]string{"GRAPH_CLIENT_SECRET": "s"}, []string{"GRAPH_TENANT_ID", "GRAPH_CLIENT_ID"}},
		{"licence: both, and a key of another kind", map[string]string{"LICENCE_FILE": "/licence.jws", "LICENCE_PUBLIC_KEY": "bm90IGEga2V5"}, []string{"LICENCE", "LICENCE_PUBLIC_KEY"}},
		{"licence: neither", map[string]string{"LICENCE": ""}, []string{"LICENCE"}},
		{"renewal window", map[string]string{"EVIDENCE_RENEW_BEFORE": "1h"}, []string{"EVIDENCE_RENEW_BEFORE"}},
		{"renewal window in days", map[string]string{"EVIDENCE_RENEW_BEFORE": "0d"}, []string{"EVIDENCE_RENEW_BEFORE"}},
		{"seal level without a TSA", map[string]string{"SEAL_LEVEL": "B-LTA"}, []string{"SEAL_LEVEL"}},
		{"webhook secret too short, loopback not a boolean", map[string]string{"WEBHOOK_SECRETS": "short", "WEBHOOK_ALLOW_LOOPBACK": "maybe"}, []string{"WEBHOOK_SECRETS", "WEBHOOK_ALLOW_LOOPBACK"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := Load(settings.MapLookup(settings(conn, tt.extra)))
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				if c.EmailProvider != "outbox" || c.SMSProvider != "outbox" || c.Settings["PII_ENC_KEYS"] != "***" ||
					c.RenewBefore != 180*24*time.Hour {
					t.Fatalf("config %+v", c.Settings)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %s", err, w)
				}
			}
		})
	}
}

func TestNewRoutesTheJobs(t *testing.T) {
	t.Parallel()
	cfg, err := Load(settings.MapLookup(settings(azuritetest.Shared(t).ConnectionString(), nil)))
	if err != nil {
		t.Fatal(err)
	}
	d, err := Build(cfg, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	if d.Outbox == nil || d.Providers.Email == nil || d.Providers.SMS == nil {
		t.Fatalf("providers %+v", d.Providers)
	}
	h, err := New(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	post := func(path, body string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, strings.NewReader(body)))
		return rec
	}
	timer := `{"Data":{"timer":{"IsPastDue":false,"Schedule":{"AdjustForDST":true},"ScheduleStatus":null}},"Metadata":{}}`
	for _, fn := range []string{"/ExpireSessions", "/ReconcileInvitations", "/RenewEvidence"} {
		if rec := post(fn, timer); rec.Code != 200 {
			body, _ := io.ReadAll(rec.Body)
			t.Fatalf("%s: %d %s", fn, rec.Code, body)
		}
	}
	// An unknown session's notification and poison message are acknowledged.
	msg := `{"Data":{"msg":"{\"kind\":\"invitation\",\"groupId\":\"none\",\"slot\":0}"},"Metadata":{"DequeueCount":1}}`
	for _, fn := range []string{"/Notify", "/NotifyPoison"} {
		if rec := post(fn, msg); rec.Code != 200 || !strings.Contains(rec.Body.String(), "session_not_found") {
			t.Fatalf("%s: %d %s", fn, rec.Code, rec.Body.String())
		}
	}
	// The seal jobs are routed: a message for an unknown session is acknowledged, not retried.
	sealMsg := `{"Data":{"msg":"{\"groupId\":\"none\",\"tenantId\":\"t\"}"},"Metadata":{"DequeueCount":1}}`
	wfMsg := `{"Data":{"msg":"{\"workflowId\":\"none\",\"tenantId\":\"t\"}"},"Metadata":{"DequeueCount":1}}`
	for _, fn := range []string{"/WorkflowSeal", "/WorkflowSealPoison", "/WorkflowCallback", "/WorkflowCallbackPoison"} {
		if rec := post(fn, wfMsg); rec.Code != 200 {
			t.Fatalf("%s: %d %s", fn, rec.Code, rec.Body.String())
		}
	}
	for _, fn := range []string{"/Seal", "/SealPoison"} {
		if rec := post(fn, sealMsg); rec.Code != 200 {
			t.Fatalf("%s: %d %s", fn, rec.Code, rec.Body.String())
		}
	}
	if rec := post("/Nope", "{}"); rec.Code != 404 {
		t.Fatalf("unknown function: %d", rec.Code)
	}
	// Every function has its folder, and every folder its function.
	fns, err := Functions(d)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range fns {
		names = append(names, f.Name)
	}
	folders, err := filepath.Glob(filepath.Join("..", "functions", "*", "function.json"))
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range folders {
		folders[i] = filepath.Base(filepath.Dir(f))
	}
	slices.Sort(names)
	slices.Sort(folders)
	if !slices.Equal(names, folders) {
		t.Fatalf("functions %v, folders %v", names, folders)
	}
}

func TestBuildWithGraph(t *testing.T) {
	t.Parallel()
	conn := azuritetest.Shared(t).ConnectionString()
	secret := "graph-client-secret-value"
	cfg, err := Load(settings.MapLookup(settings(conn, map[string]string{"GRAPH_TENANT_ID": "contoso.onmicrosoft.com",
		"GRAPH_CLIENT_ID": "c", "GRAPH_CLIENT_SECRET": secret})))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Settings["GRAPH_CLIENT_SECRET"] != "***" || cfg.Settings["GRAPH_TENANT_ID"] != "contoso.onmicrosoft.com" {
		t.Fatalf("start-up summary %v", cfg.Settings)
	}
	d, err := Build(cfg, zerolog.Nop())
	if err != nil || d.Graph == nil {
		t.Fatalf("graph client %v, err %v", d, err)
	}
	cfg, err = Load(settings.MapLookup(settings(conn, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if d, err = Build(cfg, zerolog.Nop()); err != nil || d.Graph != nil {
		t.Fatalf("without GRAPH_* settings: graph client %v, err %v", d.Graph, err)
	}
}

func TestBuildWithOperator(t *testing.T) {
	t.Parallel()
	conn := azuritetest.Shared(t).ConnectionString()
	cfg, err := Load(settings.MapLookup(settings(conn, map[string]string{"EMAIL_PROVIDER": "operator",
		"NOTIFICATION_SERVICE_URL": "https://notify.example.net", "NOTIFICATION_SERVICE_KEY": "0123456789abcdef0123456789abcdef"})))
	if err != nil {
		t.Fatal(err)
	}
	d, err := Build(cfg, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	if d.Providers.Email == nil || d.Outbox == nil { // SMS stays on the outbox
		t.Fatalf("providers %+v outbox %v", d.Providers, d.Outbox)
	}
	cfg, err = Load(settings.MapLookup(settings(conn, map[string]string{"EMAIL_PROVIDER": "operator",
		"NOTIFICATION_SERVICE_URL": "https://notify.example.net", "NOTIFICATION_SERVICE_KEY": "short"})))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Build(cfg, zerolog.Nop()); err == nil || !strings.Contains(err.Error(), "NOTIFICATION_SERVICE_KEY") {
		t.Fatalf("short key: %v", err)
	}
}

func TestWorkflowCallbackConfig(t *testing.T) {
	t.Parallel()
	conn := azuritetest.Shared(t).ConnectionString()
	current, older := "webhook-secret-current-0123456789abcdef", "webhook-secret-older-0123456789abcdef"
	cfg, err := Load(settings.MapLookup(settings(conn, map[string]string{"WEBHOOK_SECRETS": current + "," + older, "WEBHOOK_ALLOW_LOOPBACK": "true"})))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.WebhookSecret != current || !cfg.WebhookAllowLoopback || cfg.Settings["WEBHOOK_SECRETS"] != "***" {
		t.Fatalf("config: loopback %v, summary %q", cfg.WebhookAllowLoopback, cfg.Settings["WEBHOOK_SECRETS"])
	}
	d, err := Build(cfg, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	if job, err := workflowCallback(d); err != nil || job.Poster == nil || job.Queue == nil {
		t.Fatalf("with a secret: %+v, %v", job, err)
	}
	cfg, err = Load(settings.MapLookup(settings(conn, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if d, err = Build(cfg, zerolog.Nop()); err != nil {
		t.Fatal(err)
	}
	if job, err := workflowCallback(d); err != nil || job.Poster != nil {
		t.Fatalf("without a secret the job has no poster: %+v, %v", job, err)
	}
}

// TestStartSaysWhenCallbacksAreOff: a processor started without WEBHOOK_SECRETS logs one
// warning naming the setting and records the workflow callbacks off (what /api/health reports);
// a start with the secret logs nothing of it and records them on. Before issue 22 nothing was
// said: each callback was recorded as failed (webhook_not_configured) in silence.
func TestStartSaysWhenCallbacksAreOff(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn := azuritetest.Shared(t).ConnectionString()
	status, err := appstatus.New(azuritetest.Account(t), azuritetest.Name("appstatus"))
	if err != nil {
		t.Fatal(err)
	}
	start := func(extra map[string]string) string {
		t.Helper()
		cfg, err := Load(settings.MapLookup(settings(conn, extra)))
		if err != nil {
			t.Fatal(err)
		}
		var log bytes.Buffer
		d, err := Build(cfg, zerolog.New(&log))
		if err != nil {
			t.Fatal(err)
		}
		d.Status = status // a table of this test's own: the package's tests share the account
		if _, err := New(ctx, d); err != nil {
			t.Fatal(err)
		}
		return log.String()
	}
	log := start(nil)
	if strings.Count(log, "WEBHOOK_SECRETS") != 1 || strings.Count(log, "\n") != 1 || !strings.Contains(log, `"level":"warn"`) {
		t.Fatalf("start without the secret logged %q, want one warning naming WEBHOOK_SECRETS", log)
	}
	off, err := status.Off(ctx)
	if err != nil || len(off) != 1 || off[0].Feature != appstatus.FeatureWorkflowCallbacks || off[0].Reason != ReasonNoWebhookSecret {
		t.Fatalf("recorded %+v, %v", off, err)
	}
	if log := start(map[string]string{"WEBHOOK_SECRETS": strings.Repeat("s", 32)}); log != "" {
		t.Fatalf("start with the secret logged %q", log)
	}
	if off, err := status.Off(ctx); err != nil || len(off) != 0 {
		t.Fatalf("with the secret: %+v, %v", off, err)
	}
}

func TestRenewBefore(t *testing.T) {
	t.Parallel()
	conn := "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + key() + ";TableEndpoint=http://127.0.0.1:1/devstoreaccount1;"
	for v, want := range map[string]time.Duration{"30d": 30 * 24 * time.Hour, "720h": 720 * time.Hour, "": 180 * 24 * time.Hour} {
		c, err := Load(settings.MapLookup(settings(conn, map[string]string{"EVIDENCE_RENEW_BEFORE": v})))
		if err != nil || c.RenewBefore != want {
			t.Errorf("EVIDENCE_RENEW_BEFORE=%q: %v %v, want %v", v, c.RenewBefore, err, want)
		}
	}
}
