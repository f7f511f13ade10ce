// Package apidoc loads docs/openapi.yaml, the dispatcher's API document, and checks answers
// against it: the end-to-end tests validate every answer they receive with Checker.
package apidoc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// Path is the document's path from the repository root.
var Path = filepath.Join("docs", "openapi.yaml")

// EmptyFromHost is the extension of a response the Functions host may give itself with no body
// and no Content-Type (401 for a missing host key, 413 past its invocation limit).
const EmptyFromHost = "x-empty-body-from-host"

// Load reads and validates the document under the repository root (its examples included).
func Load(root string) (*openapi3.T, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromFile(filepath.Join(root, Path))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Path, err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		return nil, fmt.Errorf("%s is not valid OpenAPI: %w", Path, err)
	}
	return doc, nil
}

// Checker validates answers against the document. Each check compiles the schemas it uses
// (openapi3 keeps no compiled schema): about 2.5 ms of CPU for a problem answer.
type Checker struct {
	doc    *openapi3.T
	router routers.Router
	seen   sync.Map // "operationId status" of every answer Check was given
}

// checkedBase is where Checker finds the document's paths, whatever its servers say: each
// request is looked up there, with its own host set aside (tests may start hosts of their own).
const checkedBase = "http://service"

// NewChecker checks answers of a service serving doc's paths under "/api" (the Functions
// host's prefix), on any host.
func NewChecker(doc *openapi3.T) (*Checker, error) {
	doc.Servers = openapi3.Servers{{URL: checkedBase + "/api"}}
	r, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, err
	}
	return &Checker{doc: doc, router: r}, nil
}

// Unexercised lists, sorted, the documented answers ("operationId status") that Check has not
// been given so far: what the tests leave unchecked.
func (c *Checker) Unexercised() []string {
	var out []string
	for _, item := range c.doc.Paths.Map() {
		for _, op := range item.Operations() {
			for status := range op.Responses.Map() {
				key := op.OperationID + " " + status
				if _, ok := c.seen.Load(key); !ok && op.OperationID != "" {
					out = append(out, key)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// OperationID is the id of the document's operation that req calls.
func (c *Checker) OperationID(req *http.Request) (string, error) {
	route, _, err := c.router.FindRoute(onBase(req))
	if err != nil {
		return "", fmt.Errorf("%s %s is not in %s: %w", req.Method, req.URL.Path, Path, err)
	}
	return route.Operation.OperationID, nil
}

// Check reports how the answer (status, header, body) to req departs from the document: a
// route or method it does not have, a status it does not list, a Content-Type it does not list
// for that status, a body that does not match the schema, a required header missing. An empty
// answer without Content-Type passes only where the document has no body or marks the response
// EmptyFromHost; the answer to HEAD is checked for its status and Content-Type.
func (c *Checker) Check(req *http.Request, status int, header http.Header, body []byte) error {
	req = onBase(req)
	route, params, err := c.router.FindRoute(req)
	if err != nil {
		return fmt.Errorf("%s %s is not in %s: %w", req.Method, req.URL.Path, Path, err)
	}
	c.seen.Store(fmt.Sprint(route.Operation.OperationID, " ", status), true)
	ref := route.Operation.Responses.Status(status)
	if ref == nil || ref.Value == nil {
		return fmt.Errorf("%s %s: status %d is not documented", req.Method, route.Path, status)
	}
	resp, ct := ref.Value, header.Get("Content-Type")
	if len(body) == 0 && ct == "" {
		if len(resp.Content) == 0 || resp.Extensions[EmptyFromHost] == true {
			return nil
		}
		return fmt.Errorf("%s %s: %d with an empty body, where the document has one", req.Method, route.Path, status)
	}
	if len(resp.Content) == 0 {
		return fmt.Errorf("%s %s: %d with a body (%q), where the document has none", req.Method, route.Path, status, ct)
	}
	if req.Method == http.MethodHead { // no body to check; openapi3filter skips HEAD altogether
		if resp.Content.Get(ct) == nil {
			return fmt.Errorf("%s %s: %d with Content-Type %q, not documented", req.Method, route.Path, status, ct)
		}
		return nil
	}
	err = openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 status,
		Header:                 header,
		Body:                   io.NopCloser(bytes.NewReader(body)),
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	})
	if err != nil {
		return fmt.Errorf("%s %s: %d: %s", req.Method, route.Path, status, headlines(err))
	}
	return nil
}

// onBase is req with its URL on checkedBase.
func onBase(req *http.Request) *http.Request {
	base, _ := url.Parse(checkedBase)
	r := req.Clone(context.Background())
	r.URL.Scheme, r.URL.Host, r.Host = base.Scheme, base.Host, base.Host
	return r
}

// headlines is err's message without the schema and value dumps openapi3 appends to each
// schema error (its indented lines and their "Schema:" and "Value:" labels).
func headlines(err error) string {
	var keep []string
	for _, l := range strings.Split(err.Error(), "\n") {
		if l == "" || l == "Schema:" || l == "Value:" || strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t") {
			continue
		}
		keep = append(keep, l)
	}
	return strings.Join(keep, "; ")
}

// ErrNoRoute is returned by Operation for a method and path the document lacks.
var ErrNoRoute = errors.New("not documented")

// Operation is doc's operation for method on path (a path template such as
// "/esign/session/{groupId}/cancel").
func Operation(doc *openapi3.T, method, path string) (*openapi3.Operation, error) {
	item := doc.Paths.Value(path)
	if item == nil {
		return nil, fmt.Errorf("path %s: %w", path, ErrNoRoute)
	}
	op := item.GetOperation(method)
	if op == nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, ErrNoRoute)
	}
	return op, nil
}
