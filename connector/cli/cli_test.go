package cli

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/connector/jobs"
	"github.com/esign-svc/esign/connector/settings"
)

func runCLI(env map[string]string, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Run(context.Background(), args, Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: settings.Map(env)})
	return code, out.String(), errb.String()
}

// TestCommandLine: wrong command lines are exit status 2 naming the flag; missing settings are
// exit status 1 naming each key; the settings listing never shows the secrets; --output may
// come before the command.
func TestCommandLine(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		settings.KeyBaseURL: "https://esign.example.test/api", settings.KeyCode: "host-key-secret", settings.KeyTenantID: "t",
		settings.KeyClientID: "c", settings.KeyClientSecret: "client-secret-value", settings.KeyScope: "api://x/.default",
		settings.KeyStorePath: t.TempDir() + "/jobs.db",
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "a command is needed"},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{[]string{"sign", "x.pdf"}, 2, "at least one --signer"},
		{[]string{"sign", "x.pdf", "--signer", "buyer"}, 2, "want role:email[:name]"},
		{[]string{"status"}, 2, "want one CORRELATION_ID"},
		{[]string{"render", "--data", "x.csv"}, 2, "--template and --data are required"},
		{[]string{"render", "--template", "t", "--data", "x.csv", "--profile", "sap"}, 2, "--profile must be crm or erp"},
		{[]string{"render", "--template", "t", "--data", "/nonexistent.csv"}, 1, "--data: open /nonexistent.csv"},
		{[]string{"batch"}, 2, "batch: want one of cancel, decide, list, receipt, show"},
		{[]string{"batch", "decide", "b1", "--decision", "maybe"}, 2, "--decision must be approve, reject or request-changes"},
		{[]string{"jobs", "work", "--once", "--drain"}, 2, "--once or --drain, not both"},
		{[]string{"jobs", "list", "--output", "yaml"}, 2, "--output must be text or json"},
		{[]string{"upload", "--bogus"}, 2, "flag provided but not defined: -bogus"},
	} {
		code, _, stderr := runCLI(env, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d %q, want %d %q", tc.args, code, stderr, tc.code, tc.want)
		}
	}
	code, _, stderr := runCLI(map[string]string{}, "batch", "list")
	if code != 1 || !strings.Contains(stderr, "SERVICE_DISPATCHER_BASE_URL is required") || !strings.Contains(stderr, "SERVICE_DISPATCHER_CLIENT_SECRET is required") {
		t.Fatalf("no settings: %d %s", code, stderr)
	}
	for _, args := range [][]string{{"settings"}, {"--output", "json", "settings"}, {"--output=json", "settings"}} {
		code, out, stderr := runCLI(env, args...)
		if code != 0 || strings.Contains(out, "client-secret-value") || strings.Contains(out, "host-key-secret") || !strings.Contains(out, "(set, hidden)") {
			t.Fatalf("%v: %d %s %s", args, code, out, stderr)
		}
		if args[0] != "settings" && !strings.HasPrefix(out, "{") {
			t.Fatalf("%v is not JSON: %s", args, out)
		}
	}
}

// TestWebhookURLAlone: SERVICE_BATCH_NOTIFY_WEBHOOK_URL without SERVICE_BATCH_NOTIFY_SECRET
// runs (it used to fail the settings): the worker says once at its start that notices go
// unsigned; other commands and a signed webhook print no warning.
func TestWebhookURLAlone(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		settings.KeyBaseURL: "https://esign.example.test/api", settings.KeyCode: "k", settings.KeyTenantID: "t",
		settings.KeyClientID: "c", settings.KeyClientSecret: "s", settings.KeyScope: "api://x/.default",
		settings.KeyStorePath: t.TempDir() + "/jobs.db", settings.KeyNotifyWebhookURL: "https://hooks.example.test/done",
	}
	code, _, stderr := runCLI(env, "jobs", "work", "--drain")
	if code != 0 || strings.Count(stderr, "warning:") != 1 || !strings.Contains(stderr, "SERVICE_BATCH_NOTIFY_WEBHOOK_URL is set without SERVICE_BATCH_NOTIFY_SECRET") {
		t.Fatalf("jobs work with the URL alone: exit %d %q", code, stderr)
	}
	if code, _, stderr := runCLI(env, "jobs", "list"); code != 0 || stderr != "" {
		t.Fatalf("jobs list: exit %d %q", code, stderr)
	}
	env[settings.KeyNotifySecret] = strings.Repeat("n", settings.MinNotifySecretLen)
	if code, _, stderr := runCLI(env, "jobs", "work", "--drain"); code != 0 || stderr != "" {
		t.Fatalf("signed: exit %d %q", code, stderr)
	}
}

// TestWorkerPurges: `jobs work` applies SERVICE_LOG_RETENTION_DAYS by itself (it used to take
// `jobs purge`): an upload-log row older than the retention is gone after a drain, a newer one
// stays, and the worker says what it removed.
func TestWorkerPurges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := t.TempDir() + "/jobs.db"
	st, err := jobs.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	for _, age := range []int{91, 89} {
		st.Now = func() time.Time { return time.Now().AddDate(0, 0, -age) }
		if err := st.LogUpload(ctx, jobs.Upload{File: fmt.Sprintf("%d.pdf", age), PDFBlobPath: "documents/uploads/x.pdf"}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	env := map[string]string{
		settings.KeyBaseURL: "https://esign.example.test/api", settings.KeyCode: "k", settings.KeyTenantID: "t",
		settings.KeyClientID: "c", settings.KeyClientSecret: "s", settings.KeyScope: "api://x/.default", settings.KeyStorePath: path,
	}
	code, _, stderr := runCLI(env, "jobs", "work", "--drain")
	if code != 0 || !strings.Contains(stderr, "retention: removed 0 finished jobs (0 rows) and 1 upload-log rows older than 90 days") {
		t.Fatalf("jobs work: exit %d %q", code, stderr)
	}
	code, out, _ := runCLI(env, "jobs", "uploads")
	if code != 0 || strings.Contains(out, "91.pdf") || !strings.Contains(out, "89.pdf") {
		t.Fatalf("upload log after the worker: %s", out)
	}
}

// TestPortalLink: a link is SERVICE_PORTAL_URL's path and query with the page and the service
// link's token added (the page's parts escaped); none without the setting or the token.
func TestPortalLink(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		portal, service, param string
		elems                  []string
		want                   string
	}{
		{"https://portal.example.test/app/", "http://internal:7080/workflow/w1?pt=a.b-c", "pt", []string{"workflow", "w1"}, "https://portal.example.test/app/workflow/w1?pt=a.b-c"},
		{"https://portal.example.test", "https://x/deliver/d%2F1?t=tok", "t", []string{"deliver", "d/1"}, "https://portal.example.test/deliver/d%2F1?t=tok"},
		{"https://portal.example.test/p?tenant=acme", "https://x/sign?token=s", "token", []string{"sign"}, "https://portal.example.test/p/sign?tenant=acme&token=s"},
		{"https://portal.example.test", "https://x/sign", "token", []string{"sign"}, ""},
		{"", "https://x/sign?token=s", "token", []string{"sign"}, ""},
	} {
		a := &app{set: &settings.Settings{PortalURL: tc.portal}}
		if got := a.portalLink(tc.service, tc.param, tc.elems...); got != tc.want {
			t.Errorf("%s + %v: %q, want %q", tc.portal, tc.elems, got, tc.want)
		}
	}
}
