package app

import (
	"bytes"
	"context"
	"crypto/x509"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/esign-svc/esign/processor/internal/sealcfg"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/azure/keyvault"
	"github.com/esign-svc/esign/shared/azure/keyvault/keyvaulttest"
	"github.com/esign-svc/esign/shared/pdf/tsatest"
	"github.com/esign-svc/esign/shared/settings"
)

// With SEAL_KEY_VAULT_KEY_ID (and no key files) the processor starts with the vault's key as
// its seal key; a key the vault does not have stops the start, naming the setting.
func TestNewOpensTheVaultSealKey(t *testing.T) {
	t.Parallel()
	vault := keyvaulttest.New(t)
	key, cert := tsatest.NewCert(t, "vault seal", 2048)
	vault.AddCertificate(t, "seal", key, []*x509.Certificate{cert}, keyvaulttest.PEM)
	conn := azuritetest.Shared(t).ConnectionString()
	var log bytes.Buffer
	start := func(keyID string) (*Deps, error) {
		m := settings(conn, map[string]string{sealcfg.SettingKeyVaultKeyID: keyID})
		delete(m, sealcfg.SettingCertFile)
		delete(m, sealcfg.SettingKeyFile)
		cfg, err := Load(settings.MapLookup(m))
		if err != nil {
			t.Fatal(err)
		}
		d, err := Build(cfg, zerolog.New(&log))
		if err != nil {
			t.Fatal(err)
		}
		d.SealVault = keyvault.Options{Credential: vault.Credential(), Client: vault.ClientOptions()}
		_, err = New(context.Background(), d)
		return d, err
	}
	d, err := start(vault.KeyID("seal", ""))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := d.Config.Seal.Key.Signer.(*keyvault.Signer); !ok || !d.Config.Seal.Key.Chain[0].Equal(cert) {
		t.Fatalf("seal key %+v", d.Config.Seal.Key)
	}
	if pinned := vault.KeyID("seal", d.Config.Seal.Key.Signer.(*keyvault.Signer).KeyID().Version); !strings.Contains(log.String(), pinned) {
		t.Fatalf("the start log does not name the pinned key %s:\n%s", pinned, log.String())
	}
	if _, err := start(vault.KeyID("missing", "")); err == nil || !strings.Contains(err.Error(), sealcfg.SettingKeyVaultKeyID) {
		t.Fatalf("start with a missing vault key: %v", err)
	}
}
