package graph

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
)

// Defaults for Config fields left zero.
const (
	DefaultAuthorityHost = "https://login.microsoftonline.com"
	DefaultGraphBase     = "https://graph.microsoft.com/v1.0"
	DefaultScope         = "https://graph.microsoft.com/.default"

	// ChunkUnit is the granularity Graph requires for upload-session byte ranges (320 KiB).
	ChunkUnit = 320 * 1024
	// DefaultChunkSize is 16 x 320 KiB = 5 MiB, inside Graph's recommended 5-10 MiB.
	DefaultChunkSize = 16 * ChunkUnit
	// MaxChunkSize keeps every range below Graph's 60 MiB per-request limit.
	MaxChunkSize = 192 * ChunkUnit
	// SimpleUploadMax is the largest file sent with a single PUT .../content.
	SimpleUploadMax = 4 * 1024 * 1024

	defaultMaxRetries   = 3
	defaultMaxRetryWait = 30 * time.Second
	defaultTimeout      = 2 * time.Minute
)

// Config configures a Client. Either TenantID + ClientID + ClientSecret (client credentials)
// or Credential (for example an azidentity managed identity) must be set, not both.
type Config struct {
	TenantID     string
	ClientID     string
	ClientSecret string
	Credential   azcore.TokenCredential

	AuthorityHost string // default DefaultAuthorityHost; https only
	GraphBase     string // default DefaultGraphBase; https only
	Scope         string // default DefaultScope

	// HTTPClient defaults to a client with a 2-minute time-out. Tests pass an
	// httptest TLS server's client.
	HTTPClient *http.Client

	// AllowedHosts adds siteUrl hosts besides *.sharepoint.com: an entry is an exact host
	// name, or a suffix when it starts with "." (".sharepoint.us" for GCC High). Case-insensitive.
	AllowedHosts []string

	// ChunkSize is the upload-session range size: a positive multiple of ChunkUnit no larger
	// than MaxChunkSize. Default DefaultChunkSize.
	ChunkSize int
	// MaxRetries bounds retries of one request on 429, 5xx or a transport error (default 3).
	MaxRetries int
	// MaxRetryWait is the longest Retry-After the client waits out; a longer one ends the
	// attempt at once with KindUnavailable carrying RetryAfter (default 30s).
	MaxRetryWait time.Duration
}

// String masks the client secret so that a Config printed at start-up leaks nothing.
func (c Config) String() string {
	secret := ""
	if c.ClientSecret != "" {
		secret = "***"
	}
	return fmt.Sprintf("graph.Config{TenantID:%q ClientID:%q ClientSecret:%q ManagedIdentity:%t AuthorityHost:%q GraphBase:%q AllowedHosts:%q}",
		c.TenantID, c.ClientID, secret, c.Credential != nil, c.AuthorityHost, c.GraphBase, c.AllowedHosts)
}

// GoString masks the secret for %#v too.
func (c Config) GoString() string { return c.String() }

// Client uploads to SharePoint document libraries. It is safe for concurrent use; one Client
// per app shares the cached token.
type Client struct {
	graphBase    *url.URL
	http         *http.Client
	tokens       tokenSource
	hosts        hostPolicy
	chunkSize    int
	maxRetries   int
	maxRetryWait time.Duration

	sleep func(ctx context.Context, d time.Duration) error // replaced in tests
}

// NewClient validates cfg and builds a Client. It does no I/O; a wrong secret shows up on the
// first Upload as `graph_auth_failed`. Errors name the Config field at fault.
func NewClient(cfg Config) (*Client, error) {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("graph config: "+format, args...)) }

	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: defaultTimeout}
	}
	graphBase, err := httpsBase(orDefault(cfg.GraphBase, DefaultGraphBase))
	if err != nil {
		bad("GraphBase: %v", err)
	}
	authority, err := httpsBase(orDefault(cfg.AuthorityHost, DefaultAuthorityHost))
	if err != nil {
		bad("AuthorityHost: %v", err)
	}
	scope := orDefault(cfg.Scope, DefaultScope)

	var tokens tokenSource
	secretSet := cfg.TenantID != "" || cfg.ClientID != "" || cfg.ClientSecret != ""
	switch {
	case cfg.Credential != nil && secretSet:
		bad("set either Credential or TenantID/ClientID/ClientSecret, not both")
	case cfg.Credential != nil:
		tokens = &credentialSource{cred: cfg.Credential, scope: scope}
	default:
		if !validTenant(cfg.TenantID) {
			bad("TenantID must be a tenant GUID or domain name")
		}
		if strings.TrimSpace(cfg.ClientID) == "" {
			bad("ClientID is required")
		}
		if cfg.ClientSecret == "" {
			bad("ClientSecret is required (or set Credential for a managed identity)")
		}
		if authority != nil {
			tokens = &secretSource{
				endpoint: authority.JoinPath(cfg.TenantID, "oauth2", "v2.0", "token").String(),
				clientID: cfg.ClientID, secret: cfg.ClientSecret, scope: scope,
				http: hc, now: time.Now,
			}
		}
	}

	hosts, err := newHostPolicy(cfg.AllowedHosts)
	if err != nil {
		bad("AllowedHosts: %v", err)
	}
	chunk := cfg.ChunkSize
	if chunk == 0 {
		chunk = DefaultChunkSize
	}
	if chunk <= 0 || chunk%ChunkUnit != 0 || chunk > MaxChunkSize {
		bad("ChunkSize must be a positive multiple of %d bytes up to %d", ChunkUnit, MaxChunkSize)
	}
	retries := cfg.MaxRetries
	if retries == 0 {
		retries = defaultMaxRetries
	}
	if retries < 0 || retries > 10 {
		bad("MaxRetries must be from 0 to 10")
	}
	wait := cfg.MaxRetryWait
	if wait == 0 {
		wait = defaultMaxRetryWait
	}
	if wait < 0 {
		bad("MaxRetryWait must not be negative")
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &Client{
		graphBase: graphBase, http: hc, tokens: tokens, hosts: hosts,
		chunkSize: chunk, maxRetries: retries, maxRetryWait: wait, sleep: sleepCtx,
	}, nil
}

func orDefault(v, def string) string {
	if strings.TrimSpace(v) == "" {
		return def
	}
	return strings.TrimSpace(v)
}

func httpsBase(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimRight(raw, "/"))
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("must be an absolute https URL without query, got %q", raw)
	}
	return u, nil
}

// validTenant accepts a GUID or a domain name (contoso.onmicrosoft.com), the forms Entra
// ID's token endpoint takes; anything else could change the request path.
func validTenant(t string) bool {
	if t == "" || len(t) > 253 {
		return false
	}
	for _, r := range t {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.') {
			return false
		}
	}
	return !strings.Contains(t, "..") && t[0] != '.' && t[0] != '-'
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
