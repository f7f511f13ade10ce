package funchost

import (
	"crypto/subtle"
	"net/http"
	"sort"
	"strings"
)

// ServeHTTP is the front end: /admin/... for the admin API, otherwise the HTTP functions.
// It answers 404 when no route matches, 405 (with Allow) when a route matches but not the
// method, and 401 with an empty body when the function's authLevel needs a key that is missing
// or wrong.
func (h *Host) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if p := strings.ToLower(r.URL.Path); p == "/admin" || strings.HasPrefix(p, "/admin/") {
		h.serveAdmin(w, r)
		return
	}
	f, vals, allow := h.route(r)
	if f == nil {
		if len(allow) > 0 {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		http.NotFound(w, r)
		return
	}
	if !h.authorized(r, f.authLevel) {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	appendForwardedFor(r)
	if f.forward {
		h.forward(w, r, f)
		return
	}
	h.invokeHTTP(w, r, f, vals)
}

// appendForwardedFor does what the platform's front end does to a request for an HTTP function
// (forwarded or invoked): it appends the address and port the client connected from to the
// X-Forwarded-For the client sent (its header lines joined into one), so the rightmost entry is
// the one the client cannot choose.
func appendForwardedFor(r *http.Request) {
	xff := r.RemoteAddr
	if sent := r.Header.Values("X-Forwarded-For"); len(sent) > 0 {
		xff = strings.Join(sent, ", ") + ", " + xff
	}
	r.Header.Set("X-Forwarded-For", xff)
}

// route picks the HTTP function for the request. When routes match the path but none allows
// the method, allow lists the methods that would.
func (h *Host) route(r *http.Request) (*function, map[string]string, []string) {
	path := strings.TrimPrefix(r.URL.EscapedPath(), "/")
	var best *function
	var bestVals map[string]string
	allowSet := map[string]bool{}
	for _, f := range h.fns {
		if f.kind != triggerHTTP {
			continue
		}
		vals, ok := f.route.match(path)
		if !ok {
			continue
		}
		if len(f.methods) > 0 && !f.methods[strings.ToUpper(r.Method)] {
			for m := range f.methods {
				allowSet[m] = true
			}
			continue
		}
		if best == nil || f.route.precedence() < best.route.precedence() {
			best, bestVals = f, vals
		}
	}
	if best != nil {
		return best, bestVals, nil
	}
	allow := make([]string, 0, len(allowSet))
	for m := range allowSet {
		allow = append(allow, m)
	}
	sort.Strings(allow)
	return nil, nil, allow
}

// authorized checks the key in ?code= or x-functions-key against the function's authLevel:
// anonymous needs none, function accepts the host key or the master key, admin only the master
// key. Comparisons are constant-time.
func (h *Host) authorized(r *http.Request, level string) bool {
	if level == "anonymous" {
		return true
	}
	key := r.Header.Get("x-functions-key")
	if key == "" {
		key = r.URL.Query().Get("code")
	}
	if key == "" {
		return false
	}
	if sameKey(key, h.opts.MasterKey) {
		return true
	}
	return level == "function" && sameKey(key, h.opts.HostKey)
}

func sameKey(got, want string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}
