// Package keyvaulttest is a local stand-in for Azure Key Vault's keys and secrets REST API, for
// tests of the Key Vault seal signer (DESIGN 16): an HTTPS server that answers the documented
// requests (GET key, POST sign, GET secret) for keys it holds, with Key Vault's bearer
// challenge, and records every departure from the documented request (api-version, path,
// method, JSON body, bearer token) as a violation the test reads. Its Credential and
// ClientOptions let the real SDK client reach it and nothing else: no test reaches the
// instance metadata address or a real vault.
package keyvaulttest

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"software.sslmate.com/src/go-pkcs12"
)

// Domain is the DNS suffix the server answers under (the SDK checks that the challenge's
// resource is a parent domain of the vault's host, as vault.azure.net is of a real vault's).
const Domain = "vault.localhost"

// Tenant is the tenant the challenge names.
const Tenant = "00000000-0000-0000-0000-0000000000a1"

// APIVersions are the documented api-version values the server accepts: Key Vault 7.4 and
// later (the SDKs pinned in shared/go.mod send 2025-07-01 for keys and 2026-04-01 for secrets).
var APIVersions = []string{"7.4", "7.5", "7.6", "2025-06-01-preview", "2025-07-01", "2026-04-01"}

// Format of a certificate secret.
type Format int

// Certificate secret formats.
const (
	PEM    Format = iota // application/x-pem-file
	PKCS12               // application/x-pkcs12, base64
)

// Request is one request the server answered (after the challenge).
type Request struct {
	Method, Path, APIVersion, Alg string
}

type key struct {
	signer     crypto.Signer
	exportable bool
	ops        []string
}

type secret struct {
	contentType, value string
}

// Server is the local vault. Its zero value is not usable: call New.
type Server struct {
	// URL is the vault's base URL (https://seal.vault.localhost:<port>).
	URL string
	// Resource is the challenge's resource (https://vault.localhost:<port>), whose /.default
	// scope the credential must be asked for.
	Resource string
	token    string
	srv      *httptest.Server
	ca       *x509.CertPool

	mu         sync.Mutex
	keys       map[string]*key   // name/version
	latest     map[string]string // name -> current version
	secrets    map[string]secret // name/version
	failSigns  []int             // statuses the next sign requests get
	hold       chan struct{}     // when set, sign requests wait on it (time-out tests)
	requests   []Request
	violations []string
	tokens     int
	serial     int
}

// New starts a server for the test's lifetime.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{token: "kv-test-token-" + randomHex(8), keys: map[string]*key{}, latest: map[string]string{}, secrets: map[string]secret{}}
	cert, pool := serverCert(t)
	s.ca = pool
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	s.srv.StartTLS()
	t.Cleanup(func() {
		s.mu.Lock()
		if s.hold != nil {
			close(s.hold)
			s.hold = nil
		}
		s.mu.Unlock()
		s.srv.Close()
	})
	_, port, _ := net.SplitHostPort(s.srv.Listener.Addr().String())
	s.URL = "https://seal." + Domain + ":" + port
	s.Resource = "https://" + Domain + ":" + port
	return s
}

// serverCert is a self-signed TLS certificate for *.vault.localhost and a pool trusting it.
func serverCert(t testing.TB) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "local key vault"},
		DNSNames: []string{"*." + Domain, Domain}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(c)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: k}, pool
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// AddKey stores a new version of key name (a Managed HSM key: no certificate) that may sign,
// and returns its version.
func (s *Server) AddKey(name string, signer crypto.Signer) string {
	return s.addKey(name, signer, false, []string{"sign", "verify"})
}

// AddKeyWith stores a key version with the given exportable attribute and key_ops.
func (s *Server) AddKeyWith(name string, signer crypto.Signer, exportable bool, ops []string) string {
	return s.addKey(name, signer, exportable, ops)
}

func (s *Server) addKey(name string, signer crypto.Signer, exportable bool, ops []string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.serial++
	version := fmt.Sprintf("%030x%02d", s.serial, s.serial%100)
	s.keys[name+"/"+version] = &key{signer: signer, exportable: exportable, ops: ops}
	s.latest[name] = version
	return version
}

// AddCertificate stores what importing a certificate with a non-exportable key does: a key
// and a secret of the same name and version, the secret holding chain (no private key) as
// PEM or PKCS#12. It returns the version.
func (s *Server) AddCertificate(t testing.TB, name string, signer crypto.Signer, chain []*x509.Certificate, f Format) string {
	t.Helper()
	version := s.AddKey(name, signer)
	s.SetSecret(t, name, version, chain, f, nil)
	return version
}

// SetSecret stores the certificate secret name/version: chain, and withKey's private key when
// not nil (an exportable certificate's secret).
func (s *Server) SetSecret(t testing.TB, name, version string, chain []*x509.Certificate, f Format, withKey crypto.Signer) {
	t.Helper()
	var sec secret
	switch f {
	case PEM:
		var b bytes.Buffer
		if withKey != nil {
			der, err := x509.MarshalPKCS8PrivateKey(withKey)
			if err != nil {
				t.Fatal(err)
			}
			_ = pem.Encode(&b, &pem.Block{Type: "PRIVATE KEY", Bytes: der})
		}
		for _, c := range chain {
			_ = pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
		}
		sec = secret{"application/x-pem-file", b.String()}
	case PKCS12:
		var pfx []byte
		var err error
		if withKey != nil {
			pfx, err = pkcs12.Modern.Encode(withKey, chain[0], chain[1:], "")
		} else {
			pfx, err = certificatesOnly(chain)
		}
		if err != nil {
			t.Fatal(err)
		}
		sec = secret{"application/x-pkcs12", base64.StdEncoding.EncodeToString(pfx)}
	}
	s.mu.Lock()
	s.secrets[name+"/"+version] = sec
	s.mu.Unlock()
}

// SetSecretRaw stores a secret as given.
func (s *Server) SetSecretRaw(name, version, contentType, value string) {
	s.mu.Lock()
	s.secrets[name+"/"+version] = secret{contentType, value}
	s.mu.Unlock()
}

// KeyID is the key identifier of name (and version, when not empty).
func (s *Server) KeyID(name, version string) string {
	if version == "" {
		return s.URL + "/keys/" + name
	}
	return s.URL + "/keys/" + name + "/" + version
}

// FailSigns answers the next sign requests with these statuses, one each (a throttled or
// briefly unavailable vault).
func (s *Server) FailSigns(statuses ...int) {
	s.mu.Lock()
	s.failSigns = append(s.failSigns, statuses...)
	s.mu.Unlock()
}

// HoldSigns makes sign requests wait until the test ends (or the client gives up).
func (s *Server) HoldSigns() {
	s.mu.Lock()
	if s.hold == nil {
		s.hold = make(chan struct{})
	}
	s.mu.Unlock()
}

// Requests are the answered requests so far (challenges not counted).
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Violations are the departures from the documented requests seen so far.
func (s *Server) Violations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.violations...)
}

// TokenRequests counts the credential's token requests.
func (s *Server) TokenRequests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tokens
}

func (s *Server) violate(format string, args ...any) {
	s.mu.Lock()
	s.violations = append(s.violations, fmt.Sprintf(format, args...))
	s.mu.Unlock()
}

// Credential is a token credential that hands out the server's token for the challenge's
// scope and tenant only (anything else is an error, as Entra ID would refuse it).
func (s *Server) Credential() azcore.TokenCredential { return credential{s} }

type credential struct{ s *Server }

func (c credential) GetToken(_ context.Context, o policy.TokenRequestOptions) (azcore.AccessToken, error) {
	c.s.mu.Lock()
	c.s.tokens++
	c.s.mu.Unlock()
	if len(o.Scopes) != 1 || o.Scopes[0] != c.s.Resource+"/.default" {
		return azcore.AccessToken{}, fmt.Errorf("keyvaulttest: token asked for scopes %q, want %s/.default", o.Scopes, c.s.Resource)
	}
	if o.TenantID != Tenant {
		return azcore.AccessToken{}, fmt.Errorf("keyvaulttest: token asked for tenant %q, want %s", o.TenantID, Tenant)
	}
	return azcore.AccessToken{Token: c.s.token, ExpiresOn: time.Now().Add(time.Hour)}, nil
}

// ClientOptions are SDK client options whose transport trusts the server's certificate and
// dials the server for every host under Domain, and nothing else; retries are quick.
func (s *Server) ClientOptions() azcore.ClientOptions {
	addr := s.srv.Listener.Addr().String()
	tr := &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: s.ca, MinVersion: tls.VersionTLS12},
		DialContext: func(ctx context.Context, network, hostport string) (net.Conn, error) {
			host, _, err := net.SplitHostPort(hostport)
			if err != nil || !strings.HasSuffix(host, "."+Domain) {
				return nil, fmt.Errorf("keyvaulttest: the test transport reaches only the local vault, not %s", hostport)
			}
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		},
	}
	return azcore.ClientOptions{
		Transport: &http.Client{Transport: tr},
		Retry:     policy.RetryOptions{RetryDelay: time.Millisecond, MaxRetryDelay: 5 * time.Millisecond},
	}
}

// kvError writes Key Vault's error answer.
func kvError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": code, "message": msg}})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(v)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	auth := r.Header.Get("Authorization")
	if auth == "" {
		// Key Vault's challenge: the SDK sends its first request without a token (and without
		// its body) to learn the tenant and resource.
		w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer authorization="https://login.microsoftonline.com/%s", resource="%s"`, Tenant, s.Resource))
		kvError(w, http.StatusUnauthorized, "Unauthorized", "AKV10000: Request is missing a Bearer or PoP token.")
		return
	}
	if subtle.ConstantTimeCompare([]byte(auth), []byte("Bearer "+s.token)) != 1 {
		s.violate("%s %s: Authorization is not the credential's bearer token", r.Method, r.URL.Path)
		kvError(w, http.StatusUnauthorized, "Unauthorized", "AKV10022: Invalid audience.")
		return
	}
	v := r.URL.Query().Get("api-version")
	known := false
	for _, a := range APIVersions {
		known = known || v == a
	}
	if !known {
		s.violate("%s %s: api-version %q is not a documented one", r.Method, r.URL.Path, v)
		kvError(w, http.StatusBadRequest, "BadParameter", "The specified version is not supported")
		return
	}
	if r.Host != strings.TrimPrefix(s.URL, "https://") {
		s.violate("%s %s: Host %q is not the vault's", r.Method, r.URL.Path, r.Host)
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	req := Request{Method: r.Method, Path: r.URL.Path, APIVersion: v}
	switch {
	case r.Method == http.MethodGet && len(parts) >= 2 && len(parts) <= 3 && parts[0] == "keys":
		s.record(req)
		s.getKey(w, parts[1], at(parts, 2))
	case r.Method == http.MethodPost && len(parts) == 4 && parts[0] == "keys" && parts[3] == "sign":
		s.sign(w, r, req, parts[1], parts[2])
	case r.Method == http.MethodGet && len(parts) >= 2 && len(parts) <= 3 && parts[0] == "secrets":
		s.record(req)
		s.getSecret(w, parts[1], at(parts, 2))
	default:
		s.record(req)
		s.violate("%s %s: not a documented keys or secrets operation", r.Method, r.URL.Path)
		kvError(w, http.StatusNotFound, "NotFound", "no such operation")
	}
}

func at(parts []string, i int) string {
	if i < len(parts) {
		return parts[i]
	}
	return ""
}

func (s *Server) record(r Request) {
	s.mu.Lock()
	s.requests = append(s.requests, r)
	s.mu.Unlock()
}

// lookup finds name/version, the current version when version is empty.
func (s *Server) lookup(name, version string) (*key, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if version == "" {
		version = s.latest[name]
	}
	return s.keys[name+"/"+version], version
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func (s *Server) getKey(w http.ResponseWriter, name, version string) {
	k, version := s.lookup(name, version)
	if k == nil {
		kvError(w, http.StatusNotFound, "KeyNotFound", "A key with (name/id) "+name+" was not found in this key vault.")
		return
	}
	jwk := map[string]any{"kid": s.KeyID(name, version), "key_ops": k.ops}
	switch pub := k.signer.Public().(type) {
	case *rsa.PublicKey:
		jwk["kty"], jwk["n"], jwk["e"] = "RSA-HSM", b64(pub.N.Bytes()), b64(big.NewInt(int64(pub.E)).Bytes())
	case *ecdsa.PublicKey:
		size := (pub.Curve.Params().BitSize + 7) / 8
		x, y := make([]byte, size), make([]byte, size)
		pub.X.FillBytes(x)
		pub.Y.FillBytes(y)
		jwk["kty"], jwk["crv"], jwk["x"], jwk["y"] = "EC-HSM", pub.Curve.Params().Name, b64(x), b64(y)
	}
	writeJSON(w, map[string]any{"key": jwk, "attributes": map[string]any{"enabled": true, "exportable": k.exportable, "recoveryLevel": "Recoverable"}})
}

func (s *Server) getSecret(w http.ResponseWriter, name, version string) {
	_, v := s.lookup(name, version)
	if version != "" {
		v = version
	}
	s.mu.Lock()
	sec, ok := s.secrets[name+"/"+v]
	s.mu.Unlock()
	if !ok {
		kvError(w, http.StatusNotFound, "SecretNotFound", "A secret with (name/id) "+name+" was not found in this key vault.")
		return
	}
	writeJSON(w, map[string]any{"value": sec.value, "contentType": sec.contentType, "id": s.URL + "/secrets/" + name + "/" + v,
		"kid": s.KeyID(name, v), "managed": true, "attributes": map[string]any{"enabled": true}})
}

// signAlgs are the documented JWS algorithms the server signs with, by name: hash and kind.
var signAlgs = map[string]struct {
	hash crypto.Hash
	kind string // rsa, pss, ec
}{
	"RS256": {crypto.SHA256, "rsa"}, "RS384": {crypto.SHA384, "rsa"}, "RS512": {crypto.SHA512, "rsa"},
	"PS256": {crypto.SHA256, "pss"}, "PS384": {crypto.SHA384, "pss"}, "PS512": {crypto.SHA512, "pss"},
	"ES256": {crypto.SHA256, "ec"}, "ES384": {crypto.SHA384, "ec"}, "ES512": {crypto.SHA512, "ec"},
}

func (s *Server) sign(w http.ResponseWriter, r *http.Request, req Request, name, version string) {
	var body struct {
		Alg   *string `json:"alg"`
		Value *string `json:"value"`
	}
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil || body.Alg == nil || body.Value == nil {
		s.record(req)
		s.violate("POST %s: body is not {\"alg\", \"value\"}: %v", r.URL.Path, err)
		kvError(w, http.StatusBadRequest, "BadParameter", "Property alg and value are required.")
		return
	}
	req.Alg = *body.Alg
	s.record(req)
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		s.violate("POST %s: Content-Type %q", r.URL.Path, ct)
	}
	s.mu.Lock()
	hold := s.hold
	status := 0
	if len(s.failSigns) > 0 {
		status, s.failSigns = s.failSigns[0], s.failSigns[1:]
	}
	s.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-r.Context().Done():
		}
		return
	}
	if status != 0 {
		w.Header().Set("Retry-After", "0")
		kvError(w, status, "Throttled", "try again")
		return
	}
	k, _ := s.lookup(name, version)
	if k == nil {
		kvError(w, http.StatusNotFound, "KeyNotFound", "A key with (name/id) "+name+" was not found in this key vault.")
		return
	}
	alg, ok := signAlgs[*body.Alg]
	digest, err := base64.RawURLEncoding.DecodeString(*body.Value)
	if !ok || err != nil || len(digest) != alg.hash.Size() {
		s.violate("POST %s: alg %q with a value of %d bytes (base64url: %v)", r.URL.Path, *body.Alg, len(digest), err)
		kvError(w, http.StatusBadRequest, "BadParameter", "Invalid algorithm or digest.")
		return
	}
	var sig []byte
	switch priv := k.signer.(type) {
	case *rsa.PrivateKey:
		switch alg.kind {
		case "rsa":
			sig, err = rsa.SignPKCS1v15(rand.Reader, priv, alg.hash, digest)
		case "pss":
			sig, err = rsa.SignPSS(rand.Reader, priv, alg.hash, digest, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash})
		default:
			err = fmt.Errorf("alg %s with an RSA key", *body.Alg)
		}
	case *ecdsa.PrivateKey:
		size := (priv.Curve.Params().BitSize + 7) / 8
		if alg.kind != "ec" || size != map[crypto.Hash]int{crypto.SHA256: 32, crypto.SHA384: 48, crypto.SHA512: 66}[alg.hash] {
			err = fmt.Errorf("alg %s with a %s key", *body.Alg, priv.Curve.Params().Name)
			break
		}
		var rr, ss *big.Int
		if rr, ss, err = ecdsa.Sign(rand.Reader, priv, digest); err == nil {
			sig = make([]byte, 2*size) // JWS form: r||s, each padded to the curve's size
			rr.FillBytes(sig[:size])
			ss.FillBytes(sig[size:])
		}
	default:
		err = fmt.Errorf("key type %T", k.signer)
	}
	if err != nil {
		s.violate("POST %s: %v", r.URL.Path, err)
		kvError(w, http.StatusBadRequest, "BadParameter", err.Error())
		return
	}
	writeJSON(w, map[string]string{"kid": s.KeyID(name, version), "value": b64(sig)})
}
