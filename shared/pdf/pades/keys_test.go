package pades

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"software.sslmate.com/src/go-pkcs12"

	"github.com/esign-svc/esign/shared/pdf/cms"
	"github.com/esign-svc/esign/shared/pdf/internal/fixture"
	"github.com/esign-svc/esign/shared/pdf/tsatest"
	"github.com/esign-svc/esign/shared/pdf/verify"
)

func TestLoadKeys(t *testing.T) {
	t.Parallel()
	rsaKey, rsaCert := tsatest.NewCert(t, "rsa", 2048)
	ecKey, ecCert := tsatest.NewCert(t, "ec", 0)
	certPEM := func(c *x509.Certificate) []byte {
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
	}
	pkcs8 := func(k any) []byte {
		der, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	}
	ecDER, _ := x509.MarshalECPrivateKey(ecKey.(*ecdsa.PrivateKey))
	pfx, err := pkcs12.Modern.Encode(rsaKey, rsaCert, nil, "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		load func() (any, []*x509.Certificate, error)
		want *x509.Certificate
	}{
		{"pkcs8 rsa", func() (any, []*x509.Certificate, error) { return LoadPEM(pkcs8(rsaKey), certPEM(rsaCert)) }, rsaCert},
		{"pkcs1 rsa, cert first", func() (any, []*x509.Certificate, error) {
			return LoadPEM(append(certPEM(rsaCert), pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rsaKey.(*rsa.PrivateKey))})...))
		}, rsaCert},
		{"sec1 ec with extra cert", func() (any, []*x509.Certificate, error) {
			return LoadPEM(certPEM(rsaCert), certPEM(ecCert), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: ecDER}))
		}, ecCert},
		{"pkcs12 modern", func() (any, []*x509.Certificate, error) { return LoadPKCS12(pfx, "s3cret") }, rsaCert},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, chain, err := tc.load()
			if err != nil || !chain[0].Equal(tc.want) {
				t.Fatalf("got %v %v", chain, err)
			}
		})
	}
	for _, tc := range []struct {
		name string
		err  func() error
	}{
		{"no key", func() error { _, _, err := LoadPEM(certPEM(rsaCert)); return err }},
		{"key without its cert", func() error { _, _, err := LoadPEM(pkcs8(rsaKey), certPEM(ecCert)); return err }},
		{"wrong password", func() error { _, _, err := LoadPKCS12(pfx, "nope"); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if err := tc.err(); !errors.Is(err, ErrKey) {
				t.Fatalf("want ErrKey, got %v", err)
			}
		})
	}
}

func TestSignPDFWithTimestamp(t *testing.T) {
	t.Parallel()
	src := fixture.PDF(t, 3, fixture.TemplateFields, 0)
	key, cert := tsatest.NewCert(t, "seal", 3072)
	tsa := tsatest.Start(t)
	out, err := SignPDF(context.Background(), src, Options{Signer: key, Chain: []*x509.Certificate{cert}, TSAURL: tsa.URL})
	if err != nil {
		t.Fatal(err)
	}
	res, err := verify.Verify(out, verify.Options{Trust: []*x509.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	if res.TimestampTime == nil || res.DocMDP != 1 {
		t.Fatalf("result %+v", res)
	}
	// a second certification is refused
	if _, err := SignPDF(context.Background(), out, Options{Signer: key, Chain: []*x509.Certificate{cert}}); err == nil {
		t.Fatal("signed an already certified document")
	}
	// a TSA that fails makes the seal fail (retryable), never a seal without the timestamp
	_, err = SignPDF(context.Background(), src, Options{Signer: key, Chain: []*x509.Certificate{cert}, TSAURL: "http://127.0.0.1:1/tsa"})
	if !errors.Is(err, cms.ErrTimestamp) {
		t.Fatalf("want ErrTimestamp, got %v", err)
	}
}

// An approval seal leaves the document open for another signature: the next seal on a signed
// document is an approval signature too (a certification must be the first), under its own
// field name, and the last one verifies over the whole file.
func TestApprovalSealThenAnother(t *testing.T) {
	t.Parallel()
	src := fixture.PDF(t, 3, fixture.TemplateFields, 0)
	key, cert := tsatest.NewCert(t, "seal", 2048)
	o := Options{Signer: key, Chain: []*x509.Certificate{cert}}
	approval := o
	approval.Approval = true
	first, err := SignPDF(context.Background(), src, approval)
	if err != nil {
		t.Fatal(err)
	}
	res, err := verify.Verify(first, verify.Options{Trust: []*x509.Certificate{cert}})
	if err != nil || res.DocMDP != 0 || !res.Trusted {
		t.Fatalf("approval seal: %+v, %v", res, err)
	}
	second, err := SignPDF(context.Background(), first, o) // not asked, but the document is signed
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(second, first) {
		t.Fatal("the second seal rewrote the first revision")
	}
	if bytes.Contains(second[len(first):], []byte("/Perms")) || !bytes.Contains(second[len(first):], []byte("("+FieldName+"_2)")) {
		t.Fatalf("second revision:\n%s", second[len(first):min(len(second), len(first)+2000)])
	}
	if res, err := verify.Verify(second, verify.Options{Trust: []*x509.Certificate{cert}}); err != nil || res.DocMDP != 0 {
		t.Fatalf("second seal: %+v, %v", res, err)
	}
	if _, err := exec.LookPath("pdfsig"); err == nil {
		p := filepath.Join(t.TempDir(), "two.pdf")
		if err := os.WriteFile(p, second, 0o600); err != nil {
			t.Fatal(err)
		}
		out, _ := exec.Command("pdfsig", p).CombinedOutput()
		if strings.Count(string(out), "Signature is Valid.") != 2 {
			t.Fatalf("pdfsig:\n%s", out)
		}
	}
}
