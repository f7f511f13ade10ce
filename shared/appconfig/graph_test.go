package appconfig

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/settings"
)

// caFile writes a self-signed CA certificate as PEM and returns its path.
func caFile(t *testing.T) string {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, IsCA: true,
		BasicConstraintsValid: true, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadGraph(t *testing.T) {
	t.Parallel()
	ca := caFile(t)
	notPEM := filepath.Join(t.TempDir(), "not.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	secret := "s3cr3t-value-never-printed"
	cases := []struct {
		name     string
		settings map[string]string
		client   bool     // Client returns a client
		errNames []string // settings the Read error names
	}{
		{"none: no library upload", nil, false, nil},
		{"client secret", map[string]string{"GRAPH_TENANT_ID": "t", "GRAPH_CLIENT_ID": "c", "GRAPH_CLIENT_SECRET": secret}, true, nil},
		{"client secret, national cloud, extra hosts and CA", map[string]string{"GRAPH_TENANT_ID": "contoso.onmicrosoft.us",
			"GRAPH_CLIENT_ID": "c", "GRAPH_CLIENT_SECRET": secret, "GRAPH_AUTHORITY_HOST": "https://login.microsoftonline.us",
			"GRAPH_BASE_URL": "https://graph.microsoft.us/v1.0", "GRAPH_ALLOWED_SITE_HOSTS": " .sharepoint.us, docs.example.net ",
			"GRAPH_CA_FILE": ca}, true, nil},
		{"managed identity", map[string]string{"GRAPH_USE_MANAGED_IDENTITY": "true"}, true, nil},
		{"user-assigned identity", map[string]string{"GRAPH_USE_MANAGED_IDENTITY": "true", "GRAPH_IDENTITY_CLIENT_ID": "11111111-1111-1111-1111-111111111111"}, true, nil},
		{"both", map[string]string{"GRAPH_USE_MANAGED_IDENTITY": "true", "GRAPH_TENANT_ID": "t", "GRAPH_CLIENT_ID": "c", "GRAPH_CLIENT_SECRET": secret}, false,
			[]string{"GRAPH_USE_MANAGED_IDENTITY"}},
		{"not a bool", map[string]string{"GRAPH_USE_MANAGED_IDENTITY": "perhaps"}, false, []string{"GRAPH_USE_MANAGED_IDENTITY"}},
		{"secret without tenant and client", map[string]string{"GRAPH_CLIENT_SECRET": secret}, false, []string{"GRAPH_TENANT_ID", "GRAPH_CLIENT_ID"}},
		{"tenant without secret", map[string]string{"GRAPH_TENANT_ID": "t", "GRAPH_CLIENT_ID": "c"}, false, []string{"GRAPH_CLIENT_SECRET"}},
		{"http endpoints", map[string]string{"GRAPH_USE_MANAGED_IDENTITY": "true", "GRAPH_AUTHORITY_HOST": "http://login.example",
			"GRAPH_BASE_URL": "graph.example"}, false, []string{"GRAPH_AUTHORITY_HOST", "GRAPH_BASE_URL"}},
		{"CA file missing", map[string]string{"GRAPH_USE_MANAGED_IDENTITY": "true", "GRAPH_CA_FILE": filepath.Join(t.TempDir(), "absent.pem")}, false,
			[]string{"GRAPH_CA_FILE"}},
		{"CA file not PEM", map[string]string{"GRAPH_USE_MANAGED_IDENTITY": "true", "GRAPH_CA_FILE": notPEM}, false, []string{"GRAPH_CA_FILE"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := settings.NewReader(settings.MapLookup(tc.settings))
			g := readGraph(r)
			err := r.Err()
			if err != nil && strings.Contains(err.Error(), secret) {
				t.Fatal("the error shows the client secret")
			}
			if len(tc.errNames) > 0 {
				for _, name := range tc.errNames {
					if err == nil || !strings.Contains(err.Error(), "setting "+name+":") {
						t.Errorf("want an error naming %s, got %v", name, err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			sum := r.Summary()
			if v, ok := sum["GRAPH_CLIENT_SECRET"]; !ok || (tc.settings["GRAPH_CLIENT_SECRET"] != "" && v != "***") {
				t.Errorf("summary shows GRAPH_CLIENT_SECRET as %q (listed %v)", v, ok)
			}
			for _, name := range []string{"GRAPH_TENANT_ID", "GRAPH_USE_MANAGED_IDENTITY", "GRAPH_CA_FILE", "GRAPH_ALLOWED_SITE_HOSTS"} {
				if _, ok := sum[name]; !ok {
					t.Errorf("summary does not list %s", name)
				}
			}
			cl, err := g.Client()
			if err != nil || (cl != nil) != tc.client || g.Configured() != tc.client {
				t.Fatalf("client %v, configured %v, err %v", cl != nil, g.Configured(), err)
			}
		})
	}
}

func TestGraphClientErrorsNameTheSettings(t *testing.T) {
	t.Parallel()
	r := settings.NewReader(settings.MapLookup(map[string]string{"GRAPH_TENANT_ID": "not/a tenant", "GRAPH_CLIENT_ID": "c", "GRAPH_CLIENT_SECRET": "s"}))
	g := readGraph(r)
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Client(); err == nil || !strings.Contains(err.Error(), "GRAPH_* settings") || !strings.Contains(err.Error(), "TenantID") {
		t.Fatalf("want an error naming the GRAPH_* settings and the tenant, got %v", err)
	}
}

func TestReadListsTheGraphSettings(t *testing.T) {
	t.Parallel()
	r := settings.NewReader(settings.MapLookup(map[string]string{"GRAPH_TENANT_ID": "t", "GRAPH_CLIENT_ID": "c", "GRAPH_CLIENT_SECRET": "secret"}))
	c := Read(r, settings.MapLookup(nil))
	if !c.Graph.Configured() || c.Graph.ClientSecret != "secret" {
		t.Fatalf("graph %+v", c.Graph)
	}
	if s := r.Summary()["GRAPH_CLIENT_SECRET"]; s != "***" {
		t.Fatalf("summary shows the secret as %q", s)
	}
}
