// Package browser drives the reference signing portal (portal/server) in Debian's headless
// chromium over the DevTools protocol (chromedp), against the whole service started once for
// the package (tests/servicetest): the portal server runs in this process on the PORTAL_URL the
// service's links point at, and each test works in its own browser context (separate storage),
// as a signer or recipient would. Screenshots of each page at desktop and phone width go to
// .local/screenshots/ (gitignored).
package browser

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/esign-svc/esign/portal/server"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/callbacksig"
	"github.com/esign-svc/esign/tests/servicetest"
)

var (
	svc       *servicetest.Service
	portal    *server.Server
	portalURL string
	browser   context.Context // the one chromium of the package
	shotsDir  string
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	ctx := context.Background()
	root, err := azuritetest.RepoRoot()
	if err != nil {
		return fail(err)
	}
	chromium, err := findChromium(root)
	if err != nil {
		return fail(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fail(err)
	}
	portalURL = "http://" + ln.Addr().String()
	svc, err = servicetest.Start(ctx, servicetest.Options{Settings: map[string]string{
		"PORTAL_URL": portalURL, "PORTAL_ORIGIN": portalURL, "PORTAL_API_URL": portalURL,
	}})
	if err != nil {
		return fail(err)
	}
	defer svc.Close()
	secrets, err := callbacksig.ParseSecrets(svc.Settings["PORTAL_CALLBACK_SECRETS"])
	if err != nil {
		return fail(err)
	}
	portal, err = server.New(server.Config{PortalURL: portalURL, ServiceURL: svc.Host.URL(),
		FunctionKey: svc.Settings["HOST_KEY"], Secrets: secrets})
	if err != nil {
		return fail(err)
	}
	srv := &http.Server{Handler: portal, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()

	shotsDir = filepath.Join(root, ".local", "screenshots")
	if err := os.MkdirAll(shotsDir, 0o755); err != nil {
		return fail(err)
	}
	// Chromium prints its DevTools address once started: chromedp waits 20 s for it by default,
	// which a fresh machine (its first font cache) under the whole suite's load can pass.
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox,
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.WindowSize(1280, 900), chromedp.WSURLReadTimeout(2*time.Minute))
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	b, cancelBrowser := chromedp.NewContext(alloc)
	defer cancelBrowser()
	if err := chromedp.Run(b); err != nil {
		return fail(fmt.Errorf("start chromium: %w", err))
	}
	browser = b
	code := m.Run()
	if found := leaks(svc.Logs.String()); len(found) > 0 {
		fmt.Fprintf(os.Stderr, "browser tests: the service's logs hold what signers and recipients entered or received: %s\n", strings.Join(found, ", "))
		code = 1
	}
	if code != 0 {
		fmt.Fprintln(os.Stderr, "service log tail:\n"+svc.Tail(6000))
	}
	return code
}

func fail(err error) int {
	fmt.Fprintln(os.Stderr, "browser tests:", err)
	return 1
}

// findChromium is Debian's chromium, installed by scripts/install-chromium.sh when missing.
func findChromium(root string) (string, error) {
	if p, err := exec.LookPath("chromium"); err == nil {
		return p, nil
	}
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "install-chromium.sh"))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("scripts/install-chromium.sh: %w", err)
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p, nil
	}
	return "", errors.New("chromium is not on PATH after scripts/install-chromium.sh")
}
