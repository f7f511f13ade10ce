package funcproto

import (
	"net/http"
	"strings"
	"sync"

	"github.com/esign-svc/esign/shared/apperr"
)

// Router is the handler process's root http.Handler: POST /{FunctionName} goes to the
// function's invocation adapter, GET or HEAD / answers 200 (the host's readiness ping), and
// every other request (the forwarded /api/... routes) goes to the fallback handler.
type Router struct {
	mu       sync.RWMutex
	fns      map[string]http.Handler // lower-cased function name -> adapter
	fallback http.Handler
}

// NewRouter makes a Router passing non-invocation requests to fallback; with a nil fallback
// they are answered 404 problem+json.
func NewRouter(fallback http.Handler) *Router {
	return &Router{fns: map[string]http.Handler{}, fallback: fallback}
}

// Handle registers the invocation adapter of the function whose folder is functionName
// (matched case-insensitively). Like http.ServeMux it panics on a programming error at
// start-up: an empty name, one containing "/", the name "api", a nil handler, or a name
// registered twice.
func (rt *Router) Handle(functionName string, h http.Handler) {
	key := strings.ToLower(functionName)
	if key == "" || strings.Contains(key, "/") || key == "api" || h == nil {
		panic("funcproto: Router.Handle: invalid function " + functionName)
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if _, dup := rt.fns[key]; dup {
		panic("funcproto: Router.Handle: function registered twice: " + functionName)
	}
	rt.fns[key] = h
}

// ServeHTTP routes one request as described on Router.
func (rt *Router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	if path == "/" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodGet {
			_, _ = w.Write([]byte(`{"status":"ready"}` + "\n"))
		}
		return
	}
	if name, ok := strings.CutPrefix(path, "/"); ok && name != "" && !strings.Contains(name, "/") {
		rt.mu.RLock()
		h := rt.fns[strings.ToLower(name)]
		rt.mu.RUnlock()
		if h != nil {
			h.ServeHTTP(w, r)
			return
		}
	}
	if rt.fallback == nil {
		apperr.WriteProblem(w, r.Header.Get("X-Correlation-Id"), apperr.ErrNotFound)
		return
	}
	rt.fallback.ServeHTTP(w, r)
}
