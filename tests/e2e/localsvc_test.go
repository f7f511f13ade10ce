package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/devtools/devkeys"
	"github.com/esign-svc/esign/devtools/funchost"
	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/azure/blobstore"
	"github.com/esign-svc/esign/shared/callbacksig"
)

// TestMakeRunSendsAWorkflowCallbackToThisMachine runs the README's walk-through "A workflow's
// callback on this machine" against a service started with exactly the settings make run
// writes to .local/dev.env (devkeys.Setup, read back from the file; only the storage is this
// test's own Azurite, on free ports): /api/health is ok; a workflow created with a callbackUrl
// on a loopback listener is cancelled with the body `{}`; the listener receives one POST
// {workflowId, correlationId, state, completedAt} whose X-Esign-Signature verifies with the
// WEBHOOK_SECRETS of dev.env. Before issue 22 the create was 400 at callbackUrl (make run's env
// had no WEBHOOK_ALLOW_LOOPBACK), and without WEBHOOK_SECRETS no callback would have left.
func TestMakeRunSendsAWorkflowCallbackToThisMachine(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), ".local")
	res, err := devkeys.Setup(dir, devkeys.Options{})
	if err != nil {
		t.Fatal(err)
	}
	env, err := devkeys.ReadEnv(res.EnvFile) // what make run sources
	if err != nil {
		t.Fatal(err)
	}
	az, err := azuritetest.Launch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(az.Stop)
	settings := map[string]string{}
	for k, v := range env {
		if !strings.HasPrefix(k, "SERVICE_") { // the connector's: no app reads them
			settings[k] = v
		}
	}
	settings["STORAGE_CONNECTION_STRING"] = az.ConnectionString()
	settings["AzureWebJobsStorage"] = az.ConnectionString()
	root, err := azuritetest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	out := &funchost.Output{}
	h, err := funchost.Start(ctx, funchost.Options{
		Apps:     []string{filepath.Join(root, "dist", "dispatcher"), filepath.Join(root, "dist", "processor")},
		Listen:   "127.0.0.1:0",
		Settings: settings, HostKey: settings["HOST_KEY"], MasterKey: settings["MASTER_KEY"],
		Output: out, DisableSchedules: true,
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	t.Cleanup(func() { h.Close() })
	api := func(path string) string { return h.URL() + "/api/" + path + "?code=" + h.HostKey() }

	// The listener: what README prints as a few lines of Go, recording each POST.
	type post struct {
		header http.Header
		body   []byte
	}
	got := make(chan post, 4)
	listener := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- post{r.Header.Clone(), b}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(listener.Close)

	// Health: storage reachable, and no feature off (the processor has its webhook secret). The
	// processor records that at its start, which may follow the dispatcher's: wait for it.
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := call(t, "GET", h.URL()+"/api/health", nil, nil)
		if r.Status == http.StatusOK && r.str("status") == "ok" && r.JSON["features"] == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("health: %d %s", r.Status, r.Raw)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// A workflow package in the local storage, as `devstore put` would leave it.
	acct, err := azconn.New(azconn.Config{ConnectionString: az.ConnectionString()})
	if err != nil {
		t.Fatal(err)
	}
	blobs := blobstore.New(acct)
	if err := blobs.EnsureContainer(ctx, "templates"); err != nil {
		t.Fatal(err)
	}
	pkgDir := "shared/local/" + uuid.NewString() + "/"
	files := examplePackage(t) // examples/offer, as README's `devstore put-template examples/offer offer`
	schema, err := os.ReadFile(filepath.Join(root, "examples", "offer", "schema.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	files["schema.yaml"] = schema
	for name, b := range files {
		if _, err := blobs.Put(ctx, "templates", pkgDir+name, bytes.NewReader(b), "application/octet-stream", nil); err != nil {
			t.Fatal(err)
		}
	}
	tok, err := devkeys.MintFromDir(dir, devkeys.TokenOptions{Tenant: tenantA, Roles: []string{"Esign.Initiator"}})
	if err != nil {
		t.Fatal(err)
	}
	// README's create body, with a correlationId of this run's own and the listener's port.
	body := map[string]any{"templatePath": "templates/" + pkgDir, "correlationId": "callback-demo-" + uuid.NewString(),
		"callbackUrl": listener.URL + "/workflow-callback", // http://127.0.0.1:<port>/...
		"templateSettings": map[string]any{"workflow": map[string]any{
			"recipients": []any{map[string]any{"email": "hr@example.test", "displayName": "Harriet"}}}}}
	created := call(t, "POST", api("workflow"), body, bearer(tok))
	if created.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", created.Status, created.Raw)
	}
	id := created.str("workflowId")
	if r := call(t, "POST", api("workflow/"+id+"/cancel"), `{}`, bearer(tok)); r.Status != http.StatusOK || r.str("state") != "cancelled" {
		t.Fatalf("cancel with {}: %d %s", r.Status, r.Raw)
	}

	// The Events timer (every 15 s under make run; schedules are off here) posts the callback.
	var p post
	deadline = time.Now().Add(60 * time.Second)
wait:
	for {
		if err := h.RunTimer(ctx, "Events"); err != nil {
			t.Fatal(err)
		}
		select {
		case p = <-got:
			break wait
		case <-time.After(time.Second):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no callback reached the listener\n%s", tail(out.String(), 8000))
		}
	}
	secrets, err := callbacksig.ParseSecrets(env["WEBHOOK_SECRETS"])
	if err != nil {
		t.Fatal(err)
	}
	if err := callbacksig.Verify(p.header.Get(callbacksig.Header), p.body, time.Now(), secrets); err != nil {
		t.Fatalf("signature %q does not verify with dev.env's WEBHOOK_SECRETS: %v", p.header.Get(callbacksig.Header), err)
	}
	var cb map[string]any
	if err := json.Unmarshal(p.body, &cb); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(cb))
	for k := range cb {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"completedAt", "correlationId", "state", "workflowId"}) ||
		cb["workflowId"] != id || cb["correlationId"] != body["correlationId"] || cb["state"] != "cancelled" {
		t.Fatalf("callback body %s", p.body)
	}
	if at, err := time.Parse(time.RFC3339Nano, cb["completedAt"].(string)); err != nil || time.Since(at) > time.Minute {
		t.Fatalf("completedAt %v: %v", cb["completedAt"], err)
	}
	select {
	case again := <-got:
		t.Fatalf("a second callback: %s", again.body)
	case <-time.After(2 * time.Second):
	}
	// This host's output is not the package's: hold it to the same privacy rule.
	remember("webhook secret", env["WEBHOOK_SECRETS"])
	if leak := checkLogs(out.String()); leak != "" {
		t.Errorf("PRIVACY: %s", leak)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
