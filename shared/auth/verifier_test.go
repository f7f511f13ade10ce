package auth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"
)

const (
	issuer   = "https://login.microsoftonline.com/11111111-2222-3333-4444-555555555555/v2.0"
	audience = "api://esign-test"
	tenant   = "11111111-2222-3333-4444-555555555555"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// signingKey is a private key with its kid and the alg it signs with.
type signingKey struct {
	kid  string
	alg  jwa.SignatureAlgorithm
	priv crypto.Signer
}

var (
	keyOnce sync.Once
	rsaA    *rsa.PrivateKey
	rsaB    *rsa.PrivateKey
	ecK     *ecdsa.PrivateKey
)

func keys(t testing.TB) (a, b signingKey, ec signingKey) {
	keyOnce.Do(func() {
		rsaA, _ = rsa.GenerateKey(rand.Reader, 2048)
		rsaB, _ = rsa.GenerateKey(rand.Reader, 2048)
		ecK, _ = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	})
	return signingKey{"kid-a", jwa.RS256, rsaA}, signingKey{"kid-b", jwa.RS256, rsaB}, signingKey{"kid-ec", jwa.ES256, ecK}
}

func jwksOf(t testing.TB, ks ...signingKey) []byte {
	t.Helper()
	set := jwk.NewSet()
	for _, k := range ks {
		pk, err := jwk.FromRaw(k.priv.Public())
		if err != nil {
			t.Fatal(err)
		}
		_ = pk.Set(jwk.KeyIDKey, k.kid)
		_ = pk.Set(jwk.KeyUsageKey, "sig")
		if err := set.AddKey(pk); err != nil {
			t.Fatal(err)
		}
	}
	b, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type claims map[string]any

func goodClaims() claims {
	return claims{"iss": issuer, "aud": audience, "sub": "sub-1", "oid": "oid-1", "tid": tenant,
		"name": "Ada", "roles": []string{RoleInitiator}, "iat": t0.Unix(), "nbf": t0.Unix(), "exp": t0.Add(time.Hour).Unix()}
}

func (c claims) with(k string, v any) claims {
	out := claims{}
	for kk, vv := range c {
		out[kk] = vv
	}
	if v == nil {
		delete(out, k)
	} else {
		out[k] = v
	}
	return out
}

func mint(t testing.TB, k signingKey, c claims) string {
	t.Helper()
	return mintAs(t, k, k.alg, c)
}

func mintAs(t testing.TB, k signingKey, alg jwa.SignatureAlgorithm, c claims) string {
	t.Helper()
	payload, _ := json.Marshal(c)
	hdr := jws.NewHeaders()
	_ = hdr.Set(jws.KeyIDKey, k.kid)
	_ = hdr.Set(jws.TypeKey, "JWT")
	out, err := jws.Sign(payload, jws.WithKey(alg, k.priv, jws.WithProtectedHeaders(hdr)))
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// rawToken builds a token by hand (for alg none and HMAC confusion).
func rawToken(hdr, payload any, sign func(string) []byte) string {
	h, _ := json.Marshal(hdr)
	p, _ := json.Marshal(payload)
	in := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(p)
	return in + "." + base64.RawURLEncoding.EncodeToString(sign(in))
}

type jwksServer struct {
	*httptest.Server
	mu   sync.Mutex
	doc  []byte
	fail bool
	hits atomic.Int64
}

func newJWKSServer(t *testing.T, doc []byte) *jwksServer {
	s := &jwksServer{doc: doc}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.fail {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(s.doc)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *jwksServer) set(doc []byte, fail bool) {
	s.mu.Lock()
	s.doc, s.fail = doc, fail
	s.mu.Unlock()
}

// clock is a settable test clock.
type clock struct{ ns atomic.Int64 }

func newClock(at time.Time) *clock   { c := &clock{}; c.ns.Store(at.UnixNano()); return c }
func (c *clock) now() time.Time      { return time.Unix(0, c.ns.Load()).UTC() }
func (c *clock) add(d time.Duration) { c.ns.Add(int64(d)) }

func newURLVerifier(t *testing.T, url string, clk *clock) *Verifier {
	t.Helper()
	v, err := NewVerifier(Config{Issuer: issuer, Audience: audience, JWKSURL: url, Now: clk.now,
		FetchTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func wantErr(t *testing.T, err error, kind apperr.Kind, code string) {
	t.Helper()
	e, ok := apperr.As(err)
	if !ok || e.Kind != kind || e.Code != code {
		t.Fatalf("err = %v, want kind %d code %s", err, kind, code)
	}
}

func TestVerifyChecks(t *testing.T) {
	t.Parallel()
	a, _, ec := keys(t)
	srv := newJWKSServer(t, jwksOf(t, a, ec))
	v := newURLVerifier(t, srv.URL, newClock(t0))
	pubDER, _ := x509.MarshalPKIXPublicKey(a.priv.Public())
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})
	hmacWith := func(secret []byte) func(string) []byte {
		return func(in string) []byte { m := hmac.New(sha256.New, secret); m.Write([]byte(in)); return m.Sum(nil) }
	}
	good := mint(t, a, goodClaims())
	parts := strings.Split(good, ".")
	tampered, _ := json.Marshal(goodClaims().with("roles", []string{RoleAdmin}))

	tests := []struct {
		name string
		tok  string
		ok   bool
	}{
		{"valid RS256", good, true},
		{"valid ES256", mint(t, ec, goodClaims()), true},
		{"valid PS256", mintAs(t, a, jwa.PS256, goodClaims()), true},
		{"valid RS512", mintAs(t, a, jwa.RS512, goodClaims()), true},
		{"aud list containing ours", mint(t, a, goodClaims().with("aud", []string{"other", audience})), true},
		{"expired within leeway", mint(t, a, goodClaims().with("exp", t0.Add(-50*time.Second).Unix())), true},
		{"expired", mint(t, a, goodClaims().with("exp", t0.Add(-61*time.Second).Unix())), false},
		{"not yet valid", mint(t, a, goodClaims().with("nbf", t0.Add(2*time.Minute).Unix())), false},
		{"no exp", mint(t, a, goodClaims().with("exp", nil)), false},
		{"exp 0, which jwx takes as unset", mint(t, a, goodClaims().with("exp", 0)), false},
		{"wrong issuer", mint(t, a, goodClaims().with("iss", "https://login.microsoftonline.com/evil/v2.0")), false},
		{"wrong audience", mint(t, a, goodClaims().with("aud", "api://other")), false},
		{"no tid", mint(t, a, goodClaims().with("tid", nil)), false},
		// The tid names the tenant's folders (DESIGN 14): a GUID or 401.
		{"tid not a GUID", mint(t, a, goodClaims().with("tid", "contoso")), false},
		{"tid a path", mint(t, a, goodClaims().with("tid", "11111111-2222-3333-4444-555555555555/../x")), false},
		{"tid a braced GUID", mint(t, a, goodClaims().with("tid", "{11111111-2222-3333-4444-555555555555}")), false},
		{"tid a GUID without hyphens", mint(t, a, goodClaims().with("tid", "11111111222233334444555555555555")), false},
		{"roles not a list", mint(t, a, goodClaims().with("roles", "Service.Admin")), false},
		{"alg none", rawToken(map[string]any{"alg": "none", "kid": "kid-a"}, goodClaims(), func(string) []byte { return nil }), false},
		{"empty signature", parts[0] + "." + parts[1] + ".", false},
		{"HS256 with the public key PEM as secret", rawToken(map[string]any{"alg": "HS256", "kid": "kid-a", "typ": "JWT"}, goodClaims(), hmacWith(pubPEM)), false},
		{"HS256 with the public key DER as secret", rawToken(map[string]any{"alg": "HS256", "kid": "kid-a"}, goodClaims(), hmacWith(pubDER)), false},
		{"tampered payload", parts[0] + "." + base64.RawURLEncoding.EncodeToString(tampered) + "." + parts[2], false},
		{"signature of another key", mint(t, signingKey{"kid-a", jwa.RS256, rsaB}, goodClaims()), false},
		{"alg ES256 on an RSA kid", mintAs(t, signingKey{"kid-a", jwa.ES256, ecK}, jwa.ES256, goodClaims()), false},
		{"no kid", mint(t, signingKey{"", jwa.RS256, rsaA}, goodClaims()), false},
		{"unknown kid", mint(t, signingKey{"kid-zzz", jwa.RS256, rsaA}, goodClaims()), false},
		{"garbage", "not.a.jwt", false},
		{"JWE shape", "a.b.c.d.e", false},
		{"crit header", rawToken(map[string]any{"alg": "RS256", "kid": "kid-a", "crit": []string{"exp"}, "exp": 1}, goodClaims(),
			func(in string) []byte {
				d := sha256.Sum256([]byte(in))
				s, _ := rsa.SignPKCS1v15(rand.Reader, rsaA, crypto.SHA256, d[:])
				return s
			}), false},
	}
	reasons := map[string]string{
		"expired":                         "expired",
		"exp 0, which jwx takes as unset": "expired",
		"not yet valid":                   "not valid yet",
		"no exp":                          "required claim",
		"wrong issuer":                    "issuer",
		"wrong audience":                  "audience",
		"alg none":                        "algorithm is not accepted",
		"HS256 with the public key PEM as secret": "algorithm is not accepted",
		"HS256 with the public key DER as secret": "algorithm is not accepted",
		"tampered payload":                        "signature does not verify",
		"signature of another key":                "signature does not verify",
		"empty signature":                         "signature does not verify",
		"alg ES256 on an RSA kid":                 "does not match its key",
		"unknown kid":                             "not known",
		"crit header":                             "critical",
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := v.Verify(context.Background(), tc.tok)
			if tc.ok {
				if err != nil {
					t.Fatal(err)
				}
				if p.TenantID != tenant || p.Subject != "sub-1" || p.ObjectID != "oid-1" || p.Name != "Ada" || !p.HasRole(RoleInitiator) || p.HasRole(RoleAdmin) {
					t.Fatalf("principal %+v", p)
				}
				return
			}
			wantErr(t, err, apperr.KindUnauthenticated, CodeInvalid)
			if why, ok := reasons[tc.name]; ok && !strings.Contains(err.Error(), why) {
				t.Fatalf("refused for the wrong reason: %v (want %q)", err, why)
			}
		})
	}
}

func TestKeyRotationAndRateLimit(t *testing.T) {
	t.Parallel()
	a, b, _ := keys(t)
	srv := newJWKSServer(t, jwksOf(t, a))
	clk := newClock(t0)
	v := newURLVerifier(t, srv.URL, clk)
	ctx := context.Background()

	if _, err := v.Verify(ctx, mint(t, a, goodClaims())); err != nil {
		t.Fatal(err)
	}
	if got := srv.hits.Load(); got != 1 {
		t.Fatalf("fetches = %d, want 1", got)
	}
	if _, err := v.Verify(ctx, mint(t, a, goodClaims())); err != nil || srv.hits.Load() != 1 {
		t.Fatalf("cached key not reused: %v, fetches %d", err, srv.hits.Load())
	}

	// The issuer rotates to b; a token signed by b arrives 2 minutes later: one refetch, accepted.
	srv.set(jwksOf(t, b, a), false)
	clk.add(2 * time.Minute)
	if _, err := v.Verify(ctx, mint(t, b, goodClaims())); err != nil {
		t.Fatalf("rotated key refused: %v", err)
	}
	if got := srv.hits.Load(); got != 2 {
		t.Fatalf("fetches = %d, want 2 (refetch on unknown kid)", got)
	}

	// Unknown kids within the minimum interval do not hammer the JWKS endpoint.
	clk.add(2 * time.Minute)
	unknown := mint(t, signingKey{"kid-new", jwa.RS256, rsaA}, goodClaims())
	for range 5 {
		_, err := v.Verify(ctx, unknown)
		wantErr(t, err, apperr.KindUnauthenticated, CodeInvalid)
	}
	if got := srv.hits.Load(); got != 3 {
		t.Fatalf("fetches = %d, want 3 (one refetch for five misses)", got)
	}

	// The JWKS endpoint goes down: cached keys keep working, even past their max age.
	srv.set(nil, true)
	clk.add(13 * time.Hour)
	if _, err := v.Verify(ctx, mint(t, a, goodClaims().with("exp", clk.now().Add(time.Hour).Unix()))); err != nil {
		t.Fatalf("cached key refused while the JWKS is down: %v", err)
	}
	if got := srv.hits.Load(); got != 4 {
		t.Fatalf("fetches = %d, want 4 (stale cache triggers one refetch)", got)
	}
}

func TestJWKSUnavailable(t *testing.T) {
	t.Parallel()
	a, _, _ := keys(t)
	srv := newJWKSServer(t, nil)
	srv.set(nil, true)
	v := newURLVerifier(t, srv.URL, newClock(t0))
	_, err := v.Verify(context.Background(), mint(t, a, goodClaims()))
	wantErr(t, err, apperr.KindUnavailable, CodeKeysUnavailable)

	// A JWKS endpoint that hangs is cut off by the fetch timeout.
	block := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(block); hang.Close() })
	hv, err := NewVerifier(Config{Issuer: issuer, Audience: audience, JWKSURL: hang.URL,
		FetchTimeout: 100 * time.Millisecond, Now: newClock(t0).now})
	if err != nil {
		t.Fatal(err)
	}
	_, err = hv.Verify(context.Background(), mint(t, a, goodClaims()))
	wantErr(t, err, apperr.KindUnavailable, CodeKeysUnavailable)
}

func TestAuthenticateHeader(t *testing.T) {
	t.Parallel()
	a, _, _ := keys(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "jwks.json")
	if err := os.WriteFile(file, jwksOf(t, a), 0o600); err != nil {
		t.Fatal(err)
	}
	v, err := NewVerifier(Config{Issuer: issuer, Audience: audience, JWKSFile: file, Now: newClock(t0).now})
	if err != nil {
		t.Fatal(err)
	}
	good := mint(t, a, goodClaims())
	tests := []struct {
		name, header, code string
	}{
		{"ok", "Bearer " + good, ""},
		{"ok lowercase scheme", "bearer " + good, ""},
		{"missing", "", CodeRequired},
		{"basic", "Basic dXNlcjpwYXNz", CodeInvalid},
		{"bearer empty", "Bearer ", CodeInvalid},
		{"no scheme", good, CodeInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := httptest.NewRequest(http.MethodGet, "/api/esign/session", nil)
			if tc.header != "" {
				r.Header.Set("Authorization", tc.header)
			}
			p, err := v.Authenticate(r)
			if tc.code == "" {
				if err != nil || p.TenantID != tenant {
					t.Fatalf("%+v, %v", p, err)
				}
				return
			}
			wantErr(t, err, apperr.KindUnauthenticated, tc.code)
		})
	}
}

func TestRequire(t *testing.T) {
	t.Parallel()
	p := Principal{TenantID: tenant, Roles: []string{RoleInitiator, RoleWorkflowApprover}}
	if err := Require(p, RoleInitiator); err != nil {
		t.Fatal(err)
	}
	if err := RequireAny(p, RoleAdmin, RoleWorkflowApprover); err != nil {
		t.Fatal(err)
	}
	err := Require(p, RoleDispatchApprover)
	wantErr(t, err, apperr.KindForbidden, CodeRoleRequired)
	if !strings.Contains(err.Error(), RoleDispatchApprover) {
		t.Fatalf("error does not name the role: %v", err)
	}
	if err := Require(Principal{Roles: []string{"esign.initiator"}}, RoleInitiator); err == nil {
		t.Fatal("role match is not exact")
	}
}

func TestConfigErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	_ = os.WriteFile(bad, []byte(`{"keys":[]}`), 0o600)
	cases := map[string]Config{
		"no issuer":     {Audience: audience, JWKSFile: bad},
		"no audience":   {Issuer: issuer, JWKSFile: bad},
		"no source":     {Issuer: issuer, Audience: audience},
		"two sources":   {Issuer: issuer, Audience: audience, JWKSFile: bad, JWKSURL: "https://x"},
		"http remote":   {Issuer: issuer, Audience: audience, JWKSURL: "http://login.example.com/keys"},
		"missing file":  {Issuer: issuer, Audience: audience, JWKSFile: filepath.Join(dir, "none.json")},
		"no usable key": {Issuer: issuer, Audience: audience, JWKSFile: bad},
	}
	for name, cfg := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if _, err := NewVerifier(cfg); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

func TestParseJWKSSkipsUnusableKeys(t *testing.T) {
	t.Parallel()
	a, _, _ := keys(t)
	small, _ := rsa.GenerateKey(rand.Reader, 1024)
	doc := jwksOf(t, a, signingKey{"small", jwa.RS256, small})
	var m map[string][]map[string]any
	_ = json.Unmarshal(doc, &m)
	m["keys"] = append(m["keys"], map[string]any{"kty": "oct", "kid": "sym", "k": "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0"})
	enc := map[string]any{}
	for k, v := range m["keys"][0] {
		enc[k] = v
	}
	enc["kid"], enc["use"] = "enc", "enc"
	m["keys"] = append(m["keys"], enc)
	doc, _ = json.Marshal(m)
	km, err := parseJWKS(doc)
	if err != nil {
		t.Fatal(err)
	}
	if len(km) != 1 {
		t.Fatalf("kept %d keys, want only kid-a", len(km))
	}
	if _, ok := km["kid-a"]; !ok {
		t.Fatal("kid-a missing")
	}
}

func TestConcurrentMissesShareOneFetch(t *testing.T) {
	t.Parallel()
	a, b, _ := keys(t)
	srv := newJWKSServer(t, jwksOf(t, a, b))
	v := newURLVerifier(t, srv.URL, newClock(t0))
	tok := mint(t, b, goodClaims())
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := v.Verify(context.Background(), tok)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := srv.hits.Load(); got != 1 {
		t.Fatalf("fetches = %d, want 1", got)
	}
}

// The caller's address is the email claim, else preferred_username or upn when that is an
// address; a claim that is no address is passed over.
func TestPrincipalEmail(t *testing.T) {
	t.Parallel()
	a, _, _ := keys(t)
	v := newURLVerifier(t, newJWKSServer(t, jwksOf(t, a)).URL, newClock(t0))
	for _, c := range []struct {
		name string
		set  claims
		want string
	}{
		{"none", goodClaims(), ""},
		{"email", goodClaims().with("email", "ada@example.com").with("preferred_username", "other@example.com"), "ada@example.com"},
		{"preferred_username", goodClaims().with("preferred_username", "ada@example.com"), "ada@example.com"},
		{"upn after a name that is no address", goodClaims().with("preferred_username", "ADA\\ada").with("upn", "ada@corp.example"), "ada@corp.example"},
		{"display form refused", goodClaims().with("email", "Ada <ada@example.com>"), ""},
	} {
		p, err := v.Verify(context.Background(), mint(t, a, c.set))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if p.Email != c.want {
			t.Errorf("%s: Email %q, want %q", c.name, p.Email, c.want)
		}
	}
}
