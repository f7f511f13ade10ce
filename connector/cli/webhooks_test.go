package cli

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/esign-svc/esign/connector/settings"
	"github.com/esign-svc/esign/shared/webhook"
)

// lockedBuffer is a bytes.Buffer safe for the listener's goroutines and the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
func (l *lockedBuffer) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

// TestWebhooksListen: listen prints an event whose Standard Webhooks signature verifies (a
// second POST of its webhook-id marked as a retry), refuses one signed with another secret with
// 401, and needs its secret from the environment and a port.
func TestWebhooksListen(t *testing.T) {
	t.Parallel()
	secret, _ := webhook.NewSecret()
	other, _ := webhook.NewSecret()
	if code, _, stderr := runCLI(map[string]string{}, "webhooks", "listen", "--port", "9"); code != 1 || !strings.Contains(stderr, KeyListenSecret) {
		t.Fatalf("no secret: %d %s", code, stderr)
	}
	if code, _, stderr := runCLI(map[string]string{KeyListenSecret: secret}, "webhooks", "listen"); code != 2 || !strings.Contains(stderr, "--port") {
		t.Fatalf("no port: %d %s", code, stderr)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb lockedBuffer
	done := make(chan int)
	go func() {
		done <- Run(ctx, []string{"webhooks", "listen", "--port", strconv.Itoa(port)}, Env{Stdin: strings.NewReader(""),
			Stdout: &out, Stderr: &errb, Getenv: settings.Map(map[string]string{KeyListenSecret: "whsec_old " + secret})})
	}()
	c, err := webhook.NewUnsigned(webhook.WithPolicy(webhook.Policy{AllowLoopback: true}))
	if err != nil {
		t.Fatal(err)
	}
	url := "http://127.0.0.1:" + strconv.Itoa(port) + "/"
	body := []byte(`{"id":"evt_1","type":"slot.signed","timestamp":"2026-11-27T02:00:00Z","tenantId":"t","data":{"object":"session","id":"g1","slot":0}}`)
	post := func(s string) (int, error) {
		return c.Post(context.Background(), webhook.Request{URL: url, Body: body, IdempotencyKey: "evt_1", Secrets: []string{s}})
	}
	var status int
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if status, err = post(secret); err == nil || status != 0 {
			break
		}
	}
	if status != http.StatusNoContent {
		t.Fatalf("signed event: %d %v (%s)", status, err, errb.String())
	}
	if status, _ := post(secret); status != http.StatusNoContent {
		t.Fatalf("retry: %d", status)
	}
	if status, _ := post(other); status != http.StatusUnauthorized {
		t.Fatalf("another secret: %d", status)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("listen ended %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "slot.signed evt_1") || !strings.Contains(lines[0], `"id":"g1"`) ||
		strings.Contains(lines[0], "(again)") || !strings.HasSuffix(lines[1], "(again)") {
		t.Fatalf("printed %q", out.String())
	}
	if !strings.Contains(errb.String(), "refused a request") || strings.Contains(errb.String()+out.String(), secret) {
		t.Fatalf("stderr %q", errb.String())
	}
}
