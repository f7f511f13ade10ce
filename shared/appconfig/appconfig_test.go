package appconfig

import (
	"strings"
	"testing"

	"github.com/esign-svc/esign/shared/config"
)

func TestReadNamesEverySharedSettingAtFault(t *testing.T) {
	t.Parallel()
	r := config.NewReader(config.MapLookup(map[string]string{"TOKEN_KEYS": "nonsense", "PORTAL_URL": "http://portal.example"}))
	Read(r, config.MapLookup(nil))
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
