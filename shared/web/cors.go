package web

import (
	"net/http"
	"strconv"
	"time"
)

// CORSMaxAge is how long a browser may cache a preflight answer.
const CORSMaxAge = 10 * time.Minute

// CORS answers one origin only (the portal's): the exact origin is echoed (never "*"), with
// Vary: Origin; any other origin gets no CORS headers, so its browser refuses the answer. No
// credentials are allowed: callers carry their token in a header or the URL.
type CORS struct {
	Origin        string
	AllowHeaders  string // request headers a preflight allows, e.g. "Authorization, Content-Type"
	ExposeHeaders string // response headers the page may read
}

func (c CORS) allowed(r *http.Request) bool {
	o := r.Header.Get("Origin")
	return c.Origin != "" && o != "" && o == c.Origin
}

// Preflight answers OPTIONS: 204 with the allowed methods and headers for the origin, 204
// without CORS headers for anyone else.
func (c CORS) Preflight(methods string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Add("Vary", "Origin")
		h.Add("Vary", "Access-Control-Request-Method")
		h.Add("Vary", "Access-Control-Request-Headers")
		if c.allowed(r) {
			h.Set("Access-Control-Allow-Origin", c.Origin)
			h.Set("Access-Control-Allow-Methods", methods)
			h.Set("Access-Control-Allow-Headers", c.AllowHeaders)
			h.Set("Access-Control-Max-Age", strconv.Itoa(int(CORSMaxAge/time.Second)))
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// Wrap adds Access-Control-Allow-Origin (and the exposed headers) to actual responses when the
// request comes from the origin.
func (c CORS) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Vary", "Origin")
		if c.allowed(r) {
			w.Header().Set("Access-Control-Allow-Origin", c.Origin)
			if c.ExposeHeaders != "" {
				w.Header().Set("Access-Control-Expose-Headers", c.ExposeHeaders)
			}
		}
		next.ServeHTTP(w, r)
	})
}
