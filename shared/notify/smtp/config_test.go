package smtp

import (
	"strings"
	"testing"

	"github.com/esign-svc/esign/shared/settings"
)

func TestConfigFromLookup(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		env     map[string]string
		wantErr []string
	}{
		{name: "full", env: map[string]string{"SMTP_HOST": "smtp.example.com", "SMTP_USERNAME": "u", "SMTP_PASSWORD": "p", "SMTP_FROM": "E-Sign <no-reply@example.com>"}},
		{name: "insecure loopback", env: map[string]string{"SMTP_HOST": "127.0.0.1", "SMTP_PORT": "1025", "SMTP_INSECURE": "true", "SMTP_FROM": "a@b.example"}},
		{name: "empty", env: map[string]string{}, wantErr: []string{"SMTP_HOST", "SMTP_FROM"}},
		{name: "insecure remote", env: map[string]string{"SMTP_HOST": "smtp.example.com", "SMTP_INSECURE": "true", "SMTP_FROM": "a@b.example"}, wantErr: []string{"SMTP_INSECURE"}},
		{name: "bad port and from", env: map[string]string{"SMTP_HOST": "smtp.example.com", "SMTP_PORT": "70000", "SMTP_FROM": "not an address"}, wantErr: []string{"SMTP_PORT", "SMTP_FROM"}},
		{name: "user without password", env: map[string]string{"SMTP_HOST": "smtp.example.com", "SMTP_USERNAME": "u", "SMTP_FROM": "a@b.example"}, wantErr: []string{"SMTP_PASSWORD"}},
		{name: "host with port", env: map[string]string{"SMTP_HOST": "smtp.example.com:587", "SMTP_FROM": "a@b.example"}, wantErr: []string{"SMTP_HOST"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := ConfigFromLookup(settings.MapLookup(tc.env))
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				if cfg.Port == 0 || cfg.From.Address == "" {
					t.Errorf("cfg = %+v", cfg)
				}
				if _, err := New(cfg); err != nil {
					t.Error(err)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, name := range tc.wantErr {
				if !strings.Contains(err.Error(), name) {
					t.Errorf("error does not name %s: %v", name, err)
				}
			}
		})
	}
	cfg, err := ConfigFromLookup(settings.MapLookup(map[string]string{"SMTP_HOST": "h.example", "SMTP_FROM": "a@b.example"}))
	if err != nil || cfg.Port != 587 || cfg.Insecure {
		t.Errorf("defaults: %+v %v", cfg, err)
	}
}
