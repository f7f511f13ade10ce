package infra

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBicepCreatesEveryQueueTheAppsUse reads every queue name in the apps' function.json files
// (triggers and outputs) and checks main.bicep creates it and its poison queue: a queue the
// Bicep does not create would be made by the host at first use, outside the template's control.
func TestBicepCreatesEveryQueueTheAppsUse(t *testing.T) {
	declared := created(t, readTemplate(t), "Microsoft.Storage/storageAccounts/queueServices/queues")
	if len(declared) == 0 {
		t.Fatal("main.bicep declares no queue list")
	}
	files, err := filepath.Glob(filepath.Join("..", "..", "*", "functions", "*", "function.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no function.json files (%v)", err)
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var fn struct {
			Bindings []struct {
				Type      string `json:"type"`
				QueueName string `json:"queueName"`
			} `json:"bindings"`
		}
		if err := json.Unmarshal(raw, &fn); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, b := range fn.Bindings {
			if b.QueueName == "" {
				continue
			}
			base := strings.TrimSuffix(b.QueueName, "-poison")
			for _, q := range []string{base, base + "-poison"} {
				if !declared[q] {
					t.Errorf("%s uses queue %q: main.bicep does not create %q", f, b.QueueName, q)
				}
			}
		}
	}
}
