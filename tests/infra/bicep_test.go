// Package infra checks infra/main.bicep against the settings the apps read (the Bicep CLI is
// not installable here, so the template is checked by reading it).
package infra

import (
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/esign-svc/esign/devtools/devkeys"
	dispatcherapp "github.com/esign-svc/esign/dispatcher/app"
	processorapp "github.com/esign-svc/esign/processor/app"
	"github.com/esign-svc/esign/shared/notify/senders"
	"software.sslmate.com/src/go-pkcs12"
)

// setting is one `{ name: 'X', value: EXPR }` entry of an app's settings, with the emailProvider
// it is conditional on ("" when unconditional).
type setting struct{ name, value, onlyFor string }

var (
	entryRE = regexp.MustCompile(`\{ name: '([A-Za-z_][A-Za-z0-9_]*)', value: (.+) \}`)
	condRE  = regexp.MustCompile(`emailProvider == '([a-z-]+)' \? \[`)
)

// section is the text of main.bicep from the line starting with from up to the next line that
// starts with until (at the start of a line, so nested text is kept).
func section(t *testing.T, src, from, until string) string {
	t.Helper()
	i := strings.Index(src, "\n"+from)
	if i < 0 {
		t.Fatalf("main.bicep has no %q", from)
	}
	rest := src[i+1:]
	j := strings.Index(rest[1:], "\n"+until)
	if j < 0 {
		return rest
	}
	return rest[:j+1]
}

// entries are the settings of text, each with the emailProvider condition it sits under.
func entries(text string) []setting {
	var out []setting
	cond := ""
	for line := range strings.SplitSeq(text, "\n") {
		if m := condRE.FindStringSubmatch(line); m != nil {
			cond = m[1]
		}
		if m := entryRE.FindStringSubmatch(line); m != nil {
			out = append(out, setting{m[1], strings.TrimSpace(m[2]), cond})
		}
		if strings.HasPrefix(strings.TrimSpace(line), "] : [") {
			cond = ""
		}
	}
	return out
}

// appSettings are the settings main.bicep writes for app ("dispatcher" or "processor").
func appSettings(t *testing.T, src, app string) []setting {
	t.Helper()
	common := entries(section(t, src, "var commonSettings = [", "]"))
	providers := entries(section(t, src, "var operatorSettings", "// The content share"))
	content := entries(section(t, src, "var "+app+"Content = [", "]"))
	own := entries(section(t, src, "resource "+app+" 'Microsoft.Web/sites", "resource "))
	// The app's resource lists what it concatenates; each part must be there.
	res := section(t, src, "resource "+app+" 'Microsoft.Web/sites", "resource ")
	for _, part := range []string{"commonSettings", "operatorSettings", "acsSettings", "smtpSettings", app + "Content"} {
		if !strings.Contains(res, part) {
			t.Errorf("%s does not concatenate %s", app, part)
		}
	}
	all := slices.Concat(common, providers, content, own)
	if len(common) < 10 || len(own) < 3 {
		t.Fatalf("%s: parsed only %d common and %d own settings; has main.bicep's layout changed?", app, len(common), len(own))
	}
	return all
}

// hostOwned are settings of the Functions runtime, not of the handlers.
func hostOwned(name string) bool {
	return strings.HasPrefix(name, "FUNCTIONS_") || strings.HasPrefix(name, "WEBSITE_") ||
		strings.HasPrefix(name, "AzureWebJobsStorage__") || name == "APPLICATIONINSIGHTS_CONNECTION_STRING"
}

var fixtures struct {
	once    sync.Once
	secrets map[string]string // vault secret name -> a valid value
	params  map[string]string // Bicep parameter or expression -> a plausible value
	err     error
}

// devValues makes valid values for the vault secrets and the parameters from a fresh dev setup
// (the licence must verify with the public key, the seal PKCS#12 must hold a key).
func devValues(t *testing.T) (map[string]string, map[string]string) {
	t.Helper()
	fixtures.once.Do(func() {
		dir := t.TempDir()
		res, err := devkeys.Setup(dir, devkeys.Options{})
		if err != nil {
			fixtures.err = err
			return
		}
		env := res.Env
		lic, err := os.ReadFile(env["LICENCE_FILE"])
		if err != nil {
			fixtures.err = err
			return
		}
		p12, err := sealPKCS12(env["SEAL_CERT_FILE"], env["SEAL_KEY_FILE"], "pw")
		if err != nil {
			fixtures.err = err
			return
		}
		p12Path := filepath.Join(dir, "seal.p12")
		if fixtures.err = os.WriteFile(p12Path, p12, 0o600); fixtures.err != nil {
			return
		}
		fixtures.secrets = map[string]string{
			"token-keys": env["TOKEN_KEYS"], "pii-hash-key": env["PII_HASH_KEY"], "pii-enc-keys": env["PII_ENC_KEYS"],
			"portal-callback-secrets": env["PORTAL_CALLBACK_SECRETS"], "licence": strings.TrimSpace(string(lic)),
			"seal-pkcs12-password": "pw", "notification-service-key": strings.Repeat("k", 40), "smtp-password": "relay-password",
			"webhook-secrets": strings.Repeat("w", 40),
		}
		fixtures.params = map[string]string{
			"portalUrl": "https://portal.example", "portalApiUrl": "https://portal.example/api",
			"authIssuer": "https://login.microsoftonline.com/t/v2.0", "authAudience": "api://esign",
			"authJwksUrl":            "https://login.microsoftonline.com/t/discovery/v2.0/keys",
			"licencePublicKey":       env["LICENCE_PUBLIC_KEY"],
			"notificationServiceUrl": "https://notify.example", "acsEndpoint": "https://acs.communication.azure.com",
			"acsEmailSender": "no-reply@example.com", "acsSmsFrom": "+15550100",
			"smtpHost": "smtp.example.com", "smtpPort": "587", "smtpUsername": "relay", "smtpFrom": "no-reply@example.com",
			"storage.name": "acmestabc", "identity.properties.clientId": "00000000-0000-4000-8000-000000000001",
			"smsProvider": "customer-acs", "dispatchApprovers": "approver@example.com, ops@example.com",
			// The seal file is uploaded after deployment; here it stands at a temporary path.
			"'/home/site/seal/seal.p12'": p12Path,
		}
	})
	if fixtures.err != nil {
		t.Fatal(fixtures.err)
	}
	return fixtures.secrets, fixtures.params
}

func sealPKCS12(certFile, keyFile, password string) ([]byte, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, err
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, err
	}
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, os.ErrInvalid
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, err
	}
	key, err := x509.ParsePKCS8PrivateKey(kb.Bytes)
	if err != nil {
		return nil, err
	}
	return pkcs12.Modern.Encode(key, cert, nil, password)
}

var kvRefRE = regexp.MustCompile(`^kvRef(?:\['([a-z0-9-]+)'\]|\.([a-z0-9]+))$`)

// value is what an expression of main.bicep stands for in the test, for emailProvider p.
func value(t *testing.T, expr, provider string) string {
	t.Helper()
	secrets, params := devValues(t)
	if m := kvRefRE.FindStringSubmatch(expr); m != nil {
		name := m[1] + m[2]
		v, ok := secrets[name]
		if !ok {
			t.Fatalf("vault secret %q has no test value", name)
		}
		return v
	}
	if expr == "emailProvider" {
		return provider
	}
	if v, ok := params[expr]; ok {
		return v
	}
	if strings.HasPrefix(expr, "'") && strings.HasSuffix(expr, "'") && !strings.Contains(expr, "${") {
		return strings.Trim(expr, "'")
	}
	return "" // host-owned expressions (connection strings, share names) are not read by the apps
}

func TestBicepSettingsAreTheOnesTheAppsRead(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile(filepath.Join("..", "..", "infra", "main.bicep"))
	if err != nil {
		t.Fatal(err)
	}
	allowed := regexp.MustCompile(`@allowed\(\[([^\]]*)\]\)\s*param emailProvider`).FindSubmatch(src)
	if allowed == nil {
		t.Fatal("main.bicep has no @allowed list for emailProvider")
	}
	var providers []string
	for p := range strings.SplitSeq(string(allowed[1]), ",") {
		providers = append(providers, strings.Trim(strings.TrimSpace(p), "'"))
	}
	for _, app := range []string{"dispatcher", "processor"} {
		written := appSettings(t, string(src), app)
		read := map[string]bool{}
		for _, provider := range providers {
			env := map[string]string{}
			for _, s := range written {
				if s.onlyFor != "" && s.onlyFor != provider {
					continue
				}
				if _, dup := env[s.name]; dup {
					t.Errorf("%s (%s): %s is written twice", app, provider, s.name)
				}
				env[s.name] = value(t, s.value, provider)
			}
			var mu sync.Mutex
			lookup := func(name string) (string, bool) {
				mu.Lock()
				read[name] = true
				mu.Unlock()
				v, ok := env[name]
				return v, ok && v != ""
			}
			// Start-up as each app does it: its configuration, then its senders.
			if app == "dispatcher" {
				_, err = dispatcherapp.Load(lookup)
			} else {
				_, err = processorapp.Load(lookup)
			}
			if err != nil {
				t.Errorf("%s with emailProvider=%s does not start with the settings main.bicep writes: %v", app, provider, err)
				continue
			}
			if _, _, err := senders.FromConfig(lookup, nil); err != nil {
				t.Errorf("%s with emailProvider=%s: its senders refuse the settings main.bicep writes: %v", app, provider, err)
			}
		}
		for _, s := range written {
			if !hostOwned(s.name) && !read[s.name] {
				t.Errorf("%s: main.bicep writes %s, which the app never reads (misspelt, or for the other app?)", app, s.name)
			}
		}
	}
}

// The spec names EMAIL_PROVIDER's value customer-acs (spec 000 §8): a deployment that sets no
// emailProvider sends through the customer's own Communication Services.
func TestBicepEmailProviderDefaultsToCustomerACS(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile(filepath.Join("..", "..", "infra", "main.bicep"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`param emailProvider string = '([a-z-]+)'`).FindSubmatch(src)
	if m == nil {
		t.Fatal("main.bicep has no default for emailProvider")
	}
	if got := string(m[1]); got != "customer-acs" {
		t.Errorf("emailProvider defaults to %q; spec 000 §8 names customer-acs", got)
	}
}
