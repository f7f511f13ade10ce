package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/tests/apidoc"
)

// apiChecker validates answers against docs/openapi.yaml, loaded once.
var apiChecker = sync.OnceValues(func() (*apidoc.Checker, error) {
	root, err := azuritetest.RepoRoot()
	if err != nil {
		return nil, err
	}
	doc, err := apidoc.Load(root)
	if err != nil {
		return nil, err
	}
	return apidoc.NewChecker(doc)
})

// checkAnswer fails t when the service's answer to req is not what docs/openapi.yaml documents:
// an unknown route or method, an undocumented status or Content-Type, or a body that does not
// match the schema. A benchmark has only its first answer of each operation and status checked,
// so that validation does not weigh on the rates it measures.
func checkAnswer(t testing.TB, req *http.Request, status int, header http.Header, body []byte) {
	t.Helper()
	c, err := apiChecker()
	if err != nil {
		t.Fatalf("openapi: %v", err)
	}
	if _, bench := t.(*testing.B); bench && !firstInBenchmark(c, req, status) {
		return
	}
	if err := c.Check(req, status, header, body); err != nil {
		t.Errorf("openapi: the answer departs from the document: %v\nbody: %.2000s", err, body)
	}
}

var benchChecked sync.Map // operationId and status -> checked once in a benchmark

func firstInBenchmark(c *apidoc.Checker, req *http.Request, status int) bool {
	op, err := c.OperationID(req)
	if err != nil {
		return true // Check reports it
	}
	_, seen := benchChecked.LoadOrStore(fmt.Sprint(op, " ", status), true)
	return !seen
}

// apiCoverage lists the documented answers no test received (E2E_API_COVERAGE=<file> writes it
// there after the run).
func apiCoverage() string {
	c, err := apiChecker()
	if err != nil {
		return err.Error()
	}
	left := c.Unexercised()
	return fmt.Sprintf("e2e: %d documented answers no test received:\n  %s\n", len(left), strings.Join(left, "\n  "))
}
