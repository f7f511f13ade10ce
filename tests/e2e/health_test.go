package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/esign-svc/esign/dispatcher/app"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
)

func TestHealthThroughTheLocalHost(t *testing.T) {
	t.Parallel()
	resp := call(t, "GET", svc.host.URL()+"/api/health", nil, nil) // anonymous: no code
	var rep struct {
		Status        string
		EngineVersion string
		Storage       map[string]struct{ Reachable bool }
	}
	if err := json.Unmarshal(resp.Raw, &rep); err != nil {
		t.Fatal(err)
	}
	if resp.Status != http.StatusOK || rep.Status != "ok" || rep.EngineVersion == "" || rep.EngineVersion == "dev" {
		t.Fatalf("health %d %+v", resp.Status, rep)
	}
	for _, s := range []string{"blob", "table", "queue"} {
		if !rep.Storage[s].Reachable {
			t.Errorf("%s not reachable: %+v", s, rep.Storage)
		}
	}
	if resp.Header.Get("X-Correlation-Id") == "" {
		t.Error("no X-Correlation-Id")
	}
}

// TestPackagedFunctionsMatchTheApps checks what make package wrote against what the handlers
// serve: every folder has a function.json; the dispatcher's invoked functions are exactly those
// whose bindings go beyond the HTTP trigger and output, and the handler is a static binary.
func TestPackagedFunctionsMatchTheApps(t *testing.T) {
	t.Parallel()
	root, err := azuritetest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dist := filepath.Join(root, "dist", "dispatcher")
	entries, err := os.ReadDir(dist)
	if err != nil {
		t.Fatal(err)
	}
	var invoked []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dist, e.Name(), "function.json"))
		if err != nil {
			t.Fatal(err)
		}
		var fj struct{ Bindings []struct{ Type string } }
		if err := json.Unmarshal(b, &fj); err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		for _, b := range fj.Bindings {
			if b.Type != "httpTrigger" && b.Type != "http" {
				invoked = append(invoked, e.Name())
				break
			}
		}
	}
	want := app.InvokedFunctions()
	sort.Strings(want)
	sort.Strings(invoked)
	if strings.Join(invoked, ",") != strings.Join(want, ",") {
		t.Fatalf("function.json files with queue bindings %v, app.InvokedFunctions %v", invoked, want)
	}
	for _, a := range []string{"dispatcher", "processor"} {
		b, err := os.ReadFile(filepath.Join(root, "dist", a, "handler"))
		if err != nil {
			t.Fatal(err)
		}
		if len(b) < 4 || string(b[1:4]) != "ELF" || strings.Contains(string(b), "ld-linux") {
			t.Errorf("%s handler is not a static ELF binary", a)
		}
		if _, err := os.Stat(filepath.Join(root, "dist", a+".zip")); err != nil {
			t.Errorf("%s.zip: %v", a, err)
		}
	}
}
