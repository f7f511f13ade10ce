package azconn_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
)

func TestMain(m *testing.M) { azuritetest.Main(m) }

const devKey = azuriteKey

func TestNewConnectionString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name               string
		cs                 string
		blob, queue, table string
		wantErr            string // substring; empty means success
	}{
		{name: "explicit dev", cs: azuritetest.ConnectionString("http://127.0.0.1:1/devstoreaccount1", "http://127.0.0.1:2/devstoreaccount1", "http://127.0.0.1:3/devstoreaccount1"),
			blob: "http://127.0.0.1:1/devstoreaccount1/", queue: "http://127.0.0.1:2/devstoreaccount1/", table: "http://127.0.0.1:3/devstoreaccount1/"},
		{name: "account key with suffix", cs: "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=" + devKey + ";EndpointSuffix=core.chinacloudapi.cn",
			blob: "https://acme.blob.core.chinacloudapi.cn/", queue: "https://acme.queue.core.chinacloudapi.cn/", table: "https://acme.table.core.chinacloudapi.cn/"},
		{name: "keys case-insensitive, default suffix", cs: "accountname=acme;ACCOUNTKEY=" + devKey,
			blob: "https://acme.blob.core.windows.net/", queue: "https://acme.queue.core.windows.net/", table: "https://acme.table.core.windows.net/"},
		{name: "development storage shorthand", cs: "UseDevelopmentStorage=true", wantErr: "use the explicit form"},
		{name: "missing account name", cs: "AccountKey=" + devKey, wantErr: "AccountName is missing"},
		{name: "missing account key", cs: "AccountName=acme", wantErr: "AccountKey is missing"},
		{name: "bad key", cs: "AccountName=acme;AccountKey=not*base64", wantErr: "AccountKey is not valid base64"},
		{name: "malformed segment", cs: "AccountName=acme;garbage", wantErr: "segment 2 is not key=value"},
		{name: "bad protocol", cs: "DefaultEndpointsProtocol=ftp;AccountName=acme;AccountKey=" + devKey, wantErr: "DefaultEndpointsProtocol"},
		{name: "bad endpoint", cs: "AccountName=acme;AccountKey=" + devKey + ";BlobEndpoint=127.0.0.1:10000", wantErr: "blobendpoint must be an http(s) URL"},
		{name: "sas string", cs: "BlobEndpoint=https://x.blob.core.windows.net;SharedAccessSignature=sv=1", wantErr: "SharedAccessSignature"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a, err := azconn.New(azconn.Config{ConnectionString: tc.cs})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				if !strings.Contains(err.Error(), azconn.SettingConnectionString) {
					t.Errorf("err %q does not name %s", err, azconn.SettingConnectionString)
				}
				if strings.Contains(err.Error(), devKey[:12]) {
					t.Errorf("err %q leaks the account key", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a.BlobURL() != tc.blob || a.QueueURL() != tc.queue || a.TableURL() != tc.table {
				t.Errorf("endpoints = %s %s %s, want %s %s %s", a.BlobURL(), a.QueueURL(), a.TableURL(), tc.blob, tc.queue, tc.table)
			}
			if !a.HasSharedKey() || a.BlobSharedKey() == nil || a.TokenCredential() != nil {
				t.Error("a connection string account must hold a shared key and no token credential")
			}
			if strings.Contains(a.String(), devKey[:12]) {
				t.Error("String leaks the key")
			}
		})
	}
}

type fakeCred struct{}

func (fakeCred) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{Token: "x", ExpiresOn: time.Now().Add(time.Hour)}, nil
}

func TestNewManagedIdentity(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cfg     azconn.Config
		blob    string
		wantErr string
	}{
		{name: "system assigned", cfg: azconn.Config{AccountName: "esignprod"}, blob: "https://esignprod.blob.core.windows.net/"},
		{name: "user assigned", cfg: azconn.Config{AccountName: "esignprod", ClientID: "00000000-0000-0000-0000-000000000001"}, blob: "https://esignprod.blob.core.windows.net/"},
		{name: "suffix", cfg: azconn.Config{AccountName: "esignprod", EndpointSuffix: "core.usgovcloudapi.net", Credential: fakeCred{}}, blob: "https://esignprod.blob.core.usgovcloudapi.net/"},
		{name: "bad name", cfg: azconn.Config{AccountName: "Esign_Prod"}, wantErr: azconn.SettingAccountName},
		{name: "bad suffix", cfg: azconn.Config{AccountName: "esignprod", EndpointSuffix: "evil.example/x"}, wantErr: azconn.SettingEndpointSuffix},
		{name: "both", cfg: azconn.Config{AccountName: "esignprod", ConnectionString: "AccountName=a;AccountKey=" + devKey}, wantErr: "not both"},
		{name: "nothing", cfg: azconn.Config{}, wantErr: azconn.SettingAccountName},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a, err := azconn.New(tc.cfg)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a.BlobURL() != tc.blob {
				t.Errorf("blob = %s, want %s", a.BlobURL(), tc.blob)
			}
			if a.HasSharedKey() || a.TokenCredential() == nil || a.Blob() == nil || a.Tables() == nil || a.Queues() == nil {
				t.Error("a managed-identity account must hold a token credential and all clients, and no key")
			}
		})
	}
}

func TestConfigFromLookup(t *testing.T) {
	t.Parallel()
	env := map[string]string{azconn.SettingAccountName: " acct ", azconn.SettingClientID: "cid", azconn.SettingEndpointSuffix: "sfx"}
	got := azconn.ConfigFromLookup(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if got.AccountName != "acct" || got.ClientID != "cid" || got.EndpointSuffix != "sfx" || got.ConnectionString != "" {
		t.Errorf("ConfigFromLookup = %+v", got)
	}
}

func TestPing(t *testing.T) {
	t.Parallel()
	a, err := azconn.New(azconn.Config{ConnectionString: devConnString(t)})
	if err != nil {
		t.Fatal(err)
	}
	res := a.Ping(context.Background())
	for _, svc := range []string{azconn.ServiceBlob, azconn.ServiceTable, azconn.ServiceQueue} {
		err, ok := res[svc]
		if !ok || err != nil {
			t.Errorf("Ping[%s] = %v (present %v), want nil", svc, err, ok)
		}
	}

	// Nothing listens on port 1: every service must report an error.
	dead, err := azconn.New(azconn.Config{ConnectionString: azuritetest.ConnectionString("http://127.0.0.1:1/devstoreaccount1", "http://127.0.0.1:1/devstoreaccount1", "http://127.0.0.1:1/devstoreaccount1")})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	res = dead.Ping(ctx)
	for _, svc := range []string{azconn.ServiceBlob, azconn.ServiceTable, azconn.ServiceQueue} {
		if res[svc] == nil {
			t.Errorf("Ping[%s] on a dead endpoint = nil, want an error", svc)
		}
	}

	// A wrong key reaches the service but is refused.
	wrong := strings.Replace(devConnString(t), azuriteKey, "AAAA"+azuriteKey[4:], 1)
	bad, err := azconn.New(azconn.Config{ConnectionString: wrong})
	if err != nil {
		t.Fatal(err)
	}
	res = bad.Ping(context.Background())
	for _, svc := range []string{azconn.ServiceBlob, azconn.ServiceTable, azconn.ServiceQueue} {
		if res[svc] == nil {
			t.Errorf("Ping[%s] with a wrong key = nil, want an error", svc)
		}
	}
}
