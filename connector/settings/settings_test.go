package settings

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func required() map[string]string {
	return map[string]string{
		KeyBaseURL: "https://esign.example.test/api/", KeyCode: "host-key-1", KeyTenantID: "tenant-1",
		KeyClientID: "client-1", KeyClientSecret: "s3cr3t-value", KeyScope: "api://esign/.default",
	}
}

// TestDefaults: the spec's defaults when only the required keys are set.
func TestDefaults(t *testing.T) {
	t.Parallel()
	s, err := Load(Map(required()))
	if err != nil {
		t.Fatal(err)
	}
	want := Settings{BaseURL: "https://esign.example.test/api", Code: "host-key-1", TenantID: "tenant-1", ClientID: "client-1",
		ClientSecret: "s3cr3t-value", Scope: "api://esign/.default", AuthorityURL: DefaultAuthorityURL,
		AsyncThreshold: 500, RetentionDays: 90, NotifyOn: "FailureOnly", MaxRetries: 3, WarnThreshold: 25, MaxThreshold: 100,
		StorePath: s.StorePath}
	if s != want || s.StorePath == "" {
		t.Fatalf("got %#v\nwant %#v", s, want)
	}
	if got := s.TokenURL(); got != "https://login.microsoftonline.com/tenant-1/oauth2/v2.0/token" {
		t.Fatalf("token URL %s", got)
	}
}

// TestErrorsNameTheKey: each bad value is reported with its key, all at once, and no error or
// listing holds the secret.
func TestErrorsNameTheKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ key, value, want string }{
		{KeyBaseURL, "", "SERVICE_DISPATCHER_BASE_URL is required"},
		{KeyBaseURL, "esign.example.test", "SERVICE_DISPATCHER_BASE_URL must be an absolute http or https URL"},
		{KeyClientSecret, "", "SERVICE_DISPATCHER_CLIENT_SECRET is required"},
		{KeyAsyncThreshold, "many", `SERVICE_BATCH_ASYNC_THRESHOLD must be a whole number of at least 1, not "many"`},
		{KeyRetentionDays, "-1", "SERVICE_LOG_RETENTION_DAYS must be a whole number of at least 0"},
		{KeyNotifyOn, "Sometimes", `SERVICE_BATCH_NOTIFY_ON must be Always or FailureOnly, not "Sometimes"`},
		{KeyMaxRetries, "0", "SERVICE_GEN_QUEUE_MAX_RETRIES must be a whole number of at least 1"},
		{KeyWarnThreshold, "150", "service_batchwarningthreshold (150) must not be above service_batchmaxthreshold (100)"},
		{KeyNotifySecret, "too-short", "SERVICE_BATCH_NOTIFY_SECRET must be at least 32 characters when set"},
	} {
		t.Run(tc.key+"="+tc.value, func(t *testing.T) {
			m := required()
			m[tc.key] = tc.value
			_, err := Load(Map(m))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "s3cr3t-value") {
				t.Fatal("the error holds the secret")
			}
		})
	}
	m := required()
	m[KeyCode], m[KeyScope] = "", ""
	_, err := Load(Map(m))
	if err == nil || !strings.Contains(err.Error(), KeyCode) || !strings.Contains(err.Error(), KeyScope) {
		t.Fatalf("two missing keys: %v", err)
	}
	s, _ := Load(Map(required()))
	for _, out := range []string{s.String(), fmt.Sprintf("%v", s), fmt.Sprintf("%+v", s), fmt.Sprintf("%#v", s)} {
		if strings.Contains(out, "s3cr3t-value") || strings.Contains(out, "host-key-1") {
			t.Fatalf("a listing shows a secret:\n%s", out)
		}
	}
}

// TestFileUnderEnvironment: a settings file (dev.env's shape) is read, and the environment wins
// over it.
func TestFileUnderEnvironment(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "svc.env")
	var b strings.Builder
	b.WriteString("# comment\n\n")
	for k, v := range required() {
		fmt.Fprintf(&b, "%s='%s'\n", k, v)
	}
	b.WriteString("export SERVICE_BATCH_ASYNC_THRESHOLD=7\nservice_batchmaxthreshold=\"60\"\n")
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	file, err := ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Load(Layer(Map(map[string]string{KeyAsyncThreshold: "9"}), Map(file)))
	if err != nil {
		t.Fatal(err)
	}
	if s.AsyncThreshold != 9 || s.MaxThreshold != 60 || s.ClientSecret != "s3cr3t-value" {
		t.Fatalf("%d %d", s.AsyncThreshold, s.MaxThreshold)
	}
	if err := os.WriteFile(p, []byte("NOEQUALS\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(p); err == nil || !strings.Contains(err.Error(), ":1: want KEY=value") {
		t.Fatalf("bad line: %v", err)
	}
}

// TestSecretsOnlyOverHTTPS: every URL that carries a secret is refused over plain http unless
// its host is loopback; the error names the key and never holds the secret or the URL.
func TestSecretsOnlyOverHTTPS(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("n", MinNotifySecretLen)
	for _, tc := range []struct {
		name string
		set  map[string]string
		bad  string // the key refused, "" when accepted
	}{
		{"base URL http", map[string]string{KeyBaseURL: "http://esign.example.test/api"}, KeyBaseURL},
		{"base URL HTTP upper case", map[string]string{KeyBaseURL: "HTTP://esign.example.test/api"}, KeyBaseURL},
		{"authority http", map[string]string{KeyAuthorityURL: "http://login.example.test"}, KeyAuthorityURL},
		{"webhook with a token in the query", map[string]string{KeyNotifyWebhookURL: "http://hooks.example.test/x?token=s3cr3t-value", KeyNotifySecret: long}, KeyNotifyWebhookURL},
		{"webhook with user information", map[string]string{KeyNotifyWebhookURL: "https://u:s3cr3t-value@hooks.example.test/x", KeyNotifySecret: long}, KeyNotifyWebhookURL + " must not carry credentials"},
		{"portal with a key in the query", map[string]string{KeyPortalURL: "http://portal.example.test/?code=s3cr3t-value"}, KeyPortalURL},
		{"webhook without a secret of its own", map[string]string{KeyNotifyWebhookURL: "http://hooks.example.test/x", KeyNotifySecret: long}, ""},
		{"portal plain", map[string]string{KeyPortalURL: "http://portal.example.test/"}, ""},
		{"loopback 127.0.0.1", map[string]string{KeyBaseURL: "http://127.0.0.1:7071/api", KeyAuthorityURL: "http://127.0.0.1:7072"}, ""},
		{"loopback 127.8.9.10", map[string]string{KeyBaseURL: "http://127.8.9.10:7071/api"}, ""},
		{"loopback ::1", map[string]string{KeyBaseURL: "http://[::1]:7071/api"}, ""},
		{"loopback localhost", map[string]string{KeyBaseURL: "http://LocalHost:7071/api", KeyNotifyWebhookURL: "http://localhost:9/x?token=t", KeyNotifySecret: long}, ""},
		{"not loopback: localhost.example.test", map[string]string{KeyBaseURL: "http://localhost.example.test/api"}, KeyBaseURL},
		{"not loopback: 128.0.0.1", map[string]string{KeyBaseURL: "http://128.0.0.1/api"}, KeyBaseURL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := required()
			for k, v := range tc.set {
				m[k] = v
			}
			_, err := Load(Map(m))
			if tc.bad == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			want := tc.bad
			if !strings.Contains(want, " ") {
				want += " must be https (http is allowed only on a loopback host): it carries a secret"
			}
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("error %v, want %q", err, want)
			}
			if strings.Contains(err.Error(), "s3cr3t-value") || strings.Contains(err.Error(), "example.test") {
				t.Fatalf("the error shows the secret or the URL: %v", err)
			}
		})
	}
}

// TestWebhookWithoutSecret: SERVICE_BATCH_NOTIFY_WEBHOOK_URL alone loads (spec 001: the URL is
// the whole setting; blank disables), with one warning that its notices go unsigned; with a
// secret, or with no URL, there is no warning. It used to be refused without the secret.
func TestWebhookWithoutSecret(t *testing.T) {
	t.Parallel()
	m := required()
	m[KeyNotifyWebhookURL] = "https://hooks.example.test/done"
	s, err := Load(Map(m))
	if err != nil {
		t.Fatalf("the webhook URL alone is refused: %v", err)
	}
	if w := s.Warnings(); len(w) != 1 || !strings.Contains(w[0], KeyNotifyWebhookURL+" is set without "+KeyNotifySecret) || !strings.Contains(w[0], "unsigned") {
		t.Fatalf("warnings %q, want one naming the unsigned webhook", w)
	}
	m[KeyNotifySecret] = strings.Repeat("n", MinNotifySecretLen)
	if s, err := Load(Map(m)); err != nil || len(s.Warnings()) != 0 {
		t.Fatalf("signed webhook: %v %q", err, s.Warnings())
	}
	m[KeyNotifyWebhookURL], m[KeyNotifySecret] = " ", ""
	if s, err := Load(Map(m)); err != nil || s.NotifyWebhookURL != "" || len(s.Warnings()) != 0 {
		t.Fatalf("blank URL: %v %q %q", err, s.NotifyWebhookURL, s.Warnings())
	}
}
