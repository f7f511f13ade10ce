package appconfig

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/graph"
	"github.com/esign-svc/esign/shared/settings"
)

// Settings of the document-library upload through Microsoft Graph (both apps: the dispatcher
// checks sharePointTarget at create time, the processor uploads).
const (
	SettingGraphTenantID      = "GRAPH_TENANT_ID"
	SettingGraphClientID      = "GRAPH_CLIENT_ID"
	SettingGraphClientSecret  = "GRAPH_CLIENT_SECRET"
	SettingGraphAuthorityHost = "GRAPH_AUTHORITY_HOST"
	SettingGraphBaseURL       = "GRAPH_BASE_URL"
	SettingGraphAllowedHosts  = "GRAPH_ALLOWED_SITE_HOSTS" // comma-separated
	// SettingGraphCAFile names a PEM file of extra CA certificates the Graph client trusts
	// besides the system pool (a TLS-inspecting proxy, or the local test server).
	SettingGraphCAFile = "GRAPH_CA_FILE"
	// SettingGraphManagedIdentity ("true") signs in to Graph with the app's managed identity
	// instead of a client secret; SettingGraphIdentityClientID selects a user-assigned one.
	SettingGraphManagedIdentity  = "GRAPH_USE_MANAGED_IDENTITY"
	SettingGraphIdentityClientID = "GRAPH_IDENTITY_CLIENT_ID"
)

// Graph is the document-library connection, validated: a client secret (GRAPH_TENANT_ID,
// GRAPH_CLIENT_ID, GRAPH_CLIENT_SECRET) or the app's managed identity
// (GRAPH_USE_MANAGED_IDENTITY=true, optionally GRAPH_IDENTITY_CLIENT_ID), never both. With
// neither, Configured is false: the deployment has no library upload, and modes sharepoint and
// both are refused at create time.
type Graph struct {
	TenantID         string
	ClientID         string
	ClientSecret     string // masked in the start-up summary
	AuthorityHost    string // empty: graph.DefaultAuthorityHost
	BaseURL          string // empty: graph.DefaultGraphBase
	AllowedHosts     []string
	CAFile           string
	ManagedIdentity  bool
	IdentityClientID string
	roots            *x509.CertPool // the system pool plus CAFile's certificates; nil without CAFile
}

// readGraph reads the GRAPH_* settings through r; problems are collected in r, each naming its
// setting (never a secret's value).
func readGraph(r *settings.Reader) Graph {
	g := Graph{
		TenantID:         r.String(SettingGraphTenantID, ""),
		ClientID:         r.String(SettingGraphClientID, ""),
		ClientSecret:     r.OptionalSecret(SettingGraphClientSecret),
		AuthorityHost:    r.String(SettingGraphAuthorityHost, ""),
		BaseURL:          r.String(SettingGraphBaseURL, ""),
		CAFile:           r.String(SettingGraphCAFile, ""),
		ManagedIdentity:  r.Bool(SettingGraphManagedIdentity, false),
		IdentityClientID: r.String(SettingGraphIdentityClientID, ""),
	}
	for _, h := range strings.Split(r.String(SettingGraphAllowedHosts, ""), ",") {
		if h = strings.TrimSpace(h); h != "" {
			g.AllowedHosts = append(g.AllowedHosts, h)
		}
	}
	if g.ManagedIdentity && g.ClientSecret != "" {
		r.Check(SettingGraphManagedIdentity, fmt.Errorf("set either it or %s, not both", SettingGraphClientSecret))
	}
	if !g.ManagedIdentity && (g.TenantID != "" || g.ClientID != "" || g.ClientSecret != "") {
		for _, s := range [...]struct{ name, value string }{
			{SettingGraphTenantID, g.TenantID}, {SettingGraphClientID, g.ClientID}, {SettingGraphClientSecret, g.ClientSecret},
		} {
			if s.value == "" {
				r.Check(s.name, fmt.Errorf("is required with the other GRAPH_* client-secret settings (or set %s=true)", SettingGraphManagedIdentity))
			}
		}
	}
	r.Check(SettingGraphAuthorityHost, httpsURL(g.AuthorityHost))
	r.Check(SettingGraphBaseURL, httpsURL(g.BaseURL))
	if g.CAFile != "" {
		var err error
		g.roots, err = trusting(g.CAFile)
		r.Check(SettingGraphCAFile, err)
	}
	return g
}

// Configured reports whether a Graph connection is set up (client secret or managed identity).
func (g Graph) Configured() bool {
	return g.ManagedIdentity || g.TenantID != "" || g.ClientID != "" || g.ClientSecret != ""
}

// Client builds the Graph client, or nil (and no error) when the connection is not configured.
// It does no I/O; a wrong secret shows up on the first upload. Errors: the client's own checks
// (a tenant that is not a GUID or domain name, an allowed host it refuses), naming the GRAPH_*
// settings.
func (g Graph) Client() (*graph.Client, error) {
	if !g.Configured() {
		return nil, nil
	}
	cfg := graph.Config{TenantID: g.TenantID, ClientID: g.ClientID, ClientSecret: g.ClientSecret,
		AuthorityHost: g.AuthorityHost, GraphBase: g.BaseURL, AllowedHosts: g.AllowedHosts}
	if g.ManagedIdentity {
		cred, err := azconn.ManagedIdentity(g.IdentityClientID)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", SettingGraphManagedIdentity, err)
		}
		cfg = graph.Config{Credential: cred, AuthorityHost: g.AuthorityHost, GraphBase: g.BaseURL, AllowedHosts: g.AllowedHosts}
	}
	if g.roots != nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.TLSClientConfig = &tls.Config{RootCAs: g.roots, MinVersion: tls.VersionTLS12}
		cfg.HTTPClient = &http.Client{Timeout: 2 * time.Minute, Transport: tr}
	}
	cl, err := graph.NewClient(cfg)
	if err != nil {
		return nil, fmt.Errorf("GRAPH_* settings: %w", err)
	}
	return cl, nil
}

// httpsURL accepts an empty value or an absolute https URL.
func httpsURL(raw string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return errors.New("must be an absolute https URL")
	}
	return nil
}

// trusting is the system roots plus the PEM certificates in file.
func trusting(file string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, errors.New("cannot read the file")
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, errors.New("no PEM certificate in the file")
	}
	return pool, nil
}
