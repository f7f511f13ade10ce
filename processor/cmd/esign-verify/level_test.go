package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/pdf"
	"github.com/esign-svc/esign/shared/pdf/certificate"
	"github.com/esign-svc/esign/shared/pdf/tsatest"
)

// TestRunReportsBLTAOffline seals with the development PKI (B-LTA by default with a TSA),
// takes the PKI down and checks that the verifier reports B-LTA, every chain's revocation
// answer from the DSS and the archive timestamp's expiry, as text and as JSON.
func TestRunReportsBLTAOffline(t *testing.T) {
	pki := tsatest.StartPKI(t, 30*24*time.Hour)
	dir := t.TempDir()
	src, bundle, head := sealSource(t)
	out, err := pdf.Seal(context.Background(), pdf.SealInput{
		Source: src, Certificate: certificate.Certificate{DocumentTitle: "t", EvidenceHeadHash: head},
		Signer: pki.SealKey, Chain: pki.SealChain(), TSAURL: pki.BaseURL + tsatest.PathTSA,
	})
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	args := []string{"--pdf", write("signed.pdf", out.SignedPDF), "--bundle", write("evidence.jsonl", bundle.Bytes()),
		"--trust", write("root.pem", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: pki.Root.Raw}))}
	pki.OCSPDown.Store(true)
	pki.CRLDown.Store(true)

	var stdout, stderr bytes.Buffer
	if code := run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s%s", code, stdout.String(), stderr.String())
	}
	for _, want := range []string{"level: PAdES B-LTA", "document timestamp \"esign_archive\": valid", "by eSign Dev TSA, chain trusted", "OCSP good", "CRL",
		"archive timestamp certificate expires: " + pki.TSA.NotAfter.UTC().Format(time.RFC3339)} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, stdout.String())
		}
	}
	stdout.Reset()
	if code := run(append(args, "--json"), &stdout, &stderr); code != 0 {
		t.Fatalf("--json exit %d: %s%s", code, stdout.String(), stderr.String())
	}
	var res jsonResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if !res.Valid || res.Level != "B-LTA" || !res.Trusted || res.ArchiveExpires == nil || len(res.Signatures) != 2 ||
		len(res.Signatures[0].Chain) != 3 || len(res.Signatures[0].TimestampChain) != 3 ||
		!res.Signatures[0].Trusted || !res.Signatures[0].TimestampTrusted || !res.Signatures[1].Trusted {
		t.Fatalf("json result %s", stdout.String())
	}

	// a tampered byte gives valid:false and exit 1
	bad := bytes.Clone(out.SignedPDF)
	bad[len(bad)-200] ^= 0x01
	args[1] = write("bad.pdf", bad)
	stdout.Reset()
	if code := run(append(args, "--json"), &stdout, &stderr); code != 1 || !strings.Contains(stdout.String(), `"valid": false`) {
		t.Fatalf("tampered: exit %d, %s", code, stdout.String())
	}
}
