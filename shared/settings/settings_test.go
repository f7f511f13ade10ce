package settings

import (
	"strings"
	"testing"
	"time"
)

func TestReaderReportsEverySettingAtFault(t *testing.T) {
	t.Parallel()
	r := NewReader(MapLookup(map[string]string{
		"PORT":    "notanumber",
		"TIMEOUT": "-1s",
		"MODE":    "weird",
		"KEY":     "c2hvcnQ=",
		"URL":     "ftp://x",
		"FLAG":    "yes please",
	}))
	r.Int("PORT", 1, 1, 65535)
	r.Duration("TIMEOUT", time.Second)
	r.Enum("MODE", "a", "a", "b")
	r.Base64Key("KEY", 32)
	r.URL("URL", true)
	r.Bool("FLAG", false)
	r.Required("MISSING")
	err := r.Err()
	if err == nil {
		t.Fatal("want an error")
	}
	for _, name := range []string{"PORT", "TIMEOUT", "MODE", "KEY", "URL", "FLAG", "MISSING"} {
		if !strings.Contains(err.Error(), "setting "+name+":") {
			t.Errorf("error does not name %s: %v", name, err)
		}
	}
}

func TestReaderValidValuesAndMaskedSecrets(t *testing.T) {
	t.Parallel()
	key := strings.Repeat("A", 44) // 33 bytes of base64
	r := NewReader(MapLookup(map[string]string{
		"PORT": "8080", "TIMEOUT": "5s", "MODE": "b", "KEY": key, "URL": "https://x.test/", "FLAG": "true",
	}))
	if got := r.Int("PORT", 1, 1, 65535); got != 8080 {
		t.Errorf("PORT = %d", got)
	}
	if got := r.Duration("TIMEOUT", time.Second); got != 5*time.Second {
		t.Errorf("TIMEOUT = %v", got)
	}
	if got := r.Enum("MODE", "a", "a", "b"); got != "b" {
		t.Errorf("MODE = %q", got)
	}
	if got := r.Base64Key("KEY", 32); len(got) != 33 {
		t.Errorf("KEY length = %d", len(got))
	}
	if got := r.URL("URL", true); got != "https://x.test" {
		t.Errorf("URL = %q", got)
	}
	if !r.Bool("FLAG", false) {
		t.Error("FLAG = false")
	}
	if got := r.String("ABSENT", "def"); got != "def" {
		t.Errorf("ABSENT = %q", got)
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if s := r.Summary()["KEY"]; s != "***" {
		t.Errorf("secret printed as %q", s)
	}
}
