package deliveryapi

import (
	"net/http"
	"strconv"
	"time"
)

const corsMaxAge = 10 * time.Minute

// cors answers the portal origin only: the exact origin is echoed (never "*"), with
// Vary: Origin; any other origin gets no CORS headers. No credentials: the token is in the URL.
type cors struct{ origin string }

func (c cors) allowed(r *http.Request) bool {
	o := r.Header.Get("Origin")
	return c.origin != "" && o != "" && o == c.origin
}

func (c cors) preflight(methods string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Add("Vary", "Origin")
		if c.allowed(r) {
			h.Set("Access-Control-Allow-Origin", c.origin)
			h.Set("Access-Control-Allow-Methods", methods)
			h.Set("Access-Control-Allow-Headers", "Content-Type")
			h.Set("Access-Control-Max-Age", strconv.Itoa(int(corsMaxAge/time.Second)))
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

func (c cors) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Vary", "Origin")
		if c.allowed(r) {
			w.Header().Set("Access-Control-Allow-Origin", c.origin)
			w.Header().Set("Access-Control-Expose-Headers", "Retry-After, X-Correlation-Id")
		}
		next.ServeHTTP(w, r)
	})
}
