package licence_test

import (
	"strings"
	"testing"

	"github.com/esign-svc/esign/shared/licence"
	"github.com/esign-svc/esign/shared/licence/licencetest"
	"github.com/esign-svc/esign/shared/settings"
)

// LICENSING_URL is optional; set, it must be an https URL (http only on loopback) without
// credentials or query, and the loaded licence keeps its JWS for the service's bearer.
func TestSettingsLicensingURL(t *testing.T) {
	t.Parallel()
	base := licencetest.MustSettings()
	read := func(url string) (licence.Settings, error) {
		env := map[string]string{}
		for k, v := range base {
			env[k] = v
		}
		if url != "" {
			env[licence.SettingServiceURL] = url
		}
		r := settings.NewReader(settings.MapLookup(env))
		s := licence.ReadSettings(r)
		return s, r.Err()
	}
	s, err := read("")
	if err != nil || s.ServiceURL != "" {
		t.Fatalf("unset: %+v %v", s.ServiceURL, err)
	}
	l, err := s.Load()
	if err != nil || l.Token() != strings.TrimSpace(base[licence.SettingText]) {
		t.Fatalf("the loaded licence does not keep its JWS: %v", err)
	}
	if (*licence.Licence)(nil).Token() != "" {
		t.Fatal("a nil licence has a token")
	}
	for in, want := range map[string]string{"https://licensing.example.com/": "https://licensing.example.com",
		"http://127.0.0.1:7073": "http://127.0.0.1:7073"} {
		if s, err := read(in); err != nil || s.ServiceURL != want {
			t.Errorf("%s: %q %v", in, s.ServiceURL, err)
		}
	}
	for _, bad := range []string{"http://licensing.example.com", "https://u:p@licensing.example.com", "https://licensing.example.com?x=1", "licensing"} {
		if _, err := read(bad); err == nil || !strings.Contains(err.Error(), licence.SettingServiceURL) {
			t.Errorf("%s: %v", bad, err)
		}
	}
}
