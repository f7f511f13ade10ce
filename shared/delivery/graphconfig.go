package delivery

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"

	"github.com/esign-svc/esign/shared/config"
	"github.com/esign-svc/esign/shared/graph"
)

// Settings of the document-library upload (read by both apps through their lookup).
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

// GraphClientFromLookup builds the Graph client from the GRAPH_* settings: a client secret
// (GRAPH_TENANT_ID, GRAPH_CLIENT_ID, GRAPH_CLIENT_SECRET), or the app's managed identity
// (GRAPH_USE_MANAGED_IDENTITY=true, optionally GRAPH_IDENTITY_CLIENT_ID), never both. With
// neither it returns (nil, nil): the deployment has no library upload, and modes sharepoint and
// both are refused at create time. Errors name the setting at fault (never a secret's value).
func GraphClientFromLookup(lookup config.Lookup) (*graph.Client, error) {
	r := config.NewReader(lookup)
	tenant := r.String(SettingGraphTenantID, "")
	client := r.String(SettingGraphClientID, "")
	secret := r.OptionalSecret(SettingGraphClientSecret)
	authority := r.String(SettingGraphAuthorityHost, "")
	base := r.String(SettingGraphBaseURL, "")
	hosts := r.String(SettingGraphAllowedHosts, "")
	caFile := r.String(SettingGraphCAFile, "")
	useMI := r.Bool(SettingGraphManagedIdentity, false)
	miClient := r.String(SettingGraphIdentityClientID, "")
	if useMI && secret != "" {
		r.Check(SettingGraphManagedIdentity, errors.New("set either it or GRAPH_CLIENT_SECRET, not both"))
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	if tenant == "" && client == "" && secret == "" && !useMI {
		return nil, nil
	}
	cfg := graph.Config{TenantID: tenant, ClientID: client, ClientSecret: secret, AuthorityHost: authority, GraphBase: base}
	if useMI {
		opts := &azidentity.ManagedIdentityCredentialOptions{}
		if miClient != "" {
			opts.ID = azidentity.ClientID(miClient)
		}
		cred, err := azidentity.NewManagedIdentityCredential(opts)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", SettingGraphManagedIdentity, err)
		}
		cfg = graph.Config{Credential: cred, AuthorityHost: authority, GraphBase: base}
	}
	for _, h := range strings.Split(hosts, ",") {
		if h = strings.TrimSpace(h); h != "" {
			cfg.AllowedHosts = append(cfg.AllowedHosts, h)
		}
	}
	if caFile != "" {
		hc, err := httpClientTrusting(caFile)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", SettingGraphCAFile, err)
		}
		cfg.HTTPClient = hc
	}
	cl, err := graph.NewClient(cfg)
	if err != nil {
		return nil, fmt.Errorf("GRAPH_* settings: %w", err)
	}
	return cl, nil
}

// httpClientTrusting is an HTTP client (2-minute time-out, TLS 1.2+) that trusts the system
// roots and the PEM certificates in file.
func httpClientTrusting(file string) (*http.Client, error) {
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
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return &http.Client{Timeout: 2 * time.Minute, Transport: tr}, nil
}
