// Package fault runs the packaged apps under the local Functions host against an Azurite that
// keeps its data in a folder, and breaks things on purpose: the processor killed in the middle
// of a seal, Azurite restarted under live sessions, a seal message delivered twice, a poison
// seal message, two processor instances on the same queues. Each test checks that nothing is
// lost and nothing is doubled: one sealed PDF, one session.completed, one e-mail of each kind.
//
// It has its own environment (not the e2e package's): it restarts processes that the e2e tests
// would need running. Its tests run one after another; the long one runs its sessions in
// parallel.
package fault

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/esign-svc/esign/devtools/funchost"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/tests/servicetest"
)

// env is the running service the package's tests share.
type env struct {
	host     *funchost.Host
	azurite  *azuritetest.Instance
	tsa      *tsa
	settings map[string]string
	keysDir  string
	dist     string // the packaged apps of this run
	logs     *funchost.Output
}

var svc *env

// Queue settings of this run's processor: retries come back after a second or two, so that a
// message retried after a kill or behind a busy seal lock is seen within the test's time.
var processorQueues = map[string]string{
	`"visibilityTimeout": "00:00:30"`:  `"visibilityTimeout": "00:00:02"`,
	`"maxPollingInterval": "00:00:02"`: `"maxPollingInterval": "00:00:00.5"`,
}

func TestMain(m *testing.M) {
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fault:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tmp, err := os.MkdirTemp("", "fault-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)
	ts, err := startTSA()
	if err != nil {
		return 0, err
	}
	defer ts.close()
	o := servicetest.Options{
		Dist: filepath.Join(tmp, "dist"), AzuriteLocation: filepath.Join(tmp, "azurite"),
		Prepare: func(dist string) error {
			return rewrite(filepath.Join(dist, "processor", "host.json"), processorQueues)
		},
		Settings: map[string]string{
			"SEAL_TSA_URL":  ts.url,
			"SEAL_LEVEL":    "B-T", // one TSA request per seal, as the tests count them
			"SEAL_LOCK_TTL": "3s",  // a killed attempt's lock expires within the message's retries
			// the events test's listener is on this machine
			"WEBHOOK_ALLOW_LOOPBACK": "true",
		},
	}
	if os.Getenv("FAULT_VERBOSE") != "" {
		o.Output = os.Stderr
	}
	s, err := servicetest.Start(ctx, o)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	svc = &env{host: s.Host, azurite: s.Azurite, tsa: ts, settings: s.Settings, keysDir: s.KeysDir, dist: s.Dist, logs: s.Logs}
	code := m.Run()
	if strings.Contains(s.Logs.String(), "@"+mailDomain) {
		fmt.Fprintln(os.Stderr, "fault: PRIVACY: an e-mail address reached a log line")
		code = 1
	}
	if code != 0 && os.Getenv("FAULT_VERBOSE") == "" {
		fmt.Fprintf(os.Stderr, "--- last host and handler output:\n%s\n", s.Tail(20000))
	}
	return code, nil
}

// rewrite replaces each key of repl by its value in the file, failing when one is not there.
func rewrite(path string, repl map[string]string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	s := string(b)
	for from, to := range repl {
		if !strings.Contains(s, from) {
			return fmt.Errorf("%s has no %s", path, from)
		}
		s = strings.ReplaceAll(s, from, to)
	}
	return os.WriteFile(path, []byte(s), 0o644)
}

// secondProcessor starts another host running only the processor app, on the same storage and
// queues: a second instance, as Functions scale-out runs them. It stops when the test ends.
func secondProcessor(t *testing.T) *funchost.Host {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "processor") // the app's name is its folder's
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(svc.dist, "processor"))); err != nil {
		t.Fatal(err)
	}
	h, err := funchost.Start(context.Background(), funchost.Options{
		Apps: []string{dir}, Listen: "127.0.0.1:0", Settings: svc.settings,
		HostKey: svc.settings["HOST_KEY"], MasterKey: svc.settings["MASTER_KEY"],
		Output: prefixed{svc.logs, "[second] "}, DisableSchedules: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// prefixed marks the second host's lines.
type prefixed struct {
	w      io.Writer
	prefix string
}

func (p prefixed) Write(b []byte) (int, error) {
	if _, err := p.w.Write(append([]byte(p.prefix), b...)); err != nil {
		return 0, err
	}
	return len(b), nil
}
