package app

import (
	"strings"
	"testing"

	"github.com/esign-svc/esign/shared/settings"
)

func TestLoadPortalAPI(t *testing.T) {
	t.Parallel()
	conn := "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + key() + ";TableEndpoint=http://127.0.0.1:1/devstoreaccount1;"
	current, older := strings.Repeat("c", 40), strings.Repeat("o", 40)
	tests := []struct {
		name       string
		extra      map[string]string
		wantURL    string
		wantSecret string
		wantErr    string
	}{
		{"not configured", nil, "", "", ""},
		{"secrets without a URL are not needed", map[string]string{"PORTAL_CALLBACK_SECRETS": "short"}, "", "", ""},
		{"https, first secret", map[string]string{"PORTAL_API_URL": "https://portal.example.net/api", "PORTAL_CALLBACK_SECRETS": current + "," + older},
			"https://portal.example.net/api", current, ""},
		{"loopback http", map[string]string{"PORTAL_API_URL": "http://127.0.0.1:9999", "PORTAL_CALLBACK_SECRETS": current}, "http://127.0.0.1:9999", current, ""},
		{"remote http", map[string]string{"PORTAL_API_URL": "http://portal.example.net", "PORTAL_CALLBACK_SECRETS": current}, "", "", "PORTAL_API_URL"},
		{"secret required with a URL", map[string]string{"PORTAL_API_URL": "https://portal.example.net"}, "", "", "PORTAL_CALLBACK_SECRETS"},
		{"secret too short", map[string]string{"PORTAL_API_URL": "https://portal.example.net", "PORTAL_CALLBACK_SECRETS": "short"}, "", "", "PORTAL_CALLBACK_SECRETS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := Load(settings.MapLookup(settings(conn, tt.extra)))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one naming %s", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), current) {
					t.Fatal("the error shows the secret")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.PortalAPIURL != tt.wantURL || c.PortalSecret != tt.wantSecret {
				t.Fatalf("PortalAPIURL %q, secret set %v; want %q, %v", c.PortalAPIURL, c.PortalSecret != "", tt.wantURL, tt.wantSecret != "")
			}
			if s := c.Settings["PORTAL_CALLBACK_SECRETS"]; s != "" && s != "***" {
				t.Fatalf("summary shows the secret: %q", s)
			}
		})
	}
}
