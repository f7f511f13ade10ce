package main

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/esign-svc/esign/processor/internal/sealcfg"
	"github.com/esign-svc/esign/shared/azure/keyvault"
	"github.com/esign-svc/esign/shared/azure/keyvault/keyvaulttest"
	"github.com/esign-svc/esign/shared/pdf"
	"github.com/esign-svc/esign/shared/pdf/certificate"
	"github.com/esign-svc/esign/shared/pdf/tsatest"
	"github.com/esign-svc/esign/shared/settings"
)

// TestKeyVaultSealVerifies seals through the Key Vault signer, as the processor does with
// SEAL_KEY_VAULT_KEY_ID (against the local vault, whose key never leaves it), and checks the
// sealed PDF with pdfsig, qpdf --check and esign-verify (issue 24).
func TestKeyVaultSealVerifies(t *testing.T) {
	for _, tool := range []string{"pdfsig", "qpdf"} {
		if _, err := exec.LookPath(tool); err != nil {
			// scripts/install-pdf-tools.sh (run by scripts/test.sh) installs them
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is missing", tool)
			}
			t.Skipf("%s is missing (scripts/install-pdf-tools.sh installs it)", tool)
		}
	}
	vault := keyvaulttest.New(t)
	for _, tc := range []struct {
		name   string
		bits   int
		format keyvaulttest.Format
		alg    string
	}{
		{"rsa-3072-pkcs12", 3072, keyvaulttest.PKCS12, "RS256"},
		{"ec-p256-pem", 0, keyvaulttest.PEM, "ES256"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			write := tempWriter(t)
			key, cert := tsatest.NewCert(t, "vault seal "+tc.name, tc.bits)
			vault.AddCertificate(t, tc.name, key, []*x509.Certificate{cert}, tc.format)
			seal, err := sealcfg.LoadConfig(settings.MapLookup(map[string]string{sealcfg.SettingKeyVaultKeyID: vault.KeyID(tc.name, "")}))
			if err != nil {
				t.Fatal(err)
			}
			if err := seal.OpenKey(context.Background(), keyvault.Options{Credential: vault.Credential(), Client: vault.ClientOptions()}); err != nil {
				t.Fatal(err)
			}
			src, bundle, head := sealSource(t)
			before := len(vault.Requests())
			out, err := pdf.Seal(context.Background(), pdf.SealInput{
				Source: src, Certificate: certificate.Certificate{DocumentTitle: "vault seal", EvidenceHeadHash: head},
				Signer: seal.Key.Signer, Chain: seal.Key.Chain,
			})
			if err != nil {
				t.Fatal(err)
			}
			signs := 0
			for _, r := range vault.Requests()[before:] {
				if r.Method == "POST" && r.Alg == tc.alg {
					signs++
				}
			}
			if signs != 1 {
				t.Fatalf("the seal made %d %s sign requests to the vault, want 1: %+v", signs, tc.alg, vault.Requests()[before:])
			}
			signed := write("signed.pdf", out.SignedPDF)
			if out, _ := exec.Command("pdfsig", signed).CombinedOutput(); !strings.Contains(string(out), "Signature is Valid.") ||
				!strings.Contains(string(out), "Total document signed") {
				t.Fatalf("pdfsig does not report a valid whole-document signature:\n%s", out)
			}
			if out, err := exec.Command("qpdf", "--check", signed).CombinedOutput(); err != nil {
				t.Fatalf("qpdf --check: %v\n%s", err, out)
			}
			trust := write("trust.pem", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw}))
			var stdout, stderr bytes.Buffer
			if code := run([]string{"--pdf", signed, "--bundle", write("evidence.jsonl", bundle.Bytes()), "--trust", trust}, &stdout, &stderr); code != 0 ||
				!strings.Contains(stdout.String(), "OK") {
				t.Fatalf("esign-verify exit %d:\n%s%s", code, stdout.String(), stderr.String())
			}
			if v := vault.Violations(); len(v) > 0 {
				t.Fatalf("the vault saw undocumented requests: %v", v)
			}
		})
	}
}
