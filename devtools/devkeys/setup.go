// Package devkeys makes and reads the local development keys under .local/ (DESIGN 1a): token
// and PII keys, the portal callback secret, the secret that signs the workflows' callbacks, a
// self-signed seal certificate, the operator's licence key and a dev licence, and a dev
// identity-provider key with its JWKS. It also mints dev JWTs, so end-to-end tests and `make
// token` get tokens the running service accepts.
// Nothing here is for production: production keys are app settings backed by Key Vault.
package devkeys

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/keyring"
	"github.com/esign-svc/esign/shared/licence"
	"github.com/esign-svc/esign/shared/pdf/tsatest"
)

// Fixed development values.
const (
	DevTenantID    = "00000000-0000-4000-8000-00000000de01"
	DevAudience    = "api://esign-dev"
	DefaultBaseURL = "http://127.0.0.1:7071"
	// AzuriteConnectionString is the explicit devstoreaccount1 string (the Go SDKs refuse
	// UseDevelopmentStorage=true) for Azurite on its default ports.
	AzuriteConnectionString = "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;" +
		"AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;" +
		"BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;" +
		"QueueEndpoint=http://127.0.0.1:10001/devstoreaccount1;" +
		"TableEndpoint=http://127.0.0.1:10002/devstoreaccount1;"
	SealCommonName = "eSign Dev Seal"
)

// DevIssuer is AUTH_ISSUER in development.
var DevIssuer = "https://login.dev.local/" + DevTenantID + "/v2.0"

// File names under <dir>/keys.
const (
	KeysDir            = "keys"
	FileTokenKeys      = "token-keys"
	FilePIIHashKey     = "pii-hash-key"
	FilePIIEncKeys     = "pii-enc-keys"
	FileCallbackSecret = "callback-secrets"
	FileWebhookSecret  = "webhook-secrets"
	FileHostKey        = "host-key"
	FileMasterKey      = "master-key"
	FileSealCert       = "seal-cert.pem"
	FileSealKey        = "seal-key.pem"
	FileOperatorKey    = "operator-ed25519.pem"
	FileLicence        = "licence.jws"
	FileIdPKey         = "idp-rsa.pem"
	FileJWKS           = "jwks.json"
	FileDevEnv         = "dev.env"
)

// Options for Setup. Zero values take defaults.
type Options struct {
	BaseURL   string    // default http://127.0.0.1:7071
	PortalURL string    // default BaseURL + "/portal"
	OAuthURL  string    // the dev OAuth token endpoint's base (devtools/cmd/devoauth), default DefaultOAuthURL
	Now       time.Time // default time.Now() (tests move it to check licence renewal)
	// PKIURL, when set, makes the development PKI served there (devtools/cmd/devpki; make run
	// uses DefaultPKIURL): the seal certificate is issued by its CA, and dev.env names its TSA
	// (SEAL_TSA_URL) and SEAL_LEVEL B-LTA. Empty: a self-signed seal and no TSA (B-B).
	PKIURL string
}

// Result says what Setup did.
type Result struct {
	Dir     string            // absolute
	EnvFile string            // absolute path of dev.env
	Env     map[string]string // what dev.env holds
	Created []string          // files made on this run (names under keys/)
}

// Setup creates what is missing under dir (never overwriting a key that exists), re-issues the
// dev licence when it is missing, invalid or expired, rewrites jwks.json and dev.env from the
// key files, and returns the settings. Secret files are mode 0600, keys/ 0700.
// Errors: I/O, or an existing key file that cannot be parsed (named; delete it to regenerate).
func Setup(dir string, o Options) (*Result, error) {
	if o.BaseURL == "" {
		o.BaseURL = DefaultBaseURL
	}
	o.BaseURL = strings.TrimRight(o.BaseURL, "/")
	if o.PortalURL == "" {
		o.PortalURL = o.BaseURL + "/portal"
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	if o.OAuthURL == "" {
		o.OAuthURL = DefaultOAuthURL
	}
	origin, err := originOf(o.PortalURL)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	kd := filepath.Join(abs, KeysDir)
	if err := os.MkdirAll(kd, 0o700); err != nil {
		return nil, err
	}
	res := &Result{Dir: abs, EnvFile: filepath.Join(abs, FileDevEnv)}
	p := func(name string) string { return filepath.Join(kd, name) }
	text := func(name string, gen func() string) (string, error) {
		b, err := ensure(p(name), 0o600, func() ([]byte, error) { return []byte(gen() + "\n"), nil }, &res.Created)
		return strings.TrimSpace(string(b)), err
	}

	tokenKeys, err := text(FileTokenKeys, func() string {
		return keyring.Format(keyring.Key{ID: "dev1", Secret: randomBytes(32)})
	})
	if err != nil {
		return nil, err
	}
	hashKey, err := text(FilePIIHashKey, func() string { return base64.StdEncoding.EncodeToString(randomBytes(32)) })
	if err != nil {
		return nil, err
	}
	encKeys, err := text(FilePIIEncKeys, func() string {
		return keyring.Format(keyring.Key{ID: "dev1", Secret: randomBytes(32)})
	})
	if err != nil {
		return nil, err
	}
	cbSecrets, err := text(FileCallbackSecret, func() string { return hex.EncodeToString(randomBytes(32)) })
	if err != nil {
		return nil, err
	}
	hostKey, err := text(FileHostKey, func() string { return base64.RawURLEncoding.EncodeToString(randomBytes(32)) })
	if err != nil {
		return nil, err
	}
	masterKey, err := text(FileMasterKey, func() string { return base64.RawURLEncoding.EncodeToString(randomBytes(32)) })
	if err != nil {
		return nil, err
	}
	if err := ensureSeal(p(FileSealCert), p(FileSealKey), o.Now, &res.Created); err != nil {
		return nil, err
	}
	if o.PKIURL != "" {
		if err := ensurePKI(kd, strings.TrimRight(o.PKIURL, "/"), o.Now, &res.Created); err != nil {
			return nil, err
		}
	}
	opPub, err := ensureLicence(p(FileOperatorKey), p(FileLicence), o.Now, &res.Created)
	if err != nil {
		return nil, err
	}
	idpPEM, err := ensure(p(FileIdPKey), 0o600, func() ([]byte, error) { return rsaPKCS8PEM(2048) }, &res.Created)
	if err != nil {
		return nil, err
	}
	idp, err := parseIdP(idpPEM)
	if err != nil {
		return nil, fmt.Errorf("%s: %w (delete it to regenerate)", p(FileIdPKey), err)
	}
	if err := replaceFile(p(FileJWKS), idp.JWKS(), 0o644); err != nil {
		return nil, err
	}

	clientSecret, err := text(FileClientSecret, func() string { return base64.RawURLEncoding.EncodeToString(randomBytes(32)) })
	if err != nil {
		return nil, err
	}

	// The secret that signs the workflows' terminal callbacks (X-Esign-Signature), as the
	// portal's: a receiver on this machine verifies them with it (README "A workflow's callback
	// on this machine").
	webhookSecrets, err := text(FileWebhookSecret, func() string { return hex.EncodeToString(randomBytes(32)) })
	if err != nil {
		return nil, err
	}

	firstSecret, _, _ := strings.Cut(cbSecrets, ",")
	res.Env = map[string]string{
		"BASE_URL":                  o.BaseURL,
		"HOST_KEY":                  hostKey,
		"MASTER_KEY":                masterKey,
		"STORAGE_CONNECTION_STRING": AzuriteConnectionString,
		"AzureWebJobsStorage":       AzuriteConnectionString,
		"PORTAL_CALLBACK_SECRETS":   cbSecrets,
		"PORTAL_CALLBACK_SECRET":    firstSecret,
		"PORTAL_URL":                o.PortalURL,
		"PORTAL_ORIGIN":             origin,
		"TOKEN_KEYS":                tokenKeys,
		"PII_HASH_KEY":              hashKey,
		"PII_ENC_KEYS":              encKeys,
		"AUTH_ISSUER":               DevIssuer,
		"AUTH_AUDIENCE":             DevAudience,
		"AUTH_JWKS_FILE":            p(FileJWKS),
		"LICENCE_FILE":              p(FileLicence),
		"LICENCE_PUBLIC_KEY":        base64.StdEncoding.EncodeToString(opPub),
		"SEAL_CERT_FILE":            p(FileSealCert),
		"SEAL_KEY_FILE":             p(FileSealKey),
		"EMAIL_PROVIDER":            "outbox",
		"SMS_PROVIDER":              "outbox",
		"DEV_TENANT_ID":             DevTenantID,
		"DEV_IDP_KEY_FILE":          p(FileIdPKey),
		"WEBHOOK_SECRETS":           webhookSecrets, // make run is a complete service: a workflow's
		"WEBHOOK_ALLOW_LOOPBACK":    "true",         // callbackUrl may be a listener on this machine
		// The connector's settings (svcconnect; spec "Source-system connection settings"),
		// with the dev OAuth token endpoint of devtools/cmd/devoauth as the authority.
		"SERVICE_DISPATCHER_BASE_URL":      o.BaseURL + "/api",
		"SERVICE_DISPATCHER_CODE":          hostKey,
		"SERVICE_DISPATCHER_TENANT_ID":     DevTenantID,
		"SERVICE_DISPATCHER_CLIENT_ID":     DevClientID,
		"SERVICE_DISPATCHER_CLIENT_SECRET": clientSecret,
		"SERVICE_DISPATCHER_SCOPE":         DevAudience + "/.default",
		"SERVICE_DISPATCHER_AUTHORITY_URL": strings.TrimRight(o.OAuthURL, "/"),
		"SERVICE_PORTAL_URL":               o.PortalURL,
	}
	if o.PKIURL != "" {
		res.Env["SEAL_TSA_URL"] = strings.TrimRight(o.PKIURL, "/") + tsatest.PathTSA
		res.Env["SEAL_LEVEL"] = "B-LTA"
	}
	if err := replaceFile(res.EnvFile, FormatEnv(res.Env), 0o600); err != nil {
		return nil, err
	}
	return res, nil
}

func originOf(portalURL string) (string, error) {
	u, err := url.Parse(portalURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("portal URL %q must be an absolute http(s) URL", portalURL)
	}
	return u.Scheme + "://" + u.Host, nil
}

func rsaPKCS8PEM(bits int) ([]byte, error) {
	k, err := rsa.GenerateKey(rand.Reader, bits)
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// ensureSeal makes the seal key and its certificate as a pair when either is missing.
func ensureSeal(certPath, keyPath string, now time.Time, created *[]string) error {
	_, errC := os.Stat(certPath)
	_, errK := os.Stat(keyPath)
	if errC == nil && errK == nil {
		return nil
	}
	if errC == nil || errK == nil {
		return fmt.Errorf("seal certificate and key must exist together: delete %s or %s to regenerate the pair", certPath, keyPath)
	}
	keyPEM, err := rsaPKCS8PEM(2048)
	if err != nil {
		return err
	}
	block, _ := pem.Decode(keyPEM)
	k, _ := x509.ParsePKCS8PrivateKey(block.Bytes)
	priv := k.(*rsa.PrivateKey)
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: SealCommonName, Organization: []string{"eSign development"}},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.AddDate(5, 0, 0),
		// A self-signed seal certificate is its own root: it must be allowed to sign
		// certificates for validators (pdfcpu) to accept its self-signature.
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageContentCommitment | x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		return err
	}
	if _, err := createFile(keyPath, keyPEM, 0o600); err != nil {
		return err
	}
	if _, err := createFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return err
	}
	*created = append(*created, filepath.Base(keyPath), filepath.Base(certPath))
	return nil
}

// ensureLicence makes the operator key when missing and (re-)issues the dev licence when it is
// missing, does not verify under that key, or has expired. It returns the operator public key.
func ensureLicence(opPath, licPath string, now time.Time, created *[]string) (ed25519.PublicKey, error) {
	opPEM, err := ensure(opPath, 0o600, func() ([]byte, error) {
		_, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, err
		}
		der, err := x509.MarshalPKCS8PrivateKey(priv)
		if err != nil {
			return nil, err
		}
		return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
	}, created)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(opPEM)
	if block == nil {
		return nil, fmt.Errorf("%s: not PEM (delete it to regenerate)", opPath)
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	priv, ok := k.(ed25519.PrivateKey)
	if err != nil || !ok {
		return nil, fmt.Errorf("%s: not an Ed25519 PKCS#8 key (delete it to regenerate)", opPath)
	}
	pub := priv.Public().(ed25519.PublicKey)
	clock := licence.WithClock(func() time.Time { return now })
	cur, err := licence.Load(licPath, pub, clock)
	switch _, invalid := apperr.As(err); {
	case err == nil && !cur.Expired() && hasAll(cur):
		return pub, nil
	case err != nil && !invalid && !errors.Is(err, os.ErrNotExist):
		return nil, err // unreadable: do not overwrite
	}
	tok, err := licence.Sign(priv, licence.Claims{
		Issuer: "esign-dev-operator", ID: "dev-" + hex.EncodeToString(randomBytes(8)),
		CustomerID: "dev", Features: licence.AllFeatures,
		IssuedAt: now.Unix(), ExpiresAt: now.AddDate(1, 0, 0).Unix(),
	})
	if err != nil {
		return nil, err
	}
	if err := replaceFile(licPath, []byte(tok+"\n"), 0o600); err != nil {
		return nil, err
	}
	*created = append(*created, filepath.Base(licPath))
	return pub, nil
}

func hasAll(l *licence.Licence) bool {
	for _, f := range licence.AllFeatures {
		if !slices.Contains(l.Features, f) {
			return false
		}
	}
	return true
}
