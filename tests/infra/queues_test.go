package infra

import (
	"strings"
	"testing"
)

// TestBicepCreatesEveryQueueTheAppsUse reads every queue name in the apps' function.json files
// (triggers and outputs) and checks main.bicep creates it and its poison queue: a queue the
// Bicep does not create would be made by the host at first use, outside the template's control.
func TestBicepCreatesEveryQueueTheAppsUse(t *testing.T) {
	declared := created(t, readTemplate(t), typeQueue)
	if len(declared) == 0 {
		t.Fatal("main.bicep declares no queue list")
	}
	for _, app := range []string{"dispatcher", "processor"} {
		for _, used := range functionQueues(t, app) {
			base := strings.TrimSuffix(used, "-poison")
			for _, q := range []string{base, base + "-poison"} {
				if !declared[q] {
					t.Errorf("%s's functions use queue %q: main.bicep does not create %q", app, used, q)
				}
			}
		}
	}
}
