// Package keyvault is the seal key in Azure Key Vault or Managed HSM (DESIGN 16): a
// crypto.Signer over the vault's sign operation with a key whose private part never leaves the
// vault, and the certificate chain from the key's certificate secret (or one the caller
// passes). The domain sees a plain crypto.Signer and chain; only this adapter imports the Key
// Vault SDK (azkeys, azsecrets), whose pipeline does the challenge authentication, retries and
// time-outs.
package keyvault

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/security/keyvault/azkeys"
	"github.com/Azure/azure-sdk-for-go/sdk/security/keyvault/azsecrets"

	"github.com/esign-svc/esign/shared/pdf/pades"
)

// Content types of a certificate's secret (the certificate policy's secret_props).
const (
	ContentTypePEM    = "application/x-pem-file"
	ContentTypePKCS12 = "application/x-pkcs12"
)

// Defaults of Options.
const (
	// DefaultTryTimeout bounds one try of a vault request (azcore's retry policy tries again
	// after it, as after a 408, 429 or 5xx answer, with its own back-off).
	DefaultTryTimeout = 15 * time.Second
	// DefaultSignTimeout bounds one Sign call, its retries included (crypto.Signer has no
	// context).
	DefaultSignTimeout = time.Minute
)

// ErrKeyID is wrapped by a malformed key identifier.
var ErrKeyID = errors.New("keyvault: key id")

// KeyID is a parsed key identifier: https://<vault host>/keys/<name>[/<version>].
type KeyID struct {
	Vault   string // https://<host>, the vault's (or Managed HSM's) URL
	Name    string
	Version string // empty: the key's current version, pinned by Open
}

// String is the identifier's URL form.
func (k KeyID) String() string {
	s := k.Vault + "/keys/" + k.Name
	if k.Version != "" {
		s += "/" + k.Version
	}
	return s
}

var (
	keyName    = regexp.MustCompile(`^[0-9A-Za-z-]{1,127}$`)
	keyVersion = regexp.MustCompile(`^[0-9A-Za-z]{1,64}$`)
)

// ParseKeyID reads a key identifier as the portal and `az keyvault key show` print it:
// an https URL of the vault with the path /keys/<name> or /keys/<name>/<version>, nothing else
// (no user, query or fragment). Errors wrap ErrKeyID.
func ParseKeyID(s string) (KeyID, error) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil {
		return KeyID{}, fmt.Errorf("%w: not a URL", ErrKeyID)
	}
	if u.Scheme != "https" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return KeyID{}, fmt.Errorf("%w: must be https://<vault host>/keys/<name>[/<version>]", ErrKeyID)
	}
	parts := strings.Split(strings.TrimSuffix(u.Path, "/"), "/")
	if len(parts) < 3 || len(parts) > 4 || parts[0] != "" || parts[1] != "keys" || !keyName.MatchString(parts[2]) {
		return KeyID{}, fmt.Errorf("%w: must be https://<vault host>/keys/<name>[/<version>]", ErrKeyID)
	}
	id := KeyID{Vault: "https://" + u.Host, Name: parts[2]}
	if len(parts) == 4 {
		if !keyVersion.MatchString(parts[3]) {
			return KeyID{}, fmt.Errorf("%w: malformed key version", ErrKeyID)
		}
		id.Version = parts[3]
	}
	return id, nil
}

// Options configure Open.
type Options struct {
	// Credential signs the vault requests in (the app's managed identity in Azure). Required.
	Credential azcore.TokenCredential
	// Client are the SDK's client options: the transport (tests trust a local server through
	// it), the retry policy (zero: the SDK's, with DefaultTryTimeout per try).
	Client azcore.ClientOptions
	// Chain, when set, is the certificate chain to use instead of the key's certificate secret:
	// a Managed HSM has keys only, no certificates. It must hold the key's certificate.
	Chain []*x509.Certificate
	// SignTimeout bounds one Sign (zero: DefaultSignTimeout).
	SignTimeout time.Duration
}

// Signer is a crypto.Signer over the vault's sign operation with one key version. Safe for
// concurrent use.
type Signer struct {
	client  *azkeys.Client
	id      KeyID // with its version
	pub     crypto.PublicKey
	timeout time.Duration
}

// Open reads the key's public part (pinning its current version when id names none), checks
// that it can sign and is not exportable, and reads its certificate chain: o.Chain, or the
// certificate secret of the same name and version (a vault certificate's key and secret share
// them), PEM or PKCS#12, which must hold no private key. The chain comes back signer first.
// Errors name what is wrong; none carries a token or key material.
func Open(ctx context.Context, id KeyID, o Options) (*Signer, []*x509.Certificate, error) {
	if o.Credential == nil {
		return nil, nil, errors.New("keyvault: no credential")
	}
	if o.Client.Retry.TryTimeout == 0 {
		o.Client.Retry.TryTimeout = DefaultTryTimeout
	}
	if o.SignTimeout <= 0 {
		o.SignTimeout = DefaultSignTimeout
	}
	keys, err := azkeys.NewClient(id.Vault, o.Credential, &azkeys.ClientOptions{ClientOptions: o.Client})
	if err != nil {
		return nil, nil, fmt.Errorf("keyvault: %w", err)
	}
	got, err := keys.GetKey(ctx, id.Name, id.Version, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("keyvault: get key %s: %w", id, err)
	}
	s := &Signer{client: keys, id: id, timeout: o.SignTimeout}
	if s.id.Version, s.pub, err = checkKey(got.KeyBundle, id); err != nil {
		return nil, nil, err
	}
	chain := append([]*x509.Certificate(nil), o.Chain...)
	if len(chain) == 0 {
		if chain, err = certificateChain(ctx, s.id, o); err != nil {
			return nil, nil, err
		}
	}
	if chain, err = pades.SignerFirst(s.pub, chain); err != nil {
		return nil, nil, fmt.Errorf("keyvault: key %s: %w", s.id, err)
	}
	return s, chain, nil
}

// checkKey returns the version and public key of a GET key answer for id. Errors: the answer
// is for another key, the key is disabled, exportable, not allowed to sign, or of a type or
// curve the seal does not use.
func checkKey(b azkeys.KeyBundle, id KeyID) (string, crypto.PublicKey, error) {
	k := b.Key
	if k == nil || k.KID == nil || k.Kty == nil {
		return "", nil, fmt.Errorf("keyvault: key %s: answer without kid or kty", id)
	}
	if k.KID.Name() != id.Name || (id.Version != "" && k.KID.Version() != id.Version) || k.KID.Version() == "" {
		return "", nil, fmt.Errorf("keyvault: key %s: answer is for key %s", id, *k.KID)
	}
	if a := b.Attributes; a != nil {
		if a.Enabled != nil && !*a.Enabled {
			return "", nil, fmt.Errorf("keyvault: key %s is disabled", id)
		}
		if a.Exportable != nil && *a.Exportable {
			return "", nil, fmt.Errorf("keyvault: key %s is exportable: the seal key must not be", id)
		}
	}
	if len(k.KeyOps) > 0 {
		canSign := false
		for _, op := range k.KeyOps {
			canSign = canSign || (op != nil && *op == azkeys.KeyOperationSign)
		}
		if !canSign {
			return "", nil, fmt.Errorf("keyvault: key %s does not permit the sign operation", id)
		}
	}
	pub, err := publicKey(k)
	if err != nil {
		return "", nil, fmt.Errorf("keyvault: key %s: %w", id, err)
	}
	return k.KID.Version(), pub, nil
}

// curves are the EC curves a seal key may use, by JWK name.
var curves = map[azkeys.CurveName]elliptic.Curve{
	azkeys.CurveNameP256: elliptic.P256(),
	azkeys.CurveNameP384: elliptic.P384(),
	azkeys.CurveNameP521: elliptic.P521(),
}

// publicKey is the JWK's public key: RSA (n, e) or EC on P-256, P-384 or P-521 (x, y).
func publicKey(k *azkeys.JSONWebKey) (crypto.PublicKey, error) {
	switch *k.Kty {
	case azkeys.KeyTypeRSA, azkeys.KeyTypeRSAHSM:
		if len(k.N) == 0 || len(k.E) == 0 || len(k.E) > 4 {
			return nil, errors.New("malformed RSA key")
		}
		e := new(big.Int).SetBytes(k.E)
		return &rsa.PublicKey{N: new(big.Int).SetBytes(k.N), E: int(e.Int64())}, nil
	case azkeys.KeyTypeEC, azkeys.KeyTypeECHSM:
		if k.Crv == nil || curves[*k.Crv] == nil {
			return nil, errors.New("EC key on a curve other than P-256, P-384 or P-521")
		}
		curve := curves[*k.Crv]
		size := (curve.Params().BitSize + 7) / 8
		if len(k.X) != size || len(k.Y) != size {
			return nil, errors.New("malformed EC key")
		}
		point := append(append([]byte{4}, k.X...), k.Y...)
		pub, err := ecdsa.ParseUncompressedPublicKey(curve, point)
		if err != nil {
			return nil, fmt.Errorf("malformed EC key: %v", err)
		}
		return pub, nil
	}
	return nil, fmt.Errorf("key type %s cannot seal (RSA or EC only)", *k.Kty)
}

// certificateChain reads the certificate secret of the key's name and version.
func certificateChain(ctx context.Context, id KeyID, o Options) ([]*x509.Certificate, error) {
	secrets, err := azsecrets.NewClient(id.Vault, o.Credential, &azsecrets.ClientOptions{ClientOptions: o.Client})
	if err != nil {
		return nil, fmt.Errorf("keyvault: %w", err)
	}
	got, err := secrets.GetSecret(ctx, id.Name, id.Version, nil)
	if err != nil {
		return nil, fmt.Errorf("keyvault: get the certificate secret of key %s: %w", id, err)
	}
	if got.KID != nil && (got.KID.Name() != id.Name || got.KID.Version() != id.Version) {
		return nil, fmt.Errorf("keyvault: the secret %s/%s is not key %s's certificate", id.Name, id.Version, id)
	}
	if got.Value == nil || got.ContentType == nil {
		return nil, fmt.Errorf("keyvault: the certificate secret of key %s has no value or content type", id)
	}
	var data []byte
	var password *string
	switch *got.ContentType {
	case ContentTypePEM:
		data = []byte(*got.Value)
	case ContentTypePKCS12:
		if data, err = base64.StdEncoding.DecodeString(*got.Value); err != nil {
			return nil, fmt.Errorf("keyvault: the certificate secret of key %s is not base64", id)
		}
		password = new(string) // a vault's PKCS#12 secret has no password
	default:
		return nil, fmt.Errorf("keyvault: the secret of key %s has content type %q, not a certificate's", id, *got.ContentType)
	}
	chain, withKey, err := pades.ParseCertificates(data, password)
	if err != nil {
		return nil, fmt.Errorf("keyvault: the certificate secret of key %s: %w", id, err)
	}
	if withKey {
		return nil, fmt.Errorf("keyvault: the certificate secret of key %s holds the private key: import the certificate with a non-exportable key policy", id)
	}
	return chain, nil
}
