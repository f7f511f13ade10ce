package devkeys

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// IdP is the dev identity provider's signing key.
type IdP struct {
	Key *rsa.PrivateKey
	Kid string // RFC 7638 thumbprint of the public key, so it is stable for a given key
}

// LoadIdP reads the dev IdP private key (PKCS#8 PEM) from path.
func LoadIdP(path string) (*IdP, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseIdP(b)
}

func parseIdP(pemBytes []byte) (*IdP, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil || block.Type != "PRIVATE KEY" {
		return nil, errors.New("dev IdP key: not a PEM PRIVATE KEY")
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("dev IdP key: %w", err)
	}
	rk, ok := k.(*rsa.PrivateKey)
	if !ok {
		return nil, errors.New("dev IdP key: not an RSA key")
	}
	return &IdP{Key: rk, Kid: thumbprint(&rk.PublicKey)}, nil
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func rsaJWKMembers(pub *rsa.PublicKey) (n, e string) {
	return b64(pub.N.Bytes()), b64(big.NewInt(int64(pub.E)).Bytes())
}

// thumbprint is the RFC 7638 JWK thumbprint (SHA-256, base64url).
func thumbprint(pub *rsa.PublicKey) string {
	n, e := rsaJWKMembers(pub)
	sum := sha256.Sum256([]byte(`{"e":"` + e + `","kty":"RSA","n":"` + n + `"}`))
	return b64(sum[:])
}

// JWKS is the public JWKS document for the IdP key (kty RSA, use sig, alg RS256, kid).
func (p *IdP) JWKS() []byte {
	n, e := rsaJWKMembers(&p.Key.PublicKey)
	doc := map[string]any{"keys": []map[string]string{{
		"kty": "RSA", "use": "sig", "alg": "RS256", "kid": p.Kid, "n": n, "e": e,
	}}}
	b, _ := json.MarshalIndent(doc, "", "  ")
	return append(b, '\n')
}

// TokenOptions describe a dev JWT. Zero values take defaults: Tenant DevTenantID, Roles
// [Esign.Initiator], TTL 1 h, Subject and ObjectID derived from the tenant, Name "Dev User",
// Now time.Now. Set NoRoles to mint a token without a roles claim.
type TokenOptions struct {
	Issuer   string // required (AUTH_ISSUER)
	Audience string // required (AUTH_AUDIENCE)
	Tenant   string
	Roles    []string
	NoRoles  bool
	TTL      time.Duration
	Subject  string
	ObjectID string
	Name     string
	// Email is the preferred_username claim, the caller's address (default
	// <subject's local part>@dev.example.test).
	Email string
	Now   time.Time
	// NotBefore, when set, overrides nbf (default: Now).
	NotBefore time.Time
}

// Mint signs an Entra-shaped access token (RS256, kid header) with the dev IdP key.
// Error: missing issuer or audience, or a signing failure.
func (p *IdP) Mint(o TokenOptions) (string, error) {
	if o.Issuer == "" || o.Audience == "" {
		return "", errors.New("devkeys: token needs an issuer and an audience")
	}
	if o.Tenant == "" {
		o.Tenant = DevTenantID
	}
	if len(o.Roles) == 0 && !o.NoRoles {
		o.Roles = []string{"Esign.Initiator"}
	}
	if o.TTL == 0 {
		o.TTL = time.Hour
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	if o.NotBefore.IsZero() {
		o.NotBefore = o.Now
	}
	if o.Subject == "" {
		o.Subject = "dev-user@" + o.Tenant
	}
	if o.ObjectID == "" {
		o.ObjectID = "00000000-0000-4000-8000-0000000000a1"
	}
	if o.Name == "" {
		o.Name = "Dev User"
	}
	if o.Email == "" {
		local, _, _ := strings.Cut(o.Subject, "@")
		o.Email = local + "@dev.example.test"
	}
	claims := map[string]any{
		"iss": o.Issuer, "aud": o.Audience, "sub": o.Subject, "oid": o.ObjectID, "tid": o.Tenant,
		"name": o.Name, "preferred_username": o.Email, "ver": "2.0",
		"iat": o.Now.Unix(), "nbf": o.NotBefore.Unix(), "exp": o.Now.Add(o.TTL).Unix(),
	}
	if !o.NoRoles {
		claims["roles"] = o.Roles
	}
	hdr, _ := json.Marshal(map[string]string{"alg": "RS256", "typ": "JWT", "kid": p.Kid})
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	in := b64(hdr) + "." + b64(payload)
	digest := sha256.Sum256([]byte(in))
	sig, err := rsa.SignPKCS1v15(rand.Reader, p.Key, crypto.SHA256, digest[:])
	if err != nil {
		return "", err
	}
	return in + "." + b64(sig), nil
}

// MintFromDir mints a dev JWT with the IdP key and settings that Setup wrote under dir
// (dev.env's AUTH_ISSUER and AUTH_AUDIENCE unless o sets them). Error: dev.env or the key is
// missing (run devsetup first) or unreadable.
func MintFromDir(dir string, o TokenOptions) (string, error) {
	env, err := ReadEnv(filepath.Join(dir, FileDevEnv))
	if err != nil {
		return "", fmt.Errorf("%w (run devtools/cmd/devsetup first)", err)
	}
	keyFile := env["DEV_IDP_KEY_FILE"]
	if keyFile == "" {
		keyFile = filepath.Join(dir, KeysDir, FileIdPKey)
	}
	idp, err := LoadIdP(keyFile)
	if err != nil {
		return "", err
	}
	if o.Issuer == "" {
		o.Issuer = env["AUTH_ISSUER"]
	}
	if o.Audience == "" {
		o.Audience = env["AUTH_AUDIENCE"]
	}
	return idp.Mint(o)
}
