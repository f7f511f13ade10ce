package main

import (
	"bytes"
	"context"
	"crypto"
	"crypto/x509"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/evidence"
	"github.com/esign-svc/esign/shared/pdf"
	"github.com/esign-svc/esign/shared/pdf/certificate"
	"github.com/esign-svc/esign/shared/pdf/pades"
	"github.com/esign-svc/esign/shared/pdf/pdfdoc"
)

func TestRun(t *testing.T) {
	write := tempWriter(t)
	src, bundle, head := sealSource(t)
	key, certPEM, chain := sealKey(t)
	out, err := pdf.Seal(context.Background(), pdf.SealInput{
		Source: src, Certificate: certificate.Certificate{DocumentTitle: "t", EvidenceHeadHash: head},
		Signer: key, Chain: chain,
	})
	if err != nil {
		t.Fatal(err)
	}
	signed := write("signed.pdf", out.SignedPDF)
	good := write("evidence.jsonl", bundle.Bytes())
	lines := strings.SplitAfter(bundle.String(), "\n")
	cut := write("cut.jsonl", []byte(lines[0]+lines[2]))
	trust := write("trust.pem", certPEM)
	tampered := bytes.Clone(out.SignedPDF)
	tampered[len(tampered)/3] ^= 0x01
	bad := write("tampered.pdf", tampered)

	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"valid", []string{"--pdf", signed, "--bundle", good, "--trust", trust}, 0, "OK"},
		{"valid untrusted", []string{"--pdf", signed, "--bundle", good}, 0, "not checked"},
		{"removed line", []string{"--pdf", signed, "--bundle", cut}, 1, "line 2"},
		{"tampered pdf", []string{"--pdf", bad, "--bundle", good}, 1, "FAILED"},
		{"missing flag", []string{"--pdf", signed}, 2, "required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tc.args, &stdout, &stderr)
			all := stdout.String() + stderr.String()
			if code != tc.code || !strings.Contains(all, tc.want) {
				t.Fatalf("exit %d (want %d), output:\n%s", code, tc.code, all)
			}
		})
	}
}

// tempWriter writes files into a temporary directory of the test and returns their paths.
func tempWriter(t *testing.T) func(name string, b []byte) string {
	dir := t.TempDir()
	return func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
}

// sealSource is a one-page PDF to seal and a three-line evidence bundle with its head.
func sealSource(t *testing.T) (src []byte, bundle *bytes.Buffer, head string) {
	t.Helper()
	bundle = new(bytes.Buffer)
	w := evidence.NewWriter(bundle)
	for i, k := range []string{"session.created", "slot.signed", "session.sealing"} {
		if _, err := w.Append(k, time.Unix(1718000000, int64(i)), map[string]any{"i": i}); err != nil {
			t.Fatal(err)
		}
	}
	d := pdfdoc.New()
	if _, err := d.AppendPage(612, 792, []byte("0 g 72 72 10 10 re f\n"), nil); err != nil {
		t.Fatal(err)
	}
	src, err := d.Bytes(nil)
	if err != nil {
		t.Fatal(err)
	}
	return src, bundle, w.Head()
}

func sealKey(t *testing.T) (key crypto.Signer, certPEM []byte, chain []*x509.Certificate) {
	t.Helper()
	keyPEM, certPEM := testKeyPEM(t)
	signer, chain, err := pades.LoadPEM(keyPEM, certPEM)
	if err != nil {
		t.Fatal(err)
	}
	return signer, certPEM, chain
}
