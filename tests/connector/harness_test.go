// Package connector tests the source-system connector (the typed client and the svcconnect
// command line) against the running service: both apps under the local Functions host on a real
// Azurite (tests/servicetest), with tokens from the dev OAuth token endpoint (devkeys.OAuthServer)
// signed by the run's dev identity-provider key.
package connector

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/connector/cli"
	"github.com/esign-svc/esign/connector/settings"
	"github.com/esign-svc/esign/devtools/devkeys"
	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/azure/blobstore"
	"github.com/esign-svc/esign/tests/servicetest"
)

var (
	svc       *servicetest.Service
	oauthURL  string
	oauthSrv  *devkeys.OAuthServer
	issued    atomic.Int64 // tokens the dev endpoint minted
	binary    string       // the built svcconnect, for the tests that kill a worker
	offerPath string       // the sample package (examples/offer) in templates
)

func TestMain(m *testing.M) {
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "connector:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o := servicetest.Options{}
	if os.Getenv("E2E_VERBOSE") != "" {
		o.Output = os.Stderr
	}
	s, err := servicetest.Start(ctx, o)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	svc = s
	if oauthSrv, err = devkeys.NewDevOAuthServer(s.KeysDir); err != nil {
		return 0, err
	}
	oauthSrv.Issued = func() { issued.Add(1) }
	ts := httptest.NewServer(oauthSrv)
	defer ts.Close()
	oauthURL = ts.URL
	bin, err := os.MkdirTemp("", "svcconnect-bin-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(bin)
	binary = filepath.Join(bin, "svcconnect")
	build := exec.Command("go", "build", "-o", binary, "github.com/esign-svc/esign/connector/cmd/svcconnect")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return 0, fmt.Errorf("build svcconnect: %w", err)
	}
	if offerPath, err = putPackage(ctx, "connector/"+uuid.NewString()+".zip", offerFiles(nil)); err != nil {
		return 0, err
	}
	code := m.Run()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "--- last host and handler output:\n%s\n", s.Tail(20000))
	}
	return code, nil
}

// offerFiles is the sample package (examples/offer) plus extra files.
func offerFiles(extra map[string][]byte) map[string][]byte {
	files := map[string][]byte{}
	for _, name := range []string{"template.yaml", "template.pdf"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "examples", "offer", name))
		if err != nil {
			panic(err)
		}
		files[name] = b
	}
	for k, v := range extra {
		files[k] = v
	}
	return files
}

// putPackage stores files as a ZIP package templates/shared/<name> (the operator's packages,
// open to every tenant) and returns its path.
func putPackage(ctx context.Context, name string, files map[string][]byte) (string, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for n, b := range files {
		w, err := zw.Create(n)
		if err != nil {
			return "", err
		}
		if _, err := w.Write(b); err != nil {
			return "", err
		}
	}
	if err := zw.Close(); err != nil {
		return "", err
	}
	st, err := blobs()
	if err != nil {
		return "", err
	}
	if err := st.EnsureContainer(ctx, "templates"); err != nil {
		return "", err
	}
	if _, err := st.Put(ctx, "templates", "shared/"+name, bytes.NewReader(buf.Bytes()), "application/zip", nil); err != nil {
		return "", err
	}
	return "templates/shared/" + name, nil
}

func blobs() (*blobstore.Store, error) {
	acct, err := azconn.New(azconn.Config{ConnectionString: svc.Azurite.ConnectionString()})
	if err != nil {
		return nil, err
	}
	return blobstore.New(acct), nil
}

// baseURL is the dispatcher's base URL as SERVICE_DISPATCHER_BASE_URL takes it.
func baseURL() string { return svc.Host.URL() + "/api" }

// connSettings are the connector's settings for the run's service, its store in a folder of
// the test; over adds or replaces keys.
func connSettings(t *testing.T, over map[string]string) map[string]string {
	t.Helper()
	env, err := devkeys.ReadEnv(filepath.Join(svc.KeysDir, devkeys.FileDevEnv))
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{
		settings.KeyBaseURL:      baseURL(),
		settings.KeyCode:         svc.Host.HostKey(),
		settings.KeyTenantID:     devkeys.DevTenantID,
		settings.KeyClientID:     devkeys.DevClientID,
		settings.KeyClientSecret: env[settings.KeyClientSecret],
		settings.KeyScope:        devkeys.DevAudience + "/.default",
		settings.KeyAuthorityURL: oauthURL,
		settings.KeyStorePath:    filepath.Join(t.TempDir(), "jobs.db"),
	}
	for k, v := range over {
		m[k] = v
	}
	return m
}

// result is one run of the command line.
type result struct {
	code           int
	stdout, stderr string
}

// svcconnect runs the command line in-process with the settings as its environment; stdin is
// a terminal's when interactive.
func svcconnect(t *testing.T, set map[string]string, stdin string, interactive bool, args ...string) result {
	t.Helper()
	return runEnv(set, cli.Env{Stdin: strings.NewReader(stdin), Interactive: interactive}, args)
}

// onTerminal runs the command line with stderr a terminal's: progress bars are drawn.
func onTerminal(set map[string]string, args ...string) result {
	return runEnv(set, cli.Env{Stdin: strings.NewReader(""), ProgressTTY: true}, args)
}

func runEnv(set map[string]string, env cli.Env, args []string) result {
	var out, errb bytes.Buffer
	env.Stdout, env.Stderr, env.Getenv = &out, &errb, settings.Map(set)
	code := cli.Run(context.Background(), args, env)
	return result{code, out.String(), errb.String()}
}

// ok runs the command line and fails the test on a non-zero exit.
func ok(t *testing.T, set map[string]string, args ...string) string {
	t.Helper()
	r := svcconnect(t, set, "", false, args...)
	if r.code != 0 {
		t.Fatalf("svcconnect %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

// writeFile writes a file in the test's folder and returns its path.
func writeFile(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
