// Package e2e runs the packaged apps (dist/dispatcher, dist/processor) under the local Functions
// host against a real Azurite, with dev keys made for the run, and drives them over HTTP the way
// a requester, the portal and an operator would.
package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/esign-svc/esign/devtools/funchost"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/tests/servicetest"
)

// env is the running service shared by the package's tests.
type env struct {
	*servicetest.Service
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
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var counter *storageCounter
	root, err := azuritetest.RepoRoot()
	if err != nil {
		return 0, err
	}
	// the repository's dist/: the e2e tests check the packaged folders and zips there too
	// 4 GB of blob content: BenchmarkBatch at 10,000 records holds their PDFs and a ZIP bundle or
	// combined PDF of them (about 1.2 GB; Azurite refuses writes past its limit)
	o := servicetest.Options{Dist: filepath.Join(root, "dist"), Settings: extraSettings, DropOutput: dropOutput, AzuriteExtentMB: 4096}
	// The apps' and the host's storage calls go through a counting proxy (benchmarks report
	// calls per record from it too).
	o.Storage = func(ctx context.Context, az *azuritetest.Instance) (string, error) {
		var err error
		if counter, err = startStorageCounter(ctx, az); err != nil {
			return "", err
		}
		return counter.connectionString(), nil
	}
	if os.Getenv("E2E_VERBOSE") != "" {
		o.Output = os.Stderr
	}
	s, err := servicetest.Start(ctx, o)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	svc = &env{Service: s, host: s.Host, azurite: s.Azurite, settings: s.Settings, keysDir: s.KeysDir, logs: s.Logs, counter: counter}
	for _, f := range started {
		if err := f(svc); err != nil {
			return 0, err
		}
	}
	code := m.Run()
	if f := os.Getenv("E2E_API_COVERAGE"); f != "" {
		if err := os.WriteFile(f, []byte(apiCoverage()), 0o644); err != nil {
			return 0, err
		}
	}
	if leak := checkLogs(s.Logs.String()); leak != "" {
		fmt.Fprintln(os.Stderr, "e2e: PRIVACY:", leak)
		code = 1
	}
	if code != 0 && os.Getenv("E2E_VERBOSE") == "" {
		fmt.Fprintf(os.Stderr, "--- last host and handler output:\n%s\n", s.Tail(20000))
	}
	return code, nil
}

// extraSettings lets test files add app settings before the host starts.
var extraSettings = map[string]string{}

// started lets test files finish their set-up once the service runs (and its keys exist),
// before any test.
var started []func(*env) error

// url is the service URL of an /api path with the host key.
func (e *env) url(path string) string { return e.URL(path) }

// jwt mints a dev identity-provider token for a tenant and roles.
func (e *env) jwt(t testing.TB, tenant string, roles ...string) string {
	t.Helper()
	tok, err := e.JWT(tenant, roles...)
	if err != nil {
		t.Fatal(err)
	}
	remember("JWT", tok)
	return tok
}

// client keeps as many idle connections as benchmarks have requests in flight.
var client = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
