package devkeys

import (
	"bytes"
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/auth"
	"github.com/esign-svc/esign/shared/callbacksig"
	"github.com/esign-svc/esign/shared/licence"
	"github.com/esign-svc/esign/shared/pii"
	"github.com/esign-svc/esign/shared/tokens"
)

var requiredSettings = []string{"BASE_URL", "HOST_KEY", "MASTER_KEY", "STORAGE_CONNECTION_STRING",
	"AzureWebJobsStorage", "PORTAL_CALLBACK_SECRETS", "PORTAL_CALLBACK_SECRET", "PORTAL_URL", "PORTAL_ORIGIN",
	"TOKEN_KEYS", "PII_HASH_KEY", "PII_ENC_KEYS", "AUTH_ISSUER", "AUTH_AUDIENCE", "AUTH_JWKS_FILE",
	"LICENCE_FILE", "LICENCE_PUBLIC_KEY", "SEAL_CERT_FILE", "SEAL_KEY_FILE", "EMAIL_PROVIDER", "SMS_PROVIDER",
	"WEBHOOK_SECRETS", "WEBHOOK_ALLOW_LOOPBACK"}

func readAll(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	entries, err := os.ReadDir(filepath.Join(dir, KeysDir))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, KeysDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

func TestSetupIdempotent(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), ".local")
	first, err := Setup(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	wantCreated := []string{FileTokenKeys, FilePIIHashKey, FilePIIEncKeys, FileCallbackSecret, FileHostKey,
		FileMasterKey, FileSealKey, FileSealCert, FileOperatorKey, FileLicence, FileIdPKey, FileClientSecret, FileWebhookSecret}
	if !slices.Equal(first.Created, wantCreated) {
		t.Fatalf("first run created %v, want %v", first.Created, wantCreated)
	}
	before := readAll(t, dir)
	envBefore, _ := os.ReadFile(first.EnvFile)

	second, err := Setup(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(second.Created) != 0 {
		t.Fatalf("second run created %v", second.Created)
	}
	after := readAll(t, dir)
	for name, b := range before {
		if !bytes.Equal(b, after[name]) {
			t.Errorf("%s changed on the second run", name)
		}
	}
	envAfter, _ := os.ReadFile(second.EnvFile)
	if !bytes.Equal(envBefore, envAfter) {
		t.Error("dev.env changed on the second run")
	}

	// A deleted key is recreated; the others stay.
	if err := os.Remove(filepath.Join(dir, KeysDir, FileTokenKeys)); err != nil {
		t.Fatal(err)
	}
	third, err := Setup(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(third.Created, []string{FileTokenKeys}) {
		t.Fatalf("third run created %v", third.Created)
	}
	if third.Env["TOKEN_KEYS"] == first.Env["TOKEN_KEYS"] || third.Env["PII_ENC_KEYS"] != first.Env["PII_ENC_KEYS"] {
		t.Fatal("only the deleted key should change")
	}
}

func TestSetupContents(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	res, err := Setup(dir, Options{PortalURL: "https://portal.example.test:8443/app"})
	if err != nil {
		t.Fatal(err)
	}
	env, err := ReadEnv(res.EnvFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range requiredSettings {
		if env[k] == "" {
			t.Errorf("dev.env lacks %s", k)
		}
		if env[k] != res.Env[k] {
			t.Errorf("%s read back as %q, want %q", k, env[k], res.Env[k])
		}
	}
	want := map[string]string{
		"BASE_URL":            "http://127.0.0.1:7071",
		"PORTAL_URL":          "https://portal.example.test:8443/app",
		"PORTAL_ORIGIN":       "https://portal.example.test:8443",
		"AUTH_ISSUER":         "https://login.dev.local/" + DevTenantID + "/v2.0",
		"AUTH_AUDIENCE":       "api://esign-dev",
		"EMAIL_PROVIDER":      "outbox",
		"SMS_PROVIDER":        "outbox",
		"AzureWebJobsStorage": AzuriteConnectionString,
		// make run sends a workflow's callback to a listener on this machine (issue 22)
		"WEBHOOK_ALLOW_LOOPBACK": "true",
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s = %q, want %q", k, env[k], v)
		}
	}
	for _, port := range []string{"10000", "10001", "10002"} {
		if !strings.Contains(env["STORAGE_CONNECTION_STRING"], "127.0.0.1:"+port+"/devstoreaccount1") {
			t.Errorf("connection string lacks port %s", port)
		}
	}

	// Every secret parses with the package that will read it.
	if _, err := tokens.ParseKeyRing(env["TOKEN_KEYS"]); err != nil {
		t.Error(err)
	}
	if _, err := pii.ParseHashKey(env["PII_HASH_KEY"]); err != nil {
		t.Error(err)
	}
	if _, err := pii.ParseCipher(env["PII_ENC_KEYS"]); err != nil {
		t.Error(err)
	}
	if s, err := callbacksig.ParseSecrets(env["PORTAL_CALLBACK_SECRETS"]); err != nil || s[0] != env["PORTAL_CALLBACK_SECRET"] {
		t.Errorf("callback secrets: %v", err)
	}
	if s, err := callbacksig.ParseSecrets(env["WEBHOOK_SECRETS"]); err != nil || len(s) != 1 || s[0] == env["PORTAL_CALLBACK_SECRET"] {
		t.Errorf("webhook secrets %v: %v (one, its own)", s, err)
	}
	pub, err := licence.ParsePublicKey(env["LICENCE_PUBLIC_KEY"])
	if err != nil {
		t.Fatal(err)
	}
	lic, err := licence.Load(env["LICENCE_FILE"], pub)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range licence.AllFeatures {
		if err := lic.Require(f); err != nil {
			t.Error(err)
		}
	}
	if d := time.Until(lic.ExpiresTime()); d < 364*24*time.Hour || d > 366*24*time.Hour {
		t.Errorf("licence expires in %v, want about a year", d)
	}

	// Seal certificate.
	certPEM, _ := os.ReadFile(env["SEAL_CERT_FILE"])
	block, _ := pem.Decode(certPEM)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if cert.Subject.CommonName != SealCommonName ||
		cert.KeyUsage != x509.KeyUsageDigitalSignature|x509.KeyUsageContentCommitment|x509.KeyUsageCertSign ||
		cert.NotAfter.Sub(cert.NotBefore) < 5*365*24*time.Hour || !cert.IsCA {
		t.Errorf("seal cert: CN %q usage %v validity %v", cert.Subject.CommonName, cert.KeyUsage, cert.NotAfter.Sub(cert.NotBefore))
	}
	keyPEM, _ := os.ReadFile(env["SEAL_KEY_FILE"])
	kb, _ := pem.Decode(keyPEM)
	k, err := x509.ParsePKCS8PrivateKey(kb.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	rk, ok := k.(*rsa.PrivateKey)
	if !ok || rk.N.BitLen() != 2048 || !rk.PublicKey.Equal(cert.PublicKey) {
		t.Error("seal key is not the certificate's RSA-2048 key")
	}
	if err := cert.CheckSignature(cert.SignatureAlgorithm, cert.RawTBSCertificate, cert.Signature); err != nil {
		t.Errorf("seal cert is not self-signed: %v", err)
	}

	// Secrets are private.
	for _, name := range []string{FileTokenKeys, FilePIIHashKey, FilePIIEncKeys, FileCallbackSecret, FileHostKey,
		FileMasterKey, FileSealKey, FileOperatorKey, FileIdPKey, FileLicence, FileWebhookSecret} {
		fi, err := os.Stat(filepath.Join(dir, KeysDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", name, fi.Mode().Perm())
		}
	}
	if fi, _ := os.Stat(res.EnvFile); fi.Mode().Perm() != 0o600 {
		t.Errorf("dev.env has mode %v", fi.Mode().Perm())
	}
}

func TestLicenceRenewedWhenExpired(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	res, err := Setup(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	old, _ := os.ReadFile(res.Env["LICENCE_FILE"])
	later := time.Now().AddDate(1, 1, 0)
	res2, err := Setup(dir, Options{Now: later})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res2.Created, []string{FileLicence}) {
		t.Fatalf("created %v, want only the licence", res2.Created)
	}
	renewed, _ := os.ReadFile(res.Env["LICENCE_FILE"])
	if bytes.Equal(old, renewed) {
		t.Fatal("expired licence not re-issued")
	}
	pub, _ := licence.ParsePublicKey(res2.Env["LICENCE_PUBLIC_KEY"])
	lic, err := licence.Load(res.Env["LICENCE_FILE"], pub, licence.WithClock(func() time.Time { return later }))
	if err != nil || lic.Require(licence.FeatureWorkflow) != nil {
		t.Fatalf("renewed licence: %v", err)
	}
	// A corrupt licence is re-issued too; a corrupt key is reported, never overwritten.
	if err := os.WriteFile(res.Env["LICENCE_FILE"], []byte("junk"), 0o600); err != nil {
		t.Fatal(err)
	}
	if res3, err := Setup(dir, Options{}); err != nil || !slices.Contains(res3.Created, FileLicence) {
		t.Fatalf("corrupt licence: %v %v", res3, err)
	}
	idp := filepath.Join(dir, KeysDir, FileIdPKey)
	if err := os.WriteFile(idp, []byte("junk"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Setup(dir, Options{}); err == nil || !strings.Contains(err.Error(), FileIdPKey) {
		t.Fatalf("corrupt IdP key: %v", err)
	}
	if b, _ := os.ReadFile(idp); string(b) != "junk" {
		t.Fatal("corrupt key was overwritten")
	}
}

func TestMintedTokenPassesAuth(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := Setup(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	env, err := ReadEnv(filepath.Join(dir, FileDevEnv))
	if err != nil {
		t.Fatal(err)
	}
	v, err := auth.NewVerifier(auth.Config{Issuer: env["AUTH_ISSUER"], Audience: env["AUTH_AUDIENCE"],
		JWKSFile: env["AUTH_JWKS_FILE"]})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tok, err := MintFromDir(dir, TokenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := v.Verify(ctx, tok)
	if err != nil {
		t.Fatal(err)
	}
	if p.TenantID != DevTenantID || !p.HasRole(auth.RoleInitiator) || p.HasRole(auth.RoleAdmin) {
		t.Fatalf("default principal %+v", p)
	}
	tok, _ = MintFromDir(dir, TokenOptions{Tenant: "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb", Roles: []string{auth.RoleAdmin, auth.RoleWorkflowApprover}})
	p, err = v.Verify(ctx, tok)
	if err != nil || p.TenantID != "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb" || !p.HasRole(auth.RoleAdmin) || !p.HasRole(auth.RoleWorkflowApprover) || p.HasRole(auth.RoleInitiator) {
		t.Fatalf("custom principal %+v, %v", p, err)
	}
	tok, _ = MintFromDir(dir, TokenOptions{NoRoles: true})
	if p, err = v.Verify(ctx, tok); err != nil || len(p.Roles) != 0 {
		t.Fatalf("no-roles token: %+v, %v", p, err)
	}
	tok, _ = MintFromDir(dir, TokenOptions{Now: time.Now().Add(-2 * time.Hour)})
	if _, err := v.Verify(ctx, tok); err == nil {
		t.Fatal("expired dev token accepted")
	}
	// A token from another dev setup (another IdP key) is refused.
	other := t.TempDir()
	if _, err := Setup(other, Options{}); err != nil {
		t.Fatal(err)
	}
	tok, _ = MintFromDir(other, TokenOptions{})
	if _, err := v.Verify(ctx, tok); err == nil {
		t.Fatal("token of another IdP key accepted")
	}
}

func TestEnvRoundTrip(t *testing.T) {
	t.Parallel()
	in := map[string]string{"A": "plain", "B": "with;semi=colon", "C": "it's", "D": "", "E": "a b"}
	path := filepath.Join(t.TempDir(), "x.env")
	if err := os.WriteFile(path, FormatEnv(in), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := ReadEnv(path)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range in {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if !bytes.Contains(FormatEnv(in), []byte("A=plain\n")) {
		t.Error("plain values should stay unquoted")
	}
	// The file is valid shell: sourcing it gives the same values.
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	out, err := exec.Command(sh, "-c", `set -a; . "$0"; printf '%s|%s|%s' "$B" "$C" "$E"`, path).Output()
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != "with;semi=colon|it's|a b" {
		t.Fatalf("sourced values %q", out)
	}
}
