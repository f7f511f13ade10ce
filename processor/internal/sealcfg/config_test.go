package sealcfg

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/pdf/ltv"
	"github.com/esign-svc/esign/shared/settings"
)

func TestLoadKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	cert := selfSigned(k, "seal key test")
	der, _ := x509.MarshalPKCS8PrivateKey(k)
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	otherPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: selfSigned(other, "other").Raw})

	certFile := writeFile(t, dir, "cert.pem", certPEM)
	keyFile := writeFile(t, dir, "key.pem", keyPEM)
	bothFile := writeFile(t, dir, "both.pem", append(append([]byte{}, keyPEM...), certPEM...))
	otherFile := writeFile(t, dir, "other.pem", otherPEM)
	junkFile := writeFile(t, dir, "junk.pem", []byte("not pem"))
	p12File := filepath.Join(dir, "missing.p12")

	tests := []struct {
		name     string
		settings map[string]string
		wantErr  string // setting named in the error; "" for success
	}{
		{"cert and key files", map[string]string{SettingCertFile: certFile, SettingKeyFile: keyFile}, ""},
		{"key file holding the chain too", map[string]string{SettingCertFile: certFile, SettingKeyFile: bothFile}, ""},
		{"nothing set", map[string]string{}, SettingCertFile},
		{"key file missing", map[string]string{SettingCertFile: certFile}, SettingKeyFile},
		{"key file unreadable", map[string]string{SettingCertFile: certFile, SettingKeyFile: filepath.Join(dir, "nope.pem")}, SettingKeyFile},
		{"key file without a key", map[string]string{SettingCertFile: certFile, SettingKeyFile: junkFile}, SettingKeyFile},
		{"certificate of another key", map[string]string{SettingCertFile: otherFile, SettingKeyFile: keyFile}, SettingCertFile},
		{"both forms", map[string]string{SettingCertFile: certFile, SettingKeyFile: keyFile, SettingPKCS12File: p12File}, SettingPKCS12File},
		{"pkcs12 file missing", map[string]string{SettingPKCS12File: p12File}, SettingPKCS12File},
		{"pkcs12 file not pkcs12", map[string]string{SettingPKCS12File: junkFile, SettingPKCS12Password: "s3cret-pw"}, SettingPKCS12File},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			key, err := LoadKey(settings.MapLookup(tt.settings))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if key.Signer == nil || len(key.Chain) == 0 || !key.Chain[0].Equal(cert) {
					t.Fatalf("loaded %+v", key)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr+":") {
				t.Fatalf("err %v, want one naming %s", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "s3cret-pw") || strings.Contains(err.Error(), dir) {
				t.Fatalf("error leaks the password or path: %v", err)
			}
		})
	}
}

func TestLoadKeyPKCS12(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("openssl"); err != nil {
		// scripts/install-pdf-tools.sh (run by scripts/test.sh) installs it: under CI a missing
		// openssl is a broken set-up, not a reason to leave PKCS#12 loading untested.
		if os.Getenv("CI") == "true" {
			t.Fatal("openssl is needed to write a PKCS#12 file (scripts/install-pdf-tools.sh installs it)")
		}
		t.Skip("openssl is needed to write a PKCS#12 file (scripts/install-pdf-tools.sh installs it)")
	}
	dir := t.TempDir()
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	cert := selfSigned(k, "p12 test")
	der, _ := x509.MarshalPKCS8PrivateKey(k)
	keyFile := writeFile(t, dir, "key.pem", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	certFile := writeFile(t, dir, "cert.pem", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw}))
	p12 := filepath.Join(dir, "seal.p12")
	if out, err := exec.Command("openssl", "pkcs12", "-export", "-inkey", keyFile, "-in", certFile, "-out", p12, "-passout", "pass:pw-123").CombinedOutput(); err != nil {
		t.Fatalf("openssl: %v %s", err, out)
	}
	key, err := LoadKey(settings.MapLookup(map[string]string{SettingPKCS12File: p12, SettingPKCS12Password: "pw-123"}))
	if err != nil || !key.Chain[0].Equal(cert) {
		t.Fatalf("pkcs12: %v", err)
	}
	_, err = LoadKey(settings.MapLookup(map[string]string{SettingPKCS12File: p12, SettingPKCS12Password: "wrong-pw"}))
	if err == nil || !strings.HasPrefix(err.Error(), SettingPKCS12File+":") || strings.Contains(err.Error(), "wrong-pw") {
		t.Fatalf("wrong password: %v", err)
	}
}

func TestLoadConfig(t *testing.T) {
	t.Parallel()
	both := keyAndCertFile(t)
	c, err := LoadConfig(settings.MapLookup(map[string]string{SettingCertFile: both, SettingKeyFile: both,
		SettingTSAURL: "https://tsa.example.test/tsr", SettingStuckAfter: "30m"}))
	if err != nil || c.TSAURL != "https://tsa.example.test/tsr" || c.StuckAfter != 30*time.Minute || c.LockTTL != DefaultLockTTL || c.Key.Signer == nil {
		t.Fatalf("config %+v %v", c, err)
	}
	c, err = LoadConfig(settings.MapLookup(map[string]string{SettingCertFile: both, SettingKeyFile: both, SettingLockTTL: "5s"}))
	if err != nil || c.LockTTL != 5*time.Second {
		t.Fatalf("config %+v %v", c, err)
	}
	_, err = LoadConfig(settings.MapLookup(map[string]string{SettingTSAURL: "ftp://x", SettingStuckAfter: "1m", SettingLockTTL: "1s"}))
	for _, name := range []string{SettingTSAURL, SettingStuckAfter, SettingLockTTL, SettingCertFile} {
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Fatalf("error %v does not name %s", err, name)
		}
	}
}

// keyAndCertFile writes a P-256 key and its self-signed certificate into one PEM file.
func keyAndCertFile(t *testing.T) string {
	t.Helper()
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ := x509.MarshalPKCS8PrivateKey(k)
	return writeFile(t, t.TempDir(), "both.pem", append(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: selfSigned(k, "cfg").Raw})...))
}

func writeFile(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// selfSigned is a one-day self-signed certificate of k.
func selfSigned(k crypto.Signer, cn string) *x509.Certificate {
	tpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, k.Public(), k)
	if err != nil {
		panic(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		panic(err)
	}
	return c
}

func TestLoadConfigLevel(t *testing.T) {
	t.Parallel()
	both := keyAndCertFile(t)
	const tsa = "https://tsa.example.test/tsr"
	for _, tc := range []struct {
		tsa, level string
		want       ltv.Level
		wantErr    bool
	}{
		{tsa, "", ltv.LevelLTA, false}, // a TSA means B-LTA unless said otherwise
		{"", "", ltv.LevelB, false},
		{tsa, "b-t", ltv.LevelT, false},
		{tsa, "B-LT", ltv.LevelLT, false},
		{tsa, "B-B", ltv.LevelB, false},
		{"", "B-LTA", 0, true}, // a timestamp level without a TSA
		{tsa, "LTA", 0, true},
	} {
		set := map[string]string{SettingCertFile: both, SettingKeyFile: both, SettingTSAURL: tc.tsa, SettingLevel: tc.level}
		c, err := LoadConfig(settings.MapLookup(set))
		if tc.wantErr {
			if err == nil || !strings.Contains(err.Error(), SettingLevel) {
				t.Errorf("%+v: error %v, want one naming %s", tc, err, SettingLevel)
			}
			continue
		}
		if err != nil || c.Level != tc.want {
			t.Errorf("%+v: level %s, err %v; want %s", tc, c.Level, err, tc.want)
		}
	}
}
