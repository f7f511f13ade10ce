package apidoc

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/esign-svc/esign/shared/azure/azuritetest"
)

// httpTrigger is the part of a function.json this test reads.
type httpTrigger struct {
	Bindings []struct {
		Type      string   `json:"type"`
		AuthLevel string   `json:"authLevel"`
		Methods   []string `json:"methods"`
		Route     string   `json:"route"`
	} `json:"bindings"`
}

// TestDocumentCoversEveryFunction: the document parses and is valid OpenAPI (examples
// included); every method and route of every HTTP function of the dispatcher is in it, with the
// host key among its security requirements exactly when the function's authLevel needs one;
// and the document has no operation that no function serves.
func TestDocumentCoversEveryFunction(t *testing.T) {
	root, doc := loadDoc(t)
	dirs, err := filepath.Glob(filepath.Join(root, "dispatcher", "functions", "*", "function.json"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no function.json found: %v", err)
	}
	served := map[string]bool{}
	for _, f := range dirs {
		name := filepath.Base(filepath.Dir(f))
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var fn httpTrigger
		if err := json.Unmarshal(raw, &fn); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, b := range fn.Bindings {
			if b.Type != "httpTrigger" {
				continue
			}
			path := "/" + b.Route
			for _, m := range b.Methods {
				m = strings.ToUpper(m)
				served[m+" "+path] = true
				op, err := Operation(doc, m, path)
				if err != nil {
					t.Errorf("%s: %v", name, err)
					continue
				}
				if m == "OPTIONS" {
					continue // preflights carry no auth
				}
				if want, got := b.AuthLevel != "anonymous", needsHostKey(op.Security); want != got {
					t.Errorf("%s %s (%s): authLevel %s, but the document's hostKey requirement is %v", m, path, name, b.AuthLevel, got)
				}
				if m != "HEAD" && op.OperationID != name {
					t.Errorf("%s %s: operationId %q, want the function's name %q", m, path, op.OperationID, name)
				}
			}
		}
	}
	for path, item := range doc.Paths.Map() {
		for m := range item.Operations() {
			if !served[m+" "+path] {
				t.Errorf("the document has %s %s, which no function serves", m, path)
			}
		}
	}
}

func needsHostKey(reqs *openapi3.SecurityRequirements) bool {
	if reqs == nil {
		return false
	}
	for _, r := range *reqs {
		if _, ok := r["hostKey"]; ok {
			return true
		}
	}
	return false
}

// loadDoc is the repository root and its document, loaded and validated.
func loadDoc(t *testing.T) (string, *openapi3.T) {
	t.Helper()
	root, err := azuritetest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	return root, doc
}
