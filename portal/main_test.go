package main

import (
	"strings"
	"testing"
)

func TestConfig(t *testing.T) {
	t.Parallel()
	secret := strings.Repeat("s", 32)
	base := map[string]string{"PORTAL_URL": "http://127.0.0.1:7080", "BASE_URL": "http://127.0.0.1:7071",
		"HOST_KEY": "k", "PORTAL_CALLBACK_SECRETS": secret + "," + strings.Repeat("t", 32)}
	env := func(over map[string]string) func(string) string {
		return func(k string) string {
			if v, ok := over[k]; ok {
				return v
			}
			return base[k]
		}
	}
	cfg, listen, err := config(env(nil))
	if err != nil || listen != "127.0.0.1:7080" || len(cfg.Secrets) != 2 || cfg.Secrets[0] != secret {
		t.Fatalf("config: %+v %q %v", cfg, listen, err)
	}
	if _, listen, _ := config(env(map[string]string{"PORTAL_URL": "https://sign.example.com/app"})); listen != "sign.example.com:443" {
		t.Fatalf("listen for an https URL without a port: %q", listen)
	}
	if _, listen, _ := config(env(map[string]string{"PORTAL_LISTEN": "0.0.0.0:9000"})); listen != "0.0.0.0:9000" {
		t.Fatalf("PORTAL_LISTEN: %q", listen)
	}
	for setting, bad := range map[string]string{"PORTAL_URL": "", "BASE_URL": "", "HOST_KEY": "", "PORTAL_CALLBACK_SECRETS": "",
		"PORTAL_TRUSTED_PROXY_HOPS": "-1"} {
		if _, _, err := config(env(map[string]string{setting: bad})); err == nil || !strings.Contains(err.Error(), setting) {
			t.Errorf("%s=%q: %v, want an error naming it", setting, bad, err)
		}
	}
}
