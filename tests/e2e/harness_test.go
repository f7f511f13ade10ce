// Package e2e runs the packaged apps (dist/dispatcher, dist/processor) under the local Functions
// host against a real Azurite, with dev keys made for the run, and drives them over HTTP the way
// a requester, the portal and an operator would.
package e2e

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/tests/devkeys"
	"github.com/esign-svc/esign/tests/funchost"
)

// env is the running service shared by the package's tests.
type env struct {
	host     *funchost.Host
	azurite  *azuritetest.Instance
	settings map[string]string
	keysDir  string
	logs     *funchost.Output // everything the host and both handlers printed
	counter  *storageCounter
}

var svc *env

func TestMain(m *testing.M) {
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	flag.Parse() // the testing flags decide whether storage goes through the counting proxy
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	root, err := azuritetest.RepoRoot()
	if err != nil {
		return 0, err
	}
	pkg := exec.Command("bash", filepath.Join(root, "scripts", "package.sh"))
	pkg.Dir, pkg.Stdout, pkg.Stderr = root, os.Stderr, os.Stderr
	if err := pkg.Run(); err != nil {
		return 0, fmt.Errorf("package: %w", err)
	}
	az, err := azuritetest.Launch(ctx)
	if err != nil {
		return 0, err
	}
	defer az.Stop()
	dir, err := os.MkdirTemp("", "e2e-keys-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	keys, err := devkeys.Setup(dir, devkeys.Options{})
	if err != nil {
		return 0, err
	}
	settings := map[string]string{}
	for k, v := range keys.Env {
		settings[k] = v
	}
	settings["STORAGE_CONNECTION_STRING"] = az.ConnectionString()
	var counter *storageCounter
	if !benchOnly() {
		// The apps' storage calls go through a counting proxy, except in a benchmark run: there
		// they go straight to Azurite, as the floor they are compared with does.
		if counter, err = startStorageCounter(ctx, az); err != nil {
			return 0, err
		}
		settings["STORAGE_CONNECTION_STRING"] = counter.connectionString()
	}
	settings["AzureWebJobsStorage"] = az.ConnectionString()
	for k, v := range extraSettings {
		settings[k] = v
	}
	logs := &funchost.Output{}
	out := io.Writer(logs)
	if os.Getenv("E2E_VERBOSE") != "" {
		out = io.MultiWriter(logs, os.Stderr)
	}
	h, err := funchost.Start(ctx, funchost.Options{
		Apps:     []string{filepath.Join(root, "dist", "dispatcher"), filepath.Join(root, "dist", "processor")},
		Listen:   "127.0.0.1:0",
		Settings: settings,
		HostKey:  settings["HOST_KEY"], MasterKey: settings["MASTER_KEY"],
		Output:           out,
		DisableSchedules: true,       // tests fire timers themselves with RunTimer
		DropOutput:       dropOutput, // drops only the outputs of tenants a test registered
	})
	if err != nil {
		return 0, fmt.Errorf("%w\n%s", err, logs.String())
	}
	defer h.Close()
	svc = &env{host: h, azurite: az, settings: settings, keysDir: dir, logs: logs, counter: counter}
	code := m.Run()
	if f := os.Getenv("E2E_API_COVERAGE"); f != "" {
		if err := os.WriteFile(f, []byte(apiCoverage()), 0o644); err != nil {
			return 0, err
		}
	}
	if leak := checkLogs(logs.String()); leak != "" {
		fmt.Fprintln(os.Stderr, "e2e: PRIVACY:", leak)
		code = 1
	}
	if code != 0 && os.Getenv("E2E_VERBOSE") == "" {
		tail := logs.String()
		if len(tail) > 20000 {
			tail = tail[len(tail)-20000:]
		}
		fmt.Fprintf(os.Stderr, "--- last host and handler output:\n%s\n", tail)
	}
	return code, nil
}

// benchOnly reports whether this run only benchmarks (-bench set, -run matching nothing).
func benchOnly() bool {
	b, r := flag.Lookup("test.bench"), flag.Lookup("test.run")
	return b != nil && b.Value.String() != "" && r != nil && r.Value.String() == "^$"
}

// extraSettings lets test files add app settings before the host starts.
var extraSettings = map[string]string{}

// url is the service URL of an /api path with the host key.
func (e *env) url(path string) string {
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	return e.host.URL() + "/api/" + strings.TrimLeft(path, "/") + sep + "code=" + e.host.HostKey()
}

// jwt mints a dev identity-provider token for a tenant and roles.
func (e *env) jwt(t testing.TB, tenant string, roles ...string) string {
	t.Helper()
	tok, err := devkeys.MintFromDir(e.keysDir, devkeys.TokenOptions{Tenant: tenant, Roles: roles, NoRoles: len(roles) == 0})
	if err != nil {
		t.Fatal(err)
	}
	remember("JWT", tok)
	return tok
}

// client keeps as many idle connections as benchmarks have requests in flight.
var client = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
