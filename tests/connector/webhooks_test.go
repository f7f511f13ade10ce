package connector

import (
	"context"
	"encoding/json"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/connector/cli"
	"github.com/esign-svc/esign/connector/settings"
	"github.com/esign-svc/esign/devtools/funchost"
)

// TestWebhooksCommands: webhooks add subscribes a `webhooks listen` on this machine (make run's
// WEBHOOK_ALLOW_LOOPBACK), list shows it, ping reaches the listener, which verifies and prints
// it, deliveries shows the attempt, remove ends it.
func TestWebhooksCommands(t *testing.T) {
	t.Parallel()
	set := connSettings(t, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()

	var added struct {
		ID, Secret string
	}
	if err := json.Unmarshal([]byte(ok(t, set, "webhooks", "add", "http://127.0.0.1:"+port+"/", "--event", "slot.signed", "--output", "json")), &added); err != nil || added.ID == "" {
		t.Fatalf("add: %v %+v", err, added)
	}
	if out := ok(t, set, "webhooks", "list"); !strings.Contains(out, added.ID+" active") || !strings.Contains(out, "slot.signed") {
		t.Fatalf("list: %s", out)
	}
	listenEnv := map[string]string{}
	for k, v := range set {
		listenEnv[k] = v
	}
	listenEnv[cli.KeyListenSecret] = added.Secret
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb funchost.Output // written by the listener while the test reads
	done := make(chan int)
	go func() {
		done <- cli.Run(ctx, []string{"webhooks", "listen", "--port", port}, cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
			Getenv: settings.Map(listenEnv)})
	}()
	for end := time.Now().Add(10 * time.Second); !strings.Contains(errb.String(), "listening on") && time.Now().Before(end); {
		time.Sleep(20 * time.Millisecond)
	}
	if p := ok(t, set, "webhooks", "ping", added.ID); !strings.Contains(p, "delivered 204") {
		t.Fatalf("ping: %s (listener: %s)", p, errb.String())
	}
	cancel()
	<-done
	if !strings.Contains(out.String(), "webhook.ping evt_") || !strings.Contains(out.String(), added.ID) {
		t.Fatalf("listener printed %q (stderr %q)", out.String(), errb.String())
	}
	if d := ok(t, set, "webhooks", "deliveries", added.ID); !strings.Contains(d, "webhook.ping") || !strings.Contains(d, "delivered") {
		t.Fatalf("deliveries: %s", d)
	}
	ok(t, set, "webhooks", "remove", added.ID)
	if r := svcconnect(t, set, "", false, "webhooks", "deliveries", added.ID); r.code != 1 || !strings.Contains(r.stderr, "webhook_not_found") {
		t.Fatalf("deliveries after remove: %d %s", r.code, r.stderr)
	}
}
