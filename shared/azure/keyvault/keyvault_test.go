package keyvault_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/esign-svc/esign/shared/azure/keyvault"
	"github.com/esign-svc/esign/shared/azure/keyvault/keyvaulttest"
	"github.com/esign-svc/esign/shared/pdf/tsatest"
)

func TestParseKeyID(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want keyvault.KeyID
		ok   bool
	}{
		{"https://v1.vault.azure.net/keys/seal/0123abcd", keyvault.KeyID{Vault: "https://v1.vault.azure.net", Name: "seal", Version: "0123abcd"}, true},
		{"https://v1.vault.azure.net/keys/seal-key", keyvault.KeyID{Vault: "https://v1.vault.azure.net", Name: "seal-key"}, true},
		{" https://h.managedhsm.azure.net/keys/seal/ ", keyvault.KeyID{Vault: "https://h.managedhsm.azure.net", Name: "seal"}, true},
		{"http://v1.vault.azure.net/keys/seal", keyvault.KeyID{}, false},
		{"https://v1.vault.azure.net/secrets/seal", keyvault.KeyID{}, false},
		{"https://v1.vault.azure.net/keys/seal/v/extra", keyvault.KeyID{}, false},
		{"https://v1.vault.azure.net/keys/se_al", keyvault.KeyID{}, false},
		{"https://v1.vault.azure.net/keys/seal/ver-1", keyvault.KeyID{}, false},
		{"https://v1.vault.azure.net/keys/seal?x=1", keyvault.KeyID{}, false},
		{"https://u:p@v1.vault.azure.net/keys/seal", keyvault.KeyID{}, false},
		{"seal", keyvault.KeyID{}, false},
		{"", keyvault.KeyID{}, false},
	} {
		got, err := keyvault.ParseKeyID(tc.in)
		if tc.ok != (err == nil) || got != tc.want {
			t.Errorf("ParseKeyID(%q) = %+v, %v", tc.in, got, err)
		}
		if err != nil && !errors.Is(err, keyvault.ErrKeyID) {
			t.Errorf("ParseKeyID(%q): %v does not wrap ErrKeyID", tc.in, err)
		}
	}
}

// issued is a CA and a leaf certificate for key, signed by the CA.
func issued(t *testing.T, key crypto.Signer) (leaf, ca *x509.Certificate) {
	t.Helper()
	caKey, ca := tsatest.NewCert(t, "seal test CA", 0)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(42), Subject: pkix.Name{CommonName: "seal leaf"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageContentCommitment}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), caKey)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err = x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return leaf, ca
}

func options(s *keyvaulttest.Server) keyvault.Options {
	return keyvault.Options{Credential: s.Credential(), Client: s.ClientOptions()}
}

func open(t *testing.T, s *keyvaulttest.Server, id string, o keyvault.Options) (*keyvault.Signer, []*x509.Certificate, error) {
	t.Helper()
	kid, err := keyvault.ParseKeyID(id)
	if err != nil {
		t.Fatal(err)
	}
	return keyvault.Open(context.Background(), kid, o)
}

func noViolations(t *testing.T, s *keyvaulttest.Server) {
	t.Helper()
	if v := s.Violations(); len(v) > 0 {
		t.Fatalf("the vault saw undocumented requests:\n%s", strings.Join(v, "\n"))
	}
}

func digestOf(h crypto.Hash) []byte {
	msg := []byte("seal attributes")
	switch h {
	case crypto.SHA384:
		d := sha512.Sum384(msg)
		return d[:]
	case crypto.SHA512:
		d := sha512.Sum512(msg)
		return d[:]
	}
	d := sha256.Sum256(msg)
	return d[:]
}

func TestOpenAndSign(t *testing.T) {
	t.Parallel()
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	p256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	p521, _ := ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
	for _, tc := range []struct {
		name   string
		key    crypto.Signer
		format keyvaulttest.Format
		opts   crypto.SignerOpts
		alg    string
	}{
		{"rsa pkcs1 pem", rsaKey, keyvaulttest.PEM, crypto.SHA256, "RS256"},
		{"rsa pss pkcs12", rsaKey, keyvaulttest.PKCS12, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash, Hash: crypto.SHA256}, "PS256"},
		{"rsa sha512", rsaKey, keyvaulttest.PEM, crypto.SHA512, "RS512"},
		{"ec p256 pkcs12", p256, keyvaulttest.PKCS12, crypto.SHA256, "ES256"},
		{"ec p384 pem", p384, keyvaulttest.PEM, crypto.SHA384, "ES384"},
		{"ec p521 pem", p521, keyvaulttest.PEM, crypto.SHA512, "ES512"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := keyvaulttest.New(t)
			leaf, ca := issued(t, tc.key)
			old := s.AddCertificate(t, "seal", tc.key, []*x509.Certificate{ca, leaf}, tc.format)
			// a later version of another key under another name must not be picked up
			other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
			s.AddKey("unrelated", other)
			signer, chain, err := open(t, s, s.KeyID("seal", ""), options(s))
			if err != nil {
				t.Fatal(err)
			}
			if signer.KeyID().Version != old {
				t.Fatalf("pinned version %q, want %q", signer.KeyID().Version, old)
			}
			if len(chain) != 2 || !chain[0].Equal(leaf) || !chain[1].Equal(ca) {
				t.Fatalf("chain %v, want leaf then CA", chain)
			}
			digest := digestOf(tc.opts.HashFunc())
			sig, err := signer.Sign(rand.Reader, digest, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			switch pub := tc.key.Public().(type) {
			case *rsa.PublicKey:
				if pss, ok := tc.opts.(*rsa.PSSOptions); ok {
					err = rsa.VerifyPSS(pub, crypto.SHA256, digest, sig, pss)
				} else {
					err = rsa.VerifyPKCS1v15(pub, tc.opts.HashFunc(), digest, sig)
				}
			case *ecdsa.PublicKey:
				// crypto.Signer's ECDSA form is ASN.1 DER, not the vault's raw r||s
				if !ecdsa.VerifyASN1(pub, digest, sig) {
					err = errors.New("ECDSA signature is not a DER signature of the digest")
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			noViolations(t, s)
			reqs := s.Requests()
			want := []keyvaulttest.Request{
				{Method: "GET", Path: "/keys/seal/", APIVersion: "2025-07-01"}, // the SDK leaves the version empty
				{Method: "GET", Path: "/secrets/seal/" + old, APIVersion: "2026-04-01"},
				{Method: "POST", Path: "/keys/seal/" + old + "/sign", APIVersion: "2025-07-01", Alg: tc.alg},
			}
			if len(reqs) != len(want) {
				t.Fatalf("requests %+v, want %+v", reqs, want)
			}
			for i := range want {
				if reqs[i] != want[i] {
					t.Errorf("request %d: %+v, want %+v", i, reqs[i], want[i])
				}
			}
		})
	}
}

func TestSignRefusesOutsideTheAllowList(t *testing.T) {
	t.Parallel()
	s := keyvaulttest.New(t)
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	rsaLeaf, _ := issued(t, rsaKey)
	p256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ecLeaf, _ := issued(t, p256)
	s.AddCertificate(t, "rsa", rsaKey, []*x509.Certificate{rsaLeaf}, keyvaulttest.PEM)
	s.AddCertificate(t, "ec", p256, []*x509.Certificate{ecLeaf}, keyvaulttest.PEM)
	rsaSigner, _, err := open(t, s, s.KeyID("rsa", ""), options(s))
	if err != nil {
		t.Fatal(err)
	}
	ecSigner, _, err := open(t, s, s.KeyID("ec", ""), options(s))
	if err != nil {
		t.Fatal(err)
	}
	before := len(s.Requests())
	sha1Digest := make([]byte, 20)
	for _, tc := range []struct {
		name   string
		signer *keyvault.Signer
		digest []byte
		opts   crypto.SignerOpts
	}{
		{"sha1", rsaSigner, sha1Digest, crypto.SHA1},
		{"md5sha1", rsaSigner, make([]byte, 36), crypto.MD5SHA1},
		{"no hash", rsaSigner, digestOf(crypto.SHA256), nil},
		{"digest of the wrong length", rsaSigner, make([]byte, 31), crypto.SHA256},
		{"pss with maximal salt", rsaSigner, digestOf(crypto.SHA256), &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthAuto, Hash: crypto.SHA256}},
		{"pss with a short salt", rsaSigner, digestOf(crypto.SHA256), &rsa.PSSOptions{SaltLength: 20, Hash: crypto.SHA256}},
		{"sha384 on p256", ecSigner, digestOf(crypto.SHA384), crypto.SHA384},
		{"pss on ec", ecSigner, digestOf(crypto.SHA256), &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash, Hash: crypto.SHA256}},
		{"sha3", ecSigner, digestOf(crypto.SHA256), crypto.SHA3_256},
	} {
		if _, err := tc.signer.Sign(rand.Reader, tc.digest, tc.opts); err == nil {
			t.Errorf("%s: signed", tc.name)
		}
	}
	if after := len(s.Requests()); after != before {
		t.Fatalf("a refused signature reached the vault: %+v", s.Requests()[before:])
	}
	noViolations(t, s)
}

func TestSignRetriesAsTheSDKDoes(t *testing.T) {
	t.Parallel()
	s := keyvaulttest.New(t)
	key, leaf := tsatest.NewCert(t, "seal", 0)
	version := s.AddCertificate(t, "seal", key, []*x509.Certificate{leaf}, keyvaulttest.PEM)
	signer, _, err := open(t, s, s.KeyID("seal", version), options(s))
	if err != nil {
		t.Fatal(err)
	}
	s.FailSigns(http.StatusServiceUnavailable, http.StatusTooManyRequests)
	digest := digestOf(crypto.SHA256)
	sig, err := signer.Sign(nil, digest, crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	if !ecdsa.VerifyASN1(key.Public().(*ecdsa.PublicKey), digest, sig) {
		t.Fatal("signature does not verify")
	}
	signs := 0
	for _, r := range s.Requests() {
		if r.Method == "POST" {
			signs++
		}
	}
	if signs != 3 {
		t.Fatalf("%d sign requests, want 3 (two refused, retried)", signs)
	}
	// a vault that keeps failing: the SDK gives up after its retries
	s.FailSigns(503, 503, 503, 503, 503)
	if _, err := signer.Sign(nil, digest, crypto.SHA256); err == nil || !strings.Contains(err.Error(), "503") {
		t.Fatalf("err %v, want the vault's 503", err)
	}
	noViolations(t, s)
}

func TestSignTimesOut(t *testing.T) {
	t.Parallel()
	s := keyvaulttest.New(t)
	key, leaf := tsatest.NewCert(t, "seal", 0)
	s.AddCertificate(t, "seal", key, []*x509.Certificate{leaf}, keyvaulttest.PEM)
	o := options(s)
	o.SignTimeout = 300 * time.Millisecond
	signer, _, err := open(t, s, s.KeyID("seal", ""), o)
	if err != nil {
		t.Fatal(err)
	}
	s.HoldSigns()
	if _, err := signer.Sign(nil, digestOf(crypto.SHA256), crypto.SHA256); err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want the sign time-out", err)
	}
}

// A Managed HSM has keys and no certificates: the chain comes from the caller.
func TestOpenWithAChainOfItsOwn(t *testing.T) {
	t.Parallel()
	s := keyvaulttest.New(t)
	key, _ := rsa.GenerateKey(rand.Reader, 2048)
	leaf, ca := issued(t, key)
	version := s.AddKey("hsm-seal", key)
	o := options(s)
	o.Chain = []*x509.Certificate{ca, leaf}
	signer, chain, err := open(t, s, s.KeyID("hsm-seal", version), o)
	if err != nil {
		t.Fatal(err)
	}
	if !chain[0].Equal(leaf) {
		t.Fatal("leaf is not first")
	}
	if _, err := signer.Sign(nil, digestOf(crypto.SHA256), crypto.SHA256); err != nil {
		t.Fatal(err)
	}
	for _, r := range s.Requests() {
		if strings.HasPrefix(r.Path, "/secrets/") {
			t.Fatalf("read a secret although the chain was given: %+v", r)
		}
	}
	// a chain without the key's certificate is refused
	_, other := tsatest.NewCert(t, "other", 0)
	o.Chain = []*x509.Certificate{other}
	if _, _, err := open(t, s, s.KeyID("hsm-seal", version), o); err == nil {
		t.Fatal("opened with a chain of another key")
	}
	noViolations(t, s)
}

func TestOpenRefuses(t *testing.T) {
	t.Parallel()
	s := keyvaulttest.New(t)
	key, leaf := tsatest.NewCert(t, "seal", 0)
	_, otherLeaf := tsatest.NewCert(t, "other", 0)
	s.AddKeyWith("exportable", key, true, []string{"sign"})
	s.AddKeyWith("verify-only", key, false, []string{"verify"})
	v := s.AddKey("with-private-pem", key)
	s.SetSecret(t, "with-private-pem", v, []*x509.Certificate{leaf}, keyvaulttest.PEM, key)
	v = s.AddKey("with-private-p12", key)
	s.SetSecret(t, "with-private-p12", v, []*x509.Certificate{leaf}, keyvaulttest.PKCS12, key)
	s.AddCertificate(t, "wrong-cert", key, []*x509.Certificate{otherLeaf}, keyvaulttest.PEM)
	v = s.AddKey("plain-secret", key)
	s.SetSecretRaw("plain-secret", v, "text/plain", "hunter2")
	v = s.AddKey("bad-p12", key)
	s.SetSecretRaw("bad-p12", v, "application/x-pkcs12", "not base64!")
	s.AddKey("no-secret", key)
	for _, tc := range []struct{ name, want string }{
		{"exportable", "exportable"},
		{"verify-only", "sign operation"},
		{"with-private-pem", "holds the private key"},
		{"with-private-p12", "holds the private key"},
		{"wrong-cert", "no certificate matches"},
		{"plain-secret", "content type"},
		{"bad-p12", "not base64"},
		{"no-secret", "SecretNotFound"},
		{"missing", "KeyNotFound"},
	} {
		_, _, err := open(t, s, s.KeyID(tc.name, ""), options(s))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want one saying %q", tc.name, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: the error carries the secret's value", tc.name)
		}
	}
	noViolations(t, s)
}

// tokenOf hands out a fixed token for any request.
type tokenOf string

func (tk tokenOf) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{Token: string(tk), ExpiresOn: time.Now().Add(time.Hour)}, nil
}

func TestTheLocalVaultChecksTheBearerToken(t *testing.T) {
	t.Parallel()
	s := keyvaulttest.New(t)
	key, leaf := tsatest.NewCert(t, "seal", 0)
	s.AddCertificate(t, "seal", key, []*x509.Certificate{leaf}, keyvaulttest.PEM)
	o := options(s)
	o.Credential = tokenOf("someone-else's-token")
	if _, _, err := open(t, s, s.KeyID("seal", ""), o); err == nil {
		t.Fatal("opened with another token")
	}
	if len(s.Violations()) == 0 {
		t.Fatal("the local vault did not notice the wrong token")
	}
	// and the test credential answers only the challenge's scope and tenant
	cred := s.Credential()
	if _, err := cred.GetToken(context.Background(), policy.TokenRequestOptions{Scopes: []string{"https://vault.azure.net/.default"}, TenantID: keyvaulttest.Tenant}); err == nil {
		t.Fatal("token for another resource")
	}
	if _, _, err := keyvault.Open(context.Background(), keyvault.KeyID{Vault: "https://169.254.169.254", Name: "seal"}, options(s)); err == nil ||
		!strings.Contains(err.Error(), "reaches only the local vault") {
		t.Fatalf("the test transport dialled elsewhere: %v", err)
	}
}
