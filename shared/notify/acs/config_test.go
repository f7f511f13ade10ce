package acs

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/esign-svc/esign/shared/settings"
)

func TestConfigFromLookup(t *testing.T) {
	t.Parallel()
	key := base64.StdEncoding.EncodeToString(testKey)
	tests := []struct {
		name            string
		env             map[string]string
		email, sms      bool
		wantErr         []string // settings named in the error
		wantHost        string
		wantKey, wantMI bool
	}{
		{name: "endpoint and key", email: true,
			env:      map[string]string{"ACS_ENDPOINT": "https://res.communication.azure.com/", "ACS_ACCESS_KEY": key, "ACS_EMAIL_SENDER": "DoNotReply@x.example"},
			wantHost: "res.communication.azure.com", wantKey: true},
		{name: "connection string", sms: true,
			env:      map[string]string{"ACS_CONNECTION_STRING": "endpoint=https://cs.communication.azure.com/;accesskey=" + key, "ACS_SMS_FROM": "+18005550100"},
			wantHost: "cs.communication.azure.com", wantKey: true},
		{name: "managed identity", email: true,
			env:      map[string]string{"ACS_ENDPOINT": "https://mi.communication.azure.com", "ACS_EMAIL_SENDER": "DoNotReply@x.example", "ACS_CLIENT_ID": "00000000-0000-0000-0000-000000000001"},
			wantHost: "mi.communication.azure.com", wantMI: true},
		{name: "nothing", email: true, sms: true, env: map[string]string{},
			wantErr: []string{"ACS_ENDPOINT", "ACS_EMAIL_SENDER", "ACS_SMS_FROM"}},
		{name: "http endpoint, bad key, bad from", sms: true,
			env:     map[string]string{"ACS_ENDPOINT": "http://res.communication.azure.com", "ACS_ACCESS_KEY": "%%%", "ACS_SMS_FROM": "12"},
			wantErr: []string{"ACS_ENDPOINT", "ACS_ACCESS_KEY", "ACS_SMS_FROM"}},
		{name: "broken connection string", email: true,
			env:     map[string]string{"ACS_CONNECTION_STRING": "endpoint=https://x;" + key[:10], "ACS_EMAIL_SENDER": "a@b.c"},
			wantErr: []string{"ACS_CONNECTION_STRING"}},
		{name: "bad wait", email: true,
			env:     map[string]string{"ACS_ENDPOINT": "https://r.communication.azure.com", "ACS_ACCESS_KEY": key, "ACS_EMAIL_SENDER": "a@b.c", "ACS_EMAIL_WAIT": "forever"},
			wantErr: []string{"ACS_EMAIL_WAIT"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := ConfigFromLookup(settings.MapLookup(tc.env), tc.email, tc.sms)
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatal("no error")
				}
				for _, name := range tc.wantErr {
					if !strings.Contains(err.Error(), name) {
						t.Errorf("error does not name %s: %v", name, err)
					}
				}
				if strings.Contains(err.Error(), key[:10]) {
					t.Errorf("error exposes the key: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Endpoint.Host != tc.wantHost || (cfg.AccessKey != nil) != tc.wantKey || (cfg.Credential != nil) != tc.wantMI {
				t.Errorf("cfg = host %q key %v credential %v", cfg.Endpoint.Host, cfg.AccessKey != nil, cfg.Credential != nil)
			}
		})
	}
}

func TestFromLookupBuildsSenders(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"ACS_CONNECTION_STRING": "endpoint=https://cs.communication.azure.com/;accesskey=" + base64.StdEncoding.EncodeToString(testKey),
		"ACS_EMAIL_SENDER":      "DoNotReply@x.example", "ACS_SMS_FROM": "12345",
	}
	if _, err := NewEmailFromLookup(settings.MapLookup(env)); err != nil {
		t.Error(err)
	}
	if _, err := NewSMSFromLookup(settings.MapLookup(env)); err != nil {
		t.Error(err)
	}
	delete(env, "ACS_SMS_FROM")
	if _, err := NewSMSFromLookup(settings.MapLookup(env)); err == nil || !strings.Contains(err.Error(), "ACS_SMS_FROM") {
		t.Errorf("err = %v", err)
	}
}
