package appconfig

import (
	"strings"
	"testing"

	"github.com/esign-svc/esign/shared/settings"
)

func TestReadNamesEverySharedSettingAtFault(t *testing.T) {
	t.Parallel()
	r := settings.NewReader(settings.MapLookup(map[string]string{"TOKEN_KEYS": "nonsense", "PORTAL_URL": "http://portal.example"}))
	Read(r, settings.MapLookup(nil))
	err := r.Err()
	for _, name := range []string{"STORAGE_CONNECTION_STRING", "TOKEN_KEYS", "PII_HASH_KEY", "PII_ENC_KEYS", "PORTAL_URL"} {
		if err == nil || !strings.Contains(err.Error(), "setting "+name) {
			t.Errorf("error does not name %s: %v", name, err)
		}
	}
}

func TestHTTPSOrLoopback(t *testing.T) {
	t.Parallel()
	for raw, ok := range map[string]bool{"https://p.example": true, "http://127.0.0.1:7071/portal": true,
		"http://localhost:5173": true, "http://[::1]:80": true, "http://p.example": false, "http://10.0.0.1": false} {
		if err := HTTPSOrLoopback(raw); (err == nil) != ok {
			t.Errorf("%s: %v", raw, err)
		}
	}
}

func TestSummaryListsTheChosenProvidersSettings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env        map[string]string
		shown      []string
		secret     string
		notPresent string
	}{
		{map[string]string{"EMAIL_PROVIDER": "smtp", "SMTP_HOST": "mail.example.com", "SMTP_PASSWORD": "pw"},
			[]string{"SMTP_HOST", "SMTP_PORT", "SMTP_FROM", "SMTP_USERNAME"}, "SMTP_PASSWORD", "ACS_ENDPOINT"},
		{map[string]string{"SMS_PROVIDER": "customer-acs", "ACS_ACCESS_KEY": "k", "ACS_ENDPOINT": "https://acs.example.com"},
			[]string{"ACS_ENDPOINT", "ACS_SMS_FROM", "ACS_EMAIL_SENDER"}, "ACS_ACCESS_KEY", "SMTP_HOST"},
	} {
		r := settings.NewReader(settings.MapLookup(tc.env))
		Read(r, settings.MapLookup(tc.env))
		sum := r.Summary()
		for _, k := range tc.shown {
			if _, ok := sum[k]; !ok {
				t.Errorf("%v: summary lacks %s", tc.env, k)
			}
		}
		if sum[tc.secret] != "***" {
			t.Errorf("%v: summary shows %s as %q", tc.env, tc.secret, sum[tc.secret])
		}
		if _, ok := sum[tc.notPresent]; ok {
			t.Errorf("%v: summary lists %s of a provider not chosen", tc.env, tc.notPresent)
		}
	}
}
