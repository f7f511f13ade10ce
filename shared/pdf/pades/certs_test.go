package pades

import (
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/esign-svc/esign/shared/pdf/tsatest"
)

// A key vault returns the certificate secret of a non-exportable key as a PKCS#12 file of the
// certificates alone, one authenticated safe without a password: go-pkcs12's readers want two
// safes (or a Java trust store), so ParseCertificates rewrites it. openssl writes such files.
func TestParseCertificatesOfACertificatesOnlyPKCS12(t *testing.T) {
	if _, err := exec.LookPath("openssl"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("openssl is needed to write a PKCS#12 file (scripts/install-pdf-tools.sh installs it)")
		}
		t.Skip("openssl is needed to write a PKCS#12 file")
	}
	dir := t.TempDir()
	_, leaf := tsatest.NewCert(t, "leaf", 0)
	_, ca := tsatest.NewCert(t, "ca", 0)
	chain := filepath.Join(dir, "chain.pem")
	pemData := append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leaf.Raw}), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw})...)
	if err := os.WriteFile(chain, pemData, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"encrypted with a MAC", nil},
		{"legacy RC2", []string{"-certpbe", "PBE-SHA1-RC2-40", "-legacy"}},
		{"plain without a MAC", []string{"-certpbe", "NONE", "-nomac"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, tc.name+".p12")
			args := append([]string{"pkcs12", "-export", "-nokeys", "-in", chain, "-out", out, "-passout", "pass:"}, tc.args...)
			if msg, err := exec.Command("openssl", args...).CombinedOutput(); err != nil {
				t.Skipf("this openssl cannot write it: %v %s", err, msg)
			}
			data, _ := os.ReadFile(out)
			certs, withKey, err := ParseCertificates(data, new(string))
			if err != nil || withKey || len(certs) != 2 || !certs[0].Equal(leaf) || !certs[1].Equal(ca) {
				t.Fatalf("certs %d, withKey %v, err %v", len(certs), withKey, err)
			}
			if _, _, err := ParseCertificates(data[:len(data)-9], new(string)); err == nil {
				t.Fatal("read a truncated file")
			}
		})
	}
	// PEM: the certificates, and whether a key came with them
	certs, withKey, err := ParseCertificates(pemData, nil)
	if err != nil || withKey || len(certs) != 2 {
		t.Fatalf("pem: %d %v %v", len(certs), withKey, err)
	}
	if _, _, err := ParseCertificates([]byte("no pem"), nil); err == nil {
		t.Fatal("read a file without certificates")
	}
}
