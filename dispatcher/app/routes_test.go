package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestInvokedFunctionsAreTheFoldersWithQueueBindings keeps InvokedFunctions equal to the
// function folders whose function.json has a binding besides the HTTP trigger and output (the
// e2e health test checks the packaged app the same way).
func TestInvokedFunctionsAreTheFoldersWithQueueBindings(t *testing.T) {
	t.Parallel()
	dirs, err := filepath.Glob(filepath.Join("..", "functions", "*", "function.json"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("function folders: %v (%d)", err, len(dirs))
	}
	var want []string
	for _, p := range dirs {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var fj struct{ Bindings []struct{ Type string } }
		if err := json.Unmarshal(b, &fj); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for _, b := range fj.Bindings {
			if b.Type != "httpTrigger" && b.Type != "http" {
				want = append(want, filepath.Base(filepath.Dir(p)))
				break
			}
		}
	}
	got := InvokedFunctions()
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("InvokedFunctions %v, folders with queue bindings %v", got, want)
	}
	if len(slices.Compact(slices.Clone(got))) != len(got) {
		t.Fatalf("a function is listed twice: %v", got)
	}
}
