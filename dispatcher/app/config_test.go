package app

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/settings"
)

func key() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

func TestLoadNamesEverySettingAtFault(t *testing.T) {
	t.Parallel()
	_, err := Load(settings.MapLookup(map[string]string{"PORTAL_URL": "http://portal.example", "AUTH_JWKS_URL": "https://a", "AUTH_JWKS_FILE": "/b"}))
	for _, name := range []string{"STORAGE_CONNECTION_STRING", "TOKEN_KEYS", "PII_HASH_KEY", "PII_ENC_KEYS",
		"PORTAL_CALLBACK_SECRETS", "PORTAL_URL", "AUTH_ISSUER", "AUTH_AUDIENCE", "AUTH_JWKS_URL", "LICENCE", "LICENCE_PUBLIC_KEY"} {
		if err == nil || !strings.Contains(err.Error(), "setting "+name) {
			t.Errorf("error does not name %s: %v", name, err)
		}
	}
}

func TestLoadValid(t *testing.T) {
	t.Parallel()
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	c, err := Load(settings.MapLookup(map[string]string{
		"STORAGE_CONNECTION_STRING": "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + key() + ";TableEndpoint=http://127.0.0.1:1/devstoreaccount1;",
		"TOKEN_KEYS":                "k1:" + key(), "PII_HASH_KEY": key(), "PII_ENC_KEYS": "e1:" + key(),
		"PORTAL_CALLBACK_SECRETS": strings.Repeat("s", 32) + "," + strings.Repeat("t", 32),
		"PORTAL_URL":              "https://portal.example/app", "AUTH_ISSUER": "https://iss", "AUTH_AUDIENCE": "api://x",
		"AUTH_JWKS_URL": "https://iss/keys", "LICENCE": "x.y.z", "LICENCE_PUBLIC_KEY": base64.StdEncoding.EncodeToString(pub),
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.PortalOrigin != "https://portal.example" || len(c.CallbackSecrets) != 2 || c.Tokens == nil || c.Port != "8080" || c.Settings["TOKEN_KEYS"] != "***" {
		t.Fatalf("config %+v", c)
	}
}

func TestLoadGraphAndProviderSettings(t *testing.T) {
	t.Parallel()
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	base := map[string]string{
		"STORAGE_CONNECTION_STRING": "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + key() + ";TableEndpoint=http://127.0.0.1:1/devstoreaccount1;",
		"TOKEN_KEYS":                "k1:" + key(), "PII_HASH_KEY": key(), "PII_ENC_KEYS": "e1:" + key(),
		"PORTAL_CALLBACK_SECRETS": strings.Repeat("s", 32), "PORTAL_URL": "https://portal.example", "AUTH_ISSUER": "https://iss",
		"AUTH_AUDIENCE": "api://x", "AUTH_JWKS_URL": "https://iss/keys", "LICENCE": "x.y.z", "LICENCE_PUBLIC_KEY": base64.StdEncoding.EncodeToString(pub),
	}
	with := func(extra map[string]string) settings.Lookup {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return settings.MapLookup(m)
	}
	secret := "graph-client-secret-value"
	c, err := Load(with(map[string]string{"GRAPH_TENANT_ID": "t", "GRAPH_CLIENT_ID": "c", "GRAPH_CLIENT_SECRET": secret}))
	if err != nil {
		t.Fatal(err)
	}
	if !c.Graph.Configured() || c.Settings["GRAPH_CLIENT_SECRET"] != "***" || c.Settings["GRAPH_CLIENT_ID"] != "c" {
		t.Fatalf("graph %v, summary %v", c.Graph.Configured(), c.Settings)
	}
	if c.EmailProvider != "outbox" || c.Settings["EMAIL_PROVIDER"] != "outbox" || c.Settings["SMS_PROVIDER"] != "outbox" {
		t.Fatalf("providers %q, summary %v", c.EmailProvider, c.Settings)
	}
	if _, err := Load(with(map[string]string{"EMAIL_PROVIDER": "pigeon"})); err == nil || !strings.Contains(err.Error(), "setting EMAIL_PROVIDER") {
		t.Errorf("error does not name EMAIL_PROVIDER: %v", err)
	}
	if c.InviteCheckAfter != 10*time.Minute {
		t.Errorf("default INVITE_CHECK_AFTER %s, want 10m", c.InviteCheckAfter)
	}
	if c, err := Load(with(map[string]string{"INVITE_CHECK_AFTER": "3m"})); err != nil || c.InviteCheckAfter != 3*time.Minute {
		t.Errorf("INVITE_CHECK_AFTER 3m: %s %v", c.InviteCheckAfter, err)
	}
	for _, bad := range []string{"30s", "soon"} {
		if _, err := Load(with(map[string]string{"INVITE_CHECK_AFTER": bad})); err == nil || !strings.Contains(err.Error(), "setting INVITE_CHECK_AFTER") {
			t.Errorf("INVITE_CHECK_AFTER %s: error %v", bad, err)
		}
	}
	if c.TrustedProxyHops != 1 || c.Settings["TRUSTED_PROXY_HOPS"] != "" {
		t.Errorf("default TRUSTED_PROXY_HOPS %d (summary %q), want 1", c.TrustedProxyHops, c.Settings["TRUSTED_PROXY_HOPS"])
	}
	for v, want := range map[string]int{"0": 0, "2": 2} {
		if c, err := Load(with(map[string]string{"TRUSTED_PROXY_HOPS": v})); err != nil || c.TrustedProxyHops != want {
			t.Errorf("TRUSTED_PROXY_HOPS %s: %d %v", v, c.TrustedProxyHops, err)
		}
	}
	for _, bad := range []string{"-1", "11", "one"} {
		if _, err := Load(with(map[string]string{"TRUSTED_PROXY_HOPS": bad})); err == nil || !strings.Contains(err.Error(), "setting TRUSTED_PROXY_HOPS") {
			t.Errorf("TRUSTED_PROXY_HOPS %s: error %v", bad, err)
		}
	}
	if c.OTPBlock != time.Hour {
		t.Errorf("default OTP_BLOCK_MINUTES: %s, want 1h", c.OTPBlock)
	}
	if c, err := Load(with(map[string]string{"OTP_BLOCK_MINUTES": "5"})); err != nil || c.OTPBlock != 5*time.Minute {
		t.Errorf("OTP_BLOCK_MINUTES 5: %s %v", c.OTPBlock, err)
	}
	for _, bad := range []string{"0", "1441", "1h", "-5"} {
		if _, err := Load(with(map[string]string{"OTP_BLOCK_MINUTES": bad})); err == nil || !strings.Contains(err.Error(), "setting OTP_BLOCK_MINUTES") {
			t.Errorf("OTP_BLOCK_MINUTES %s: error %v", bad, err)
		}
	}
	_, err = Load(with(map[string]string{"GRAPH_USE_MANAGED_IDENTITY": "true", "GRAPH_CLIENT_SECRET": secret, "GRAPH_BASE_URL": "http://graph.example"}))
	for _, name := range []string{"GRAPH_USE_MANAGED_IDENTITY", "GRAPH_BASE_URL"} {
		if err == nil || !strings.Contains(err.Error(), "setting "+name) {
			t.Errorf("error does not name %s: %v", name, err)
		}
	}
	if err != nil && strings.Contains(err.Error(), secret) {
		t.Fatal("the error shows the client secret")
	}
}
