// Package sealcfg is the seal key and the seal settings (SEAL_*) that the processor's two seal
// jobs, the session seal (processor/seal) and the workflow seal (processor/workflowseal), share:
// a package of its own so that neither job package imports the other.
package sealcfg

import (
	"context"
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/azure/keyvault"
	"github.com/esign-svc/esign/shared/pdf"
	"github.com/esign-svc/esign/shared/pdf/ltv"
	"github.com/esign-svc/esign/shared/pdf/pades"
	"github.com/esign-svc/esign/shared/settings"
)

// Settings of the seal jobs.
const (
	SettingCertFile       = "SEAL_CERT_FILE"
	SettingKeyFile        = "SEAL_KEY_FILE"
	SettingPKCS12File     = "SEAL_PKCS12_FILE"
	SettingPKCS12Password = "SEAL_PKCS12_PASSWORD"
	SettingTSAURL         = "SEAL_TSA_URL"
	// SettingKeyVaultKeyID selects a Key Vault (or Managed HSM) key as the seal key:
	// https://<vault>/keys/<name>[/<version>]. Its chain comes from the key's certificate secret,
	// or from SEAL_CERT_FILE when set (a Managed HSM has no certificates).
	SettingKeyVaultKeyID = "SEAL_KEY_VAULT_KEY_ID"
	// SettingKeyVaultClientID is the client id of the user-assigned managed identity that signs
	// with the key; empty: the system-assigned identity.
	SettingKeyVaultClientID = "SEAL_KEY_VAULT_CLIENT_ID"
	SettingLevel            = "SEAL_LEVEL"
	SettingStuckAfter       = "SEAL_RECONCILE_AFTER"
	SettingLockTTL          = "SEAL_LOCK_TTL"
)

// Defaults of Config.
const (
	DefaultStuckAfter = 15 * time.Minute
	DefaultLockTTL    = time.Minute
)

// MinLockTTL is the shortest seal lock SEAL_LOCK_TTL accepts (the lock is renewed every third
// of it, and a storage call must fit in that).
const MinLockTTL = 3 * time.Second

// Key is the seal's signing key and its certificate chain (signer certificate first).
type Key struct {
	Signer crypto.Signer
	Chain  []*x509.Certificate
}

// KeyVault is the seal key in a vault (SEAL_KEY_VAULT_KEY_ID), opened by Config.OpenKey.
type KeyVault struct {
	KeyID    keyvault.KeyID
	ClientID string              // SEAL_KEY_VAULT_CLIENT_ID
	Chain    []*x509.Certificate // SEAL_CERT_FILE; nil: the key's certificate secret
}

// Config is the seal jobs' validated configuration.
type Config struct {
	// Key is the seal key: loaded from its files, or, when KeyVault is set, by OpenKey.
	Key      Key
	KeyVault *KeyVault
	TSAURL   string // optional RFC 3161 authority
	// Level is the PAdES level the seals reach (SEAL_LEVEL; default B-LTA with a TSA, B-B
	// without): B-LT and B-LTA fetch revocation data from the addresses the certificates name.
	Level ltv.Level
	// StuckAfter is how long a session may sit in sealing before the reconciler re-queues it.
	StuckAfter time.Duration
	// LockTTL is the seal lock's lifetime (renewed while the attempt runs): how long a dead
	// attempt blocks the retry of its message.
	LockTTL time.Duration
}

// LoadConfig reads the seal key's settings (SEAL_KEY_VAULT_KEY_ID, whose key OpenKey opens, or
// the key files, see LoadKey), SEAL_TSA_URL (optional absolute http(s) URL), SEAL_LEVEL (B-B,
// B-T, B-LT or B-LTA; default B-LTA with a TSA, else B-B; above B-B only with a TSA),
// SEAL_RECONCILE_AFTER (Go duration, default 15m, at least 5m) and SEAL_LOCK_TTL (Go
// duration, default 1m, at least MinLockTTL and below SEAL_RECONCILE_AFTER). The error names
// every setting at fault.
func LoadConfig(lookup settings.Lookup) (Config, error) {
	r := settings.NewReader(lookup)
	var c Config
	c.TSAURL = r.URL(SettingTSAURL, false)
	if v, _ := lookup(SettingLevel); v != "" {
		l, err := ltv.ParseLevel(v)
		if err != nil {
			r.Check(SettingLevel, err)
		}
		c.Level = l
	}
	if l, err := pdf.ResolveLevel(c.Level, c.TSAURL); err != nil {
		r.Check(SettingLevel, fmt.Errorf("%s needs %s", c.Level, SettingTSAURL))
	} else {
		c.Level = l
	}
	c.StuckAfter = r.Duration(SettingStuckAfter, DefaultStuckAfter)
	if c.StuckAfter < 5*time.Minute {
		r.Check(SettingStuckAfter, errors.New("must be at least 5m (the reconciler runs every five minutes)"))
	}
	c.LockTTL = r.Duration(SettingLockTTL, DefaultLockTTL)
	if c.LockTTL < MinLockTTL || c.LockTTL >= c.StuckAfter {
		r.Check(SettingLockTTL, fmt.Errorf("must be at least %s and less than %s", MinLockTTL, SettingStuckAfter))
	}
	var err error
	if v, _ := lookup(SettingKeyVaultKeyID); strings.TrimSpace(v) != "" {
		c.KeyVault, err = loadKeyVault(lookup)
	} else {
		c.Key, err = LoadKey(lookup)
	}
	return c, errors.Join(r.Err(), err)
}

// loadKeyVault reads SEAL_KEY_VAULT_KEY_ID, SEAL_KEY_VAULT_CLIENT_ID and the optional chain
// file SEAL_CERT_FILE; the key files must not be set with it.
func loadKeyVault(lookup settings.Lookup) (*KeyVault, error) {
	get := func(name string) string {
		v, _ := lookup(name)
		return strings.TrimSpace(v)
	}
	for _, name := range []string{SettingPKCS12File, SettingPKCS12Password, SettingKeyFile} {
		if get(name) != "" {
			return nil, settingErr(name, errors.New("set either the key files or "+SettingKeyVaultKeyID+", not both"))
		}
	}
	id, err := keyvault.ParseKeyID(get(SettingKeyVaultKeyID))
	if err != nil {
		return nil, settingErr(SettingKeyVaultKeyID, err)
	}
	kv := &KeyVault{KeyID: id, ClientID: get(SettingKeyVaultClientID)}
	if f := get(SettingCertFile); f != "" {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, settingErr(SettingCertFile, fileErr(err))
		}
		chain, withKey, err := pades.ParseCertificates(data, nil)
		if err != nil {
			return nil, settingErr(SettingCertFile, err)
		}
		if withKey {
			return nil, settingErr(SettingCertFile, errors.New("holds a private key: with "+SettingKeyVaultKeyID+" it is the certificate chain only"))
		}
		kv.Chain = chain
	}
	return kv, nil
}

// OpenKey opens the vault's key when the configuration names one (SEAL_KEY_VAULT_KEY_ID) and
// makes it c.Key: it reads the key's public part and its chain and checks them (see
// keyvault.Open). o.Credential nil signs in with the managed identity (SEAL_KEY_VAULT_CLIENT_ID);
// tests pass the local vault's credential and transport. Without a vault key it does nothing.
// Errors name SEAL_KEY_VAULT_KEY_ID.
func (c *Config) OpenKey(ctx context.Context, o keyvault.Options) error {
	if c.KeyVault == nil {
		return nil
	}
	if o.Credential == nil {
		cred, err := azconn.ManagedIdentity(c.KeyVault.ClientID)
		if err != nil {
			return settingErr(SettingKeyVaultClientID, err)
		}
		o.Credential = cred
	}
	if len(o.Chain) == 0 {
		o.Chain = c.KeyVault.Chain
	}
	signer, chain, err := keyvault.Open(ctx, c.KeyVault.KeyID, o)
	if err != nil {
		return settingErr(SettingKeyVaultKeyID, err)
	}
	c.Key = Key{Signer: signer, Chain: chain}
	return nil
}

// LoadKey loads the seal key from SEAL_PKCS12_FILE (with SEAL_PKCS12_PASSWORD, which may
// be empty) or from SEAL_CERT_FILE and SEAL_KEY_FILE (PEM; the key file may also hold the
// chain). Exactly one of the two forms must be set. Errors name the setting at fault and never
// carry the password or key material.
func LoadKey(lookup settings.Lookup) (Key, error) {
	get := func(name string) string {
		v, _ := lookup(name)
		return v
	}
	p12, certFile, keyFile := get(SettingPKCS12File), get(SettingCertFile), get(SettingKeyFile)
	switch {
	case p12 != "" && (certFile != "" || keyFile != ""):
		return Key{}, settingErr(SettingPKCS12File, errors.New("set either it or "+SettingCertFile+" and "+SettingKeyFile+", not both"))
	case p12 != "":
		data, err := os.ReadFile(p12)
		if err != nil {
			return Key{}, settingErr(SettingPKCS12File, fileErr(err))
		}
		signer, chain, err := pades.LoadPKCS12(data, get(SettingPKCS12Password))
		if err != nil {
			return Key{}, settingErr(SettingPKCS12File, err)
		}
		return Key{Signer: signer, Chain: chain}, nil
	case certFile == "":
		return Key{}, settingErr(SettingCertFile, errors.New("is required (or "+SettingPKCS12File+")"))
	case keyFile == "":
		return Key{}, settingErr(SettingKeyFile, errors.New("is required with "+SettingCertFile))
	}
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return Key{}, settingErr(SettingCertFile, fileErr(err))
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return Key{}, settingErr(SettingKeyFile, fileErr(err))
	}
	signer, chain, err := pades.LoadPEM(certPEM, keyPEM)
	if err != nil {
		// Which file is at fault: the key file holds no key, or no certificate matches it.
		name := SettingCertFile
		if !hasKey(keyPEM) {
			name = SettingKeyFile
		}
		return Key{}, settingErr(name, err)
	}
	return Key{Signer: signer, Chain: chain}, nil
}

// hasKey reports whether data holds a parseable private key PEM block.
func hasKey(data []byte) bool {
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return false
		}
		switch b.Type {
		case "PRIVATE KEY":
			if _, err := x509.ParsePKCS8PrivateKey(b.Bytes); err == nil {
				return true
			}
		case "RSA PRIVATE KEY":
			if _, err := x509.ParsePKCS1PrivateKey(b.Bytes); err == nil {
				return true
			}
		case "EC PRIVATE KEY":
			if _, err := x509.ParseECPrivateKey(b.Bytes); err == nil {
				return true
			}
		}
	}
}

func settingErr(name string, err error) error { return fmt.Errorf("%s: %w", name, err) }

// fileErr drops the path from a file error (the setting names it).
func fileErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("cannot read the file: %w", pe.Err)
	}
	return err
}
