package sealcfg

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/pem"
	"strings"
	"testing"

	"github.com/esign-svc/esign/shared/azure/keyvault"
	"github.com/esign-svc/esign/shared/azure/keyvault/keyvaulttest"
	"github.com/esign-svc/esign/shared/settings"
)

func TestLoadConfigKeyVault(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	cert := selfSigned(k, "vault seal")
	der, _ := x509.MarshalPKCS8PrivateKey(k)
	chainFile := writeFile(t, dir, "chain.pem", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw}))
	keyFile := writeFile(t, dir, "key.pem", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	withKey := writeFile(t, dir, "both.pem", append(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})...))
	const id = "https://seal-kv.vault.azure.net/keys/seal/0123456789abcdef0123456789abcdef"

	c, err := LoadConfig(settings.MapLookup(map[string]string{SettingKeyVaultKeyID: id, SettingKeyVaultClientID: "client-1"}))
	if err != nil || c.KeyVault == nil || c.KeyVault.KeyID.String() != id || c.KeyVault.ClientID != "client-1" || c.Key.Signer != nil {
		t.Fatalf("config %+v %v", c, err)
	}
	c, err = LoadConfig(settings.MapLookup(map[string]string{SettingKeyVaultKeyID: id, SettingCertFile: chainFile}))
	if err != nil || len(c.KeyVault.Chain) != 1 || !c.KeyVault.Chain[0].Equal(cert) {
		t.Fatalf("chain file: %+v %v", c.KeyVault, err)
	}
	for _, tc := range []struct {
		name     string
		settings map[string]string
		wantErr  string
	}{
		{"not a key id", map[string]string{SettingKeyVaultKeyID: "https://seal-kv.vault.azure.net/secrets/seal"}, SettingKeyVaultKeyID},
		{"http key id", map[string]string{SettingKeyVaultKeyID: "http://seal-kv.vault.azure.net/keys/seal"}, SettingKeyVaultKeyID},
		{"and a key file", map[string]string{SettingKeyVaultKeyID: id, SettingCertFile: chainFile, SettingKeyFile: keyFile}, SettingKeyFile},
		{"and a pkcs12 file", map[string]string{SettingKeyVaultKeyID: id, SettingPKCS12File: keyFile}, SettingPKCS12File},
		{"chain file with the key", map[string]string{SettingKeyVaultKeyID: id, SettingCertFile: withKey}, SettingCertFile},
		{"chain file missing", map[string]string{SettingKeyVaultKeyID: id, SettingCertFile: dir + "/nope.pem"}, SettingCertFile},
	} {
		_, err := LoadConfig(settings.MapLookup(tc.settings))
		if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr+":") {
			t.Errorf("%s: err %v, want one naming %s", tc.name, err, tc.wantErr)
		}
		if err != nil && strings.Contains(err.Error(), dir) {
			t.Errorf("%s: error leaks the path: %v", tc.name, err)
		}
	}
}

func TestOpenKeyFromTheVault(t *testing.T) {
	t.Parallel()
	vault := keyvaulttest.New(t)
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	cert := selfSigned(k, "vault seal")
	vault.AddCertificate(t, "seal", k, []*x509.Certificate{cert}, keyvaulttest.PEM)
	opts := keyvault.Options{Credential: vault.Credential(), Client: vault.ClientOptions()}

	// file keys: OpenKey leaves them alone
	files := Config{Key: Key{Signer: k, Chain: []*x509.Certificate{cert}}}
	if err := files.OpenKey(context.Background(), opts); err != nil || files.Key.Signer != crypto.Signer(k) {
		t.Fatalf("file key changed: %v", err)
	}
	c, err := LoadConfig(settings.MapLookup(map[string]string{SettingKeyVaultKeyID: vault.KeyID("seal", "")}))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.OpenKey(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Key.Signer.(*keyvault.Signer); !ok || len(c.Key.Chain) != 1 || !c.Key.Chain[0].Equal(cert) {
		t.Fatalf("key %+v", c.Key)
	}
	d := sha256.Sum256([]byte("x"))
	sig, err := c.Key.Signer.Sign(rand.Reader, d[:], crypto.SHA256)
	if err != nil || !ecdsa.VerifyASN1(&k.PublicKey, d[:], sig) {
		t.Fatalf("sign: %v", err)
	}
	c, _ = LoadConfig(settings.MapLookup(map[string]string{SettingKeyVaultKeyID: vault.KeyID("missing", "")}))
	if err := c.OpenKey(context.Background(), opts); err == nil || !strings.HasPrefix(err.Error(), SettingKeyVaultKeyID+":") {
		t.Fatalf("missing key: %v", err)
	}
	if v := vault.Violations(); len(v) > 0 {
		t.Fatal(v)
	}
}
