package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/rsa"
	"errors"
	"fmt"
	"net/http"
	"net/mail"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jws"
	"github.com/lestrrat-go/jwx/v2/jwt"
)

// Defaults for Config.
const (
	DefaultLeeway             = 60 * time.Second
	DefaultFetchTimeout       = 10 * time.Second
	DefaultMinRefreshInterval = time.Minute
	DefaultMaxKeyAge          = 12 * time.Hour
	MaxTokenLen               = 16 << 10
)

// Algorithms is the allow-list: asymmetric only. HS* (which would let a public key act as an
// HMAC secret) and none are refused before any key is looked at.
var Algorithms = []string{"RS256", "RS384", "RS512", "ES256", "PS256"}

// Config configures a Verifier. Settings: AUTH_ISSUER, AUTH_AUDIENCE, and one of AUTH_JWKS_URL
// (Azure: https://login.microsoftonline.com/<tenant>/discovery/v2.0/keys) or AUTH_JWKS_FILE (dev).
type Config struct {
	Issuer   string // exact `iss`, e.g. https://login.microsoftonline.com/<tid>/v2.0
	Audience string // must be one of `aud`, e.g. api://esign
	JWKSURL  string // https, or http to a loopback host (tests)
	JWKSFile string // a JWKS document on disk, read once by NewVerifier

	HTTPClient         *http.Client     // default: a client with FetchTimeout
	FetchTimeout       time.Duration    // per JWKS fetch; default 10 s
	MinRefreshInterval time.Duration    // least time between two fetches; default 1 min
	MaxKeyAge          time.Duration    // cached keys older than this are refetched; default 12 h
	Leeway             time.Duration    // clock skew on exp/nbf/iat; default 60 s
	Now                func() time.Time // default time.Now
}

// Verifier checks bearer tokens. Safe for concurrent use.
type Verifier struct {
	cfg  Config
	keys keySource
}

// NewVerifier validates cfg and, for a JWKS file, reads it. A JWKS URL is fetched on first use,
// so the app starts even while the identity provider is unreachable.
// Errors are plain configuration errors naming the setting.
func NewVerifier(cfg Config) (*Verifier, error) {
	if cfg.Issuer == "" {
		return nil, errors.New("AUTH_ISSUER is required")
	}
	if cfg.Audience == "" {
		return nil, errors.New("AUTH_AUDIENCE is required")
	}
	if (cfg.JWKSURL == "") == (cfg.JWKSFile == "") {
		return nil, errors.New("exactly one of AUTH_JWKS_URL and AUTH_JWKS_FILE is required")
	}
	if cfg.Leeway <= 0 {
		cfg.Leeway = DefaultLeeway
	}
	if cfg.FetchTimeout <= 0 {
		cfg.FetchTimeout = DefaultFetchTimeout
	}
	if cfg.MinRefreshInterval <= 0 {
		cfg.MinRefreshInterval = DefaultMinRefreshInterval
	}
	if cfg.MaxKeyAge <= 0 {
		cfg.MaxKeyAge = DefaultMaxKeyAge
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: cfg.FetchTimeout}
	}
	v := &Verifier{cfg: cfg}
	if cfg.JWKSFile != "" {
		data, err := os.ReadFile(cfg.JWKSFile)
		if err != nil {
			return nil, fmt.Errorf("AUTH_JWKS_FILE: %w", err)
		}
		keys, err := parseJWKS(data)
		if err != nil {
			return nil, fmt.Errorf("AUTH_JWKS_FILE: %w", err)
		}
		v.keys = staticKeys(keys)
		return v, nil
	}
	u, err := url.Parse(cfg.JWKSURL)
	if err != nil || u.Host == "" || !(u.Scheme == "https" || (u.Scheme == "http" && isLoopback(u.Hostname()))) {
		return nil, errors.New("AUTH_JWKS_URL must be an https URL (http only to a loopback host)")
	}
	v.keys = &remoteKeys{url: cfg.JWKSURL, client: cfg.HTTPClient, timeout: cfg.FetchTimeout,
		minInterval: cfg.MinRefreshInterval, maxAge: cfg.MaxKeyAge, now: cfg.Now}
	return v, nil
}

func isLoopback(host string) bool {
	return host == "localhost" || host == "127.0.0.1" || host == "::1"
}

// Authenticate reads `Authorization: Bearer <jwt>` and verifies it.
// Errors: KindUnauthenticated auth_required (no bearer token) or auth_invalid;
// KindUnavailable auth_keys_unavailable when the JWKS has never been fetched.
func (v *Verifier) Authenticate(r *http.Request) (Principal, error) {
	h := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(h, " ")
	if h == "" || !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
		if h == "" {
			return Principal{}, requiredErr()
		}
		return Principal{}, invalid("the Authorization header must be: Bearer <token>")
	}
	return v.Verify(r.Context(), strings.TrimSpace(tok))
}

func requiredErr() error {
	return apperrNew(CodeRequired, "a bearer token is required")
}

// Verify checks a compact JWS JWT and returns its principal. Errors as Authenticate.
func (v *Verifier) Verify(ctx context.Context, raw string) (Principal, error) {
	if raw == "" {
		return Principal{}, requiredErr()
	}
	if len(raw) > MaxTokenLen || strings.Count(raw, ".") != 2 {
		return Principal{}, invalid("the token is malformed")
	}
	msg, err := jws.ParseString(raw)
	if err != nil || len(msg.Signatures()) != 1 {
		return Principal{}, invalid("the token is malformed")
	}
	h := msg.Signatures()[0].ProtectedHeaders()
	alg := h.Algorithm().String()
	if !allowed(alg) {
		return Principal{}, invalid("the token's algorithm is not accepted")
	}
	if len(h.Critical()) > 0 {
		return Principal{}, invalid("the token has critical headers this service does not support")
	}
	if _, has := h.Get("b64"); has {
		return Principal{}, invalid("the token is malformed")
	}
	kid := h.KeyID()
	if kid == "" {
		return Principal{}, invalid("the token has no key id")
	}
	key, err := v.keys.key(ctx, kid)
	if err != nil {
		return Principal{}, err
	}
	if !keyFits(key, alg) {
		return Principal{}, invalid("the token's algorithm does not match its key")
	}
	now := v.cfg.Now
	tok, err := jwt.Parse([]byte(raw),
		jwt.WithKey(jwa.SignatureAlgorithm(alg), key.pub),
		jwt.WithValidate(true),
		jwt.WithIssuer(v.cfg.Issuer),
		jwt.WithAudience(v.cfg.Audience),
		jwt.WithRequiredClaim(jwt.ExpirationKey),
		jwt.WithAcceptableSkew(v.cfg.Leeway),
		jwt.WithClock(jwt.ClockFunc(now)),
	)
	if err != nil {
		return Principal{}, invalid(describe(err))
	}
	// jwx skips the expiry check of an exp of 0 (as unset), so such a token never expired
	// (found by FuzzVerify): the expiry is checked here too.
	if exp := tok.Expiration(); exp.Unix() <= 0 || !now().Before(exp.Add(v.cfg.Leeway)) {
		return Principal{}, invalid("the token has expired")
	}
	return principalOf(tok)
}

func allowed(alg string) bool {
	for _, a := range Algorithms {
		if a == alg {
			return true
		}
	}
	return false
}

// keyFits: RS*/PS* need an RSA key, ES256 a P-256 key; a JWK that names its alg must name this one.
func keyFits(k verKey, alg string) bool {
	if k.alg != "" && k.alg != alg {
		return false
	}
	switch k.pub.(type) {
	case *rsa.PublicKey:
		return strings.HasPrefix(alg, "RS") || strings.HasPrefix(alg, "PS")
	case *ecdsa.PublicKey:
		return alg == "ES256"
	}
	return false
}

// describe turns a jwx error into a safe detail (no token content).
func describe(err error) string {
	switch {
	case errors.Is(err, jwt.ErrTokenExpired()):
		return "the token has expired"
	case errors.Is(err, jwt.ErrTokenNotYetValid()):
		return "the token is not valid yet"
	case errors.Is(err, jwt.ErrInvalidIssuedAt()):
		return "the token was issued in the future"
	case errors.Is(err, jwt.ErrInvalidIssuer()):
		return "the token's issuer is not accepted"
	case errors.Is(err, jwt.ErrInvalidAudience()):
		return "the token's audience is not accepted"
	case errors.Is(err, jwt.ErrRequiredClaim()):
		return "the token lacks a required claim"
	case jwt.IsValidationError(err):
		return "the token is not valid"
	}
	return "the token's signature does not verify"
}

var guid = regexp.MustCompile(`^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$`)

func principalOf(tok jwt.Token) (Principal, error) {
	p := Principal{Subject: tok.Subject()}
	claims := tok.PrivateClaims()
	var ok bool
	if p.TenantID, ok = stringClaim(claims, "tid"); !ok || p.TenantID == "" {
		return Principal{}, invalid("the token has no tenant (tid)")
	}
	// The tenant names the caller's folders and scopes its ids (DESIGN 14): only a GUID, in its
	// canonical lowercase form, so that it is one path segment and one spelling per tenant.
	if !guid.MatchString(p.TenantID) {
		return Principal{}, invalid("the token's tenant (tid) is not a GUID")
	}
	p.TenantID = strings.ToLower(p.TenantID)
	if p.ObjectID, ok = stringClaim(claims, "oid"); !ok {
		return Principal{}, invalid("the token's oid claim is not a string")
	}
	if p.Name, ok = stringClaim(claims, "name"); !ok {
		return Principal{}, invalid("the token's name claim is not a string")
	}
	p.Email = emailOf(claims)
	if r, present := claims["roles"]; present {
		list, isList := r.([]any)
		if !isList {
			return Principal{}, invalid("the token's roles claim is not a list")
		}
		for _, x := range list {
			s, isStr := x.(string)
			if !isStr {
				return Principal{}, invalid("the token's roles claim is not a list of strings")
			}
			p.Roles = append(p.Roles, s)
		}
	}
	return p, nil
}

// emailOf is the first of the email, preferred_username and upn claims that is a plain
// address; "" when none is.
func emailOf(claims map[string]any) string {
	for _, name := range []string{"email", "preferred_username", "upn"} {
		s, _ := stringClaim(claims, name)
		if a, err := mail.ParseAddress(s); s != "" && len(s) <= 254 && err == nil && a.Address == s {
			return s
		}
	}
	return ""
}

// stringClaim returns the claim as a string: ("", true) when absent, (_, false) when not a string.
func stringClaim(claims map[string]any, name string) (string, bool) {
	v, present := claims[name]
	if !present {
		return "", true
	}
	s, ok := v.(string)
	return s, ok
}
