// Package servicetest starts the whole service for a test package: both apps packaged by
// scripts/package.sh, a fresh Azurite, dev keys made for the run with the development PKI served
// on a free loopback port (seals are PAdES B-LTA, as under make run), and the local Functions host
// running both apps on a free port. The end-to-end, fault, browser and connector tests start the
// service through it, once per package (in TestMain).
package servicetest

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/esign-svc/esign/devtools/devkeys"
	"github.com/esign-svc/esign/devtools/funchost"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/pdf/tsatest"
)

// Options shape a run. The zero value packages into <repo>/dist and keeps Azurite in memory.
type Options struct {
	// Dist is where scripts/package.sh writes the apps; empty: a temporary folder of this run's
	// own (removed by Close), since test packages run in parallel and packaging empties the
	// function folders another package's host may be loading.
	Dist string
	// AzuriteLocation keeps Azurite's data in a folder (so that it can be restarted); empty: in
	// memory.
	AzuriteLocation string
	// AzuriteExtentMB is azuritetest.Options.ExtentMemoryMB (in memory only).
	AzuriteExtentMB int
	// Settings are app settings added over the dev keys' and the storage settings.
	Settings map[string]string
	// Storage, when set, gives the connection string the apps use as STORAGE_CONNECTION_STRING
	// and the host as AzureWebJobsStorage (its queue triggers and output bindings): a proxy in
	// front of Azurite, say. Azurite's own string stays in Service.Azurite.
	Storage func(ctx context.Context, az *azuritetest.Instance) (string, error)
	// Prepare edits the packaged apps in dist before the host starts them.
	Prepare func(dist string) error
	// Output also receives everything the host and both handlers print (Logs always does).
	Output io.Writer
	// DropOutput is funchost.Options.DropOutput.
	DropOutput func(function, binding string, message []byte) bool
	// Schedules runs the timer functions on their schedules; off by default: tests fire them
	// with Host.RunTimer.
	Schedules bool
}

// Service is a running service.
type Service struct {
	Host     *funchost.Host
	Azurite  *azuritetest.Instance
	Settings map[string]string // the apps' settings
	KeysDir  string            // the dev keys (devkeys.MintFromDir reads them)
	PKI      *tsatest.PKI      // the development PKI the seals use (SEAL_TSA_URL, OCSP, CRL)
	Dist     string            // the packaged apps
	Logs     *funchost.Output  // everything the host and both handlers printed
	closers  []func()
}

// Start packages both apps and starts Azurite and the host. Close stops them. Errors: packaging,
// Azurite or the host failing to start (with what the host printed).
func Start(ctx context.Context, o Options) (_ *Service, err error) {
	root, err := azuritetest.RepoRoot()
	if err != nil {
		return nil, err
	}
	s := &Service{Dist: o.Dist, Logs: &funchost.Output{}}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	if s.Dist == "" { // a folder of this run's own: test packages run at the same time
		if s.Dist, err = os.MkdirTemp("", "service-dist-"); err != nil {
			return nil, err
		}
		dist := s.Dist
		s.closers = append(s.closers, func() { os.RemoveAll(dist) })
	}
	pkg := exec.Command("bash", filepath.Join(root, "scripts", "package.sh"))
	pkg.Dir, pkg.Stdout, pkg.Stderr = root, os.Stderr, os.Stderr
	pkg.Env = append(os.Environ(), "DIST="+s.Dist)
	if err := pkg.Run(); err != nil {
		return nil, fmt.Errorf("package: %w", err)
	}
	if o.Prepare != nil {
		if err := o.Prepare(s.Dist); err != nil {
			return nil, err
		}
	}
	if s.Azurite, err = azuritetest.LaunchWith(ctx, azuritetest.Options{Location: o.AzuriteLocation, ExtentMemoryMB: o.AzuriteExtentMB}); err != nil {
		return nil, err
	}
	s.closers = append(s.closers, func() { s.Azurite.Stop() })
	if s.KeysDir, err = os.MkdirTemp("", "service-keys-"); err != nil {
		return nil, err
	}
	s.closers = append(s.closers, func() { os.RemoveAll(s.KeysDir) })
	// the development PKI, as make run serves it (devtools/cmd/devpki): seals are B-LTA
	pkiLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	keys, err := devkeys.Setup(s.KeysDir, devkeys.Options{PKIURL: "http://" + pkiLn.Addr().String()})
	if err != nil {
		pkiLn.Close()
		return nil, err
	}
	pki, err := devkeys.LoadPKI(s.KeysDir)
	if err != nil {
		pkiLn.Close()
		return nil, err
	}
	s.PKI = pki
	pkiSrv := &http.Server{Handler: pki.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = pkiSrv.Serve(pkiLn) }()
	s.closers = append(s.closers, func() { _ = pkiSrv.Close() })
	s.Settings = map[string]string{}
	for k, v := range keys.Env {
		if strings.HasPrefix(k, "SERVICE_") { // the connector's, its client secret among them: no app reads them
			continue
		}
		s.Settings[k] = v
	}
	s.Settings["STORAGE_CONNECTION_STRING"] = s.Azurite.ConnectionString()
	s.Settings["AzureWebJobsStorage"] = s.Azurite.ConnectionString()
	if o.Storage != nil {
		if s.Settings["STORAGE_CONNECTION_STRING"], err = o.Storage(ctx, s.Azurite); err != nil {
			return nil, err
		}
		s.Settings["AzureWebJobsStorage"] = s.Settings["STORAGE_CONNECTION_STRING"]
	}
	for k, v := range o.Settings {
		s.Settings[k] = v
	}
	out := io.Writer(s.Logs)
	if o.Output != nil {
		out = io.MultiWriter(s.Logs, o.Output)
	}
	s.Host, err = funchost.Start(ctx, funchost.Options{
		Apps:     []string{filepath.Join(s.Dist, "dispatcher"), filepath.Join(s.Dist, "processor")},
		Listen:   "127.0.0.1:0",
		Settings: s.Settings, HostKey: s.Settings["HOST_KEY"], MasterKey: s.Settings["MASTER_KEY"],
		Output: out, DisableSchedules: !o.Schedules, DropOutput: o.DropOutput,
	})
	if err != nil {
		return nil, fmt.Errorf("%w\n%s", err, s.Logs.String())
	}
	s.closers = append(s.closers, func() { s.Host.Close() })
	return s, nil
}

// Close stops the host and Azurite and removes the dev keys, in the reverse order of Start.
func (s *Service) Close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
	s.closers = nil
}

// URL is the service URL of an /api path with the host key (?code=).
func (s *Service) URL(path string) string {
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	return s.Host.URL() + "/api/" + strings.TrimLeft(path, "/") + sep + "code=" + s.Host.HostKey()
}

// JWT mints a dev identity-provider token the service accepts, for tenant with roles (none when
// roles is empty).
func (s *Service) JWT(tenant string, roles ...string) (string, error) {
	return devkeys.MintFromDir(s.KeysDir, devkeys.TokenOptions{Tenant: tenant, Roles: roles, NoRoles: len(roles) == 0})
}

// Tail is the last n bytes of what the host and the handlers printed.
func (s *Service) Tail(n int) string {
	out := s.Logs.String()
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}
