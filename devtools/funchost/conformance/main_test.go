// Package conformance checks devtools/funchost against the custom-handler contract (wire.md and
// DESIGN section 2) with a hand-written test handler (handlers/testhandler) and a real Azurite.
package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/esign-svc/esign/devtools/funchost"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
)

func connString() string { return azurite.ConnectionString() }

var (
	handlerBin string
	azurite    *azuritetest.Instance
)

func TestMain(m *testing.M) {
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	dir, err := os.MkdirTemp("", "funchost-conformance-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	handlerBin = filepath.Join(dir, "testhandler")
	build := exec.Command("go", "build", "-o", handlerBin, "./handlers/testhandler")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("build test handler: %v\n%s", err, out)
	}
	azurite, err = azuritetest.Launch(context.Background())
	if err != nil {
		return 0, err
	}
	defer azurite.Stop()
	return m.Run(), nil
}

// queuesJSON is the extensions.queues part of a test app's host.json.
type queuesJSON map[string]any

// fastQueues keeps the queue tests quick: short visibility and polling.
func fastQueues() queuesJSON {
	return queuesJSON{"batchSize": 16, "newBatchThreshold": 8, "maxDequeueCount": 5,
		"visibilityTimeout": "00:00:01", "maxPollingInterval": "00:00:00.500", "messageEncoding": "base64"}
}

// writeApp lays out an app folder: host.json, one folder per function, and the test handler
// as ./handler.
func writeApp(t *testing.T, queues queuesJSON, functions map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "testapp")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	host := map[string]any{
		"version": "2.0",
		"customHandler": map[string]any{
			"description":                 map[string]any{"defaultExecutablePath": "handler", "workingDirectory": "", "arguments": []any{}},
			"enableForwardingHttpRequest": true,
		},
		"extensions": map[string]any{"http": map[string]any{"routePrefix": "api"}, "queues": queues},
	}
	b, _ := json.Marshal(host)
	mustWrite(t, filepath.Join(dir, "host.json"), b)
	if err := os.Symlink(handlerBin, filepath.Join(dir, "handler")); err != nil {
		t.Fatal(err)
	}
	for name, fj := range functions {
		if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		mustWrite(t, filepath.Join(dir, name, "function.json"), []byte(fj))
	}
	return dir
}

func mustWrite(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// env is a started host with its record directory and captured output.
type env struct {
	h         *funchost.Host
	recordDir string
	out       *funchost.Output
}

const (
	hostKey   = "test-host-key"
	masterKey = "test-master-key"
)

// startHost starts funchost on port 0 over the apps with the storage connection, the record
// directory and extra settings; it is closed when the test ends.
func startHost(t *testing.T, shape funchost.RequestShape, settings map[string]string, apps ...string) *env {
	t.Helper()
	e, err := tryStart(t, shape, settings, 0, apps...)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func tryStart(t *testing.T, shape funchost.RequestShape, settings map[string]string, ready time.Duration, apps ...string) (*env, error) {
	t.Helper()
	return tryStartOpts(t, funchost.Options{Apps: apps, Shape: shape, ReadyTimeout: ready}, settings)
}

// tryStartOpts is tryStart with more of the host's options (Apps, Shape, ReadyTimeout,
// MaxInvocationBody, MinPollingInterval are taken from o).
func tryStartOpts(t *testing.T, o funchost.Options, settings map[string]string) (*env, error) {
	t.Helper()
	e := &env{recordDir: t.TempDir(), out: &funchost.Output{}}
	s := map[string]string{"AzureWebJobsStorage": connString(), "TH_RECORD_DIR": e.recordDir}
	for k, v := range settings {
		s[k] = v
	}
	// The host lives as long as its context: the test's, cancelled as the test ends.
	h, err := funchost.Start(t.Context(), funchost.Options{Apps: o.Apps, Listen: "127.0.0.1:0", Settings: s,
		HostKey: hostKey, MasterKey: masterKey, Shape: o.Shape, Output: e.out, ReadyTimeout: o.ReadyTimeout,
		DisableSchedules: true, MaxInvocationBody: o.MaxInvocationBody, MinPollingInterval: o.MinPollingInterval})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("host output:\n%s", e.out.String())
		}
	})
	if err != nil {
		return e, err
	}
	e.h = h
	t.Cleanup(func() { h.Close() })
	return e, nil
}

// record is one invocation request the test handler saw.
type record struct {
	Fn         string          `json:"fn"`
	Concurrent int             `json:"concurrent"`
	Request    json.RawMessage `json:"request"`
}

// records returns the recorded invocations of fn, oldest first.
func (e *env) records(t *testing.T, fn string) []record {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(e.recordDir, fn+"-*.json"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	var out []record
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		var r record
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		out = append(out, r)
	}
	return out
}

// waitRecords waits until fn has at least n recorded invocations.
func (e *env) waitRecords(t *testing.T, fn string, n int, within time.Duration) []record {
	t.Helper()
	var got []record
	eventually(t, within, func() bool {
		got = e.records(t, fn)
		return len(got) >= n
	}, func() string { return fmt.Sprintf("%s: %d of %d invocations recorded", fn, len(got), n) })
	return got
}

// eventually polls cond every 50ms until it holds or the time is up.
func eventually(t *testing.T, within time.Duration, cond func() bool, what func() string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s: %s", within, what())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// queueName is a fresh random queue name for one test.
func queueName(prefix string) string {
	return fmt.Sprintf("%s-%08x", prefix, rand.Uint32())
}

func queueClient(t *testing.T, name string) *azqueue.QueueClient {
	t.Helper()
	svc, err := azqueue.NewServiceClientFromConnectionString(connString(), nil)
	if err != nil {
		t.Fatal(err)
	}
	c := svc.NewQueueClient(name)
	if _, err := c.Create(context.Background(), nil); err != nil && !strings.Contains(err.Error(), "QueueAlreadyExists") {
		t.Fatal(err)
	}
	return c
}

// peekAll returns the visible messages' texts (up to 32).
func peekAll(t *testing.T, c *azqueue.QueueClient) []string {
	t.Helper()
	n := int32(32)
	resp, err := c.PeekMessages(context.Background(), &azqueue.PeekMessagesOptions{NumberOfMessages: &n})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range resp.Messages {
		out = append(out, *m.MessageText)
	}
	return out
}

// approxCount is the queue's message count, visible or not.
func approxCount(t *testing.T, c *azqueue.QueueClient) int32 {
	t.Helper()
	p, err := c.GetProperties(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return *p.ApproximateMessagesCount
}
