// Package azuritetest starts a real Azurite (the pinned one from the repository's package.json)
// for tests: in memory (or with its data in a folder, so that it can be restarted), on free
// loopback ports, stopped when the test or package ends.
//
// Use Start for one test, or Main in TestMain to share one instance across a package's tests
// (tests then use random table, container and queue names, from Name, so they can run in
// parallel), and Account for an account on it. A store's own fixture (its storetest package)
// builds on these.
package azuritetest

import (
	"bufio"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/azure/azconn"
)

// AccountName and AccountKey are Azurite's fixed development account.
const (
	AccountName = "devstoreaccount1"
	AccountKey  = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// Instance is a running Azurite.
type Instance struct {
	BlobEndpoint  string
	QueueEndpoint string
	TableEndpoint string
	opts          Options
	cmd           *exec.Cmd
	done          chan struct{}
	logs          *strings.Builder
	mu            sync.Mutex
}

// Options of LaunchWith.
type Options struct {
	// Location is the folder Azurite keeps its data in, so that Restart finds it again; empty:
	// in memory (gone when the process ends).
	Location string
	// ExtentMemoryMB bounds the blob content an in-memory Azurite holds (--extentMemoryLimit,
	// in MB); 0: 1024. Past it Azurite refuses writes: a benchmark of 10,000 record PDFs and
	// their ZIP bundle (about 1.2 GB) sets more.
	ExtentMemoryMB int
}

// ConnectionString is the explicit devstoreaccount1 connection string the Go SDKs accept.
func (in *Instance) ConnectionString() string {
	return ConnectionString(in.BlobEndpoint, in.QueueEndpoint, in.TableEndpoint)
}

// ConnectionString builds the explicit development-account connection string for the endpoints.
func ConnectionString(blob, queue, table string) string {
	return fmt.Sprintf("DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;BlobEndpoint=%s;QueueEndpoint=%s;TableEndpoint=%s;",
		AccountName, AccountKey, blob, queue, table)
}

// Stop ends the Azurite process (SIGTERM: it saves its data to Location first) and waits for
// it.
func (in *Instance) Stop() {
	in.mu.Lock()
	cmd, done := in.cmd, in.done
	in.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

var listening = regexp.MustCompile(`Azurite (Blob|Queue|Table) service is successfully listening at (http://\S+)`)

// Launch installs Azurite if needed and starts it in memory on free ports.
func Launch(ctx context.Context) (*Instance, error) { return LaunchWith(ctx, Options{}) }

// LaunchWith installs Azurite if needed and starts it on free ports, with its data where opts
// say.
func LaunchWith(ctx context.Context, opts Options) (*Instance, error) {
	return launch(ctx, opts, [3]string{"0", "0", "0"})
}

// Restart stops Azurite and starts it again on the same ports with the same data (Location);
// clients keep working once it is back. Between the two, every call fails as against an
// account that is down. Errors: an instance without a Location, or Azurite failing to start
// again (a port taken meanwhile).
func (in *Instance) Restart(ctx context.Context) error {
	if in.opts.Location == "" {
		return fmt.Errorf("azuritetest: Restart needs an instance with a Location (in-memory data would be lost)")
	}
	ports := [3]string{}
	for i, ep := range []string{in.BlobEndpoint, in.QueueEndpoint, in.TableEndpoint} {
		m := portOf.FindStringSubmatch(ep)
		if m == nil {
			return fmt.Errorf("azuritetest: no port in endpoint %q", ep)
		}
		ports[i] = m[1]
	}
	in.Stop()
	next, err := launch(ctx, in.opts, ports)
	if err != nil {
		return err
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	in.cmd, in.done, in.logs = next.cmd, next.done, next.logs
	return nil
}

var portOf = regexp.MustCompile(`^http://[^/:]+:(\d+)/`)

// launch starts Azurite on ports (blob, queue, table; "0" picks a free one).
func launch(ctx context.Context, opts Options, ports [3]string) (*Instance, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	ensure := exec.CommandContext(ctx, "bash", filepath.Join(root, "scripts", "ensure-azurite.sh"))
	ensure.Stderr = os.Stderr
	out, err := ensure.Output()
	if err != nil {
		return nil, fmt.Errorf("azuritetest: install azurite: %w", err)
	}
	bin := strings.TrimSpace(string(out))
	workdir, err := os.MkdirTemp("", "azurite-")
	if err != nil {
		return nil, err
	}
	args := []string{"--blobPort", ports[0], "--queuePort", ports[1], "--tablePort", ports[2],
		"--blobHost", "127.0.0.1", "--queueHost", "127.0.0.1", "--tableHost", "127.0.0.1",
		"--skipApiVersionCheck", "--disableTelemetry", "--silent"}
	if opts.Location == "" {
		args = append(args, "--inMemoryPersistence", "--extentMemoryLimit", strconv.Itoa(cmp.Or(opts.ExtentMemoryMB, 1024)))
	} else {
		args = append(args, "--location", opts.Location)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = workdir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("azuritetest: start %s: %w", bin, err)
	}
	in := &Instance{opts: opts, cmd: cmd, done: make(chan struct{}), logs: &strings.Builder{}}
	found := make(chan map[string]string, 1)
	go func() {
		eps := map[string]string{}
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			in.mu.Lock()
			in.logs.WriteString(line + "\n")
			in.mu.Unlock()
			if m := listening.FindStringSubmatch(line); m != nil {
				eps[m[1]] = m[2] + "/" + AccountName
				if len(eps) == 3 {
					found <- eps
				}
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	go func() { _ = cmd.Wait(); os.RemoveAll(workdir); close(in.done) }()
	select {
	case eps := <-found:
		in.BlobEndpoint, in.QueueEndpoint, in.TableEndpoint = eps["Blob"], eps["Queue"], eps["Table"]
		return in, nil
	case <-in.done:
		in.mu.Lock()
		defer in.mu.Unlock()
		return nil, fmt.Errorf("azuritetest: azurite exited before listening:\n%s", in.logs.String())
	case <-time.After(60 * time.Second):
		in.Stop()
		return nil, fmt.Errorf("azuritetest: azurite did not report its ports within 60s")
	case <-ctx.Done():
		in.Stop()
		return nil, ctx.Err()
	}
}

// PID is the Azurite process's id (a benchmark reads its CPU time from /proc).
func (in *Instance) PID() int { return in.cmd.Process.Pid }

// Start launches an Azurite for one test and stops it when the test ends.
func Start(tb testing.TB) *Instance {
	tb.Helper()
	in, err := Launch(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(in.Stop)
	return in
}

var shared *Instance

// Main runs a package's tests with one shared Azurite; call it from TestMain.
func Main(m *testing.M) {
	in, err := Launch(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	shared = in
	code := m.Run()
	in.Stop()
	os.Exit(code)
}

// Shared returns the package's instance started by Main.
func Shared(tb testing.TB) *Instance {
	tb.Helper()
	if shared == nil {
		tb.Fatal("azuritetest: Shared needs azuritetest.Main in TestMain")
	}
	return shared
}

// Account is an account on the package's instance started by Main, for the test's stores.
func Account(tb testing.TB) *azconn.Account {
	tb.Helper()
	return Shared(tb).Account(tb)
}

// Account is an account on the instance.
func (in *Instance) Account(tb testing.TB) *azconn.Account {
	tb.Helper()
	a, err := azconn.New(azconn.Config{ConnectionString: in.ConnectionString()})
	if err != nil {
		tb.Fatal(err)
	}
	return a
}

// Ensured is a store fixture's tail: it fails the test on err (the store constructor's), else
// ensures the store's tables and returns the store.
func Ensured[S interface{ Ensure(context.Context) error }](tb testing.TB, s S, err error) S {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
	if err := s.Ensure(context.Background()); err != nil {
		tb.Fatal(err)
	}
	return s
}

// Name is prefix and 12 random lower-case hex digits: a table, container or queue name of the
// test's own (prefix lower-case letters, for a name valid in all three).
func Name(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// RepoRoot finds the repository root (the folder holding go.work) from the working directory.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("azuritetest: no go.work above the working directory")
		}
		dir = parent
	}
}
