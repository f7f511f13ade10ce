package portal

import (
	"net/http"
	"strconv"
	"time"
)

// corsMaxAge is how long a browser may cache a preflight answer.
const corsMaxAge = 10 * time.Minute

// cors answers the portal origin only: the exact origin is echoed (never "*"), with
// Vary: Origin; any other origin gets no CORS headers, so its browser refuses the answer.
// No credentials are allowed: the portal sends its token in the Authorization header.
type cors struct{ origin string }

func (c cors) allowed(r *http.Request) bool {
	o := r.Header.Get("Origin")
	return c.origin != "" && o != "" && o == c.origin
}

// preflight answers OPTIONS: 204 with the allowed methods and headers for the portal origin,
// 204 without CORS headers for anyone else.
func (c cors) preflight(methods string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Add("Vary", "Origin")
		h.Add("Vary", "Access-Control-Request-Method")
		h.Add("Vary", "Access-Control-Request-Headers")
		if c.allowed(r) {
			h.Set("Access-Control-Allow-Origin", c.origin)
			h.Set("Access-Control-Allow-Methods", methods)
			h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type")
			h.Set("Access-Control-Max-Age", strconv.Itoa(int(corsMaxAge/time.Second)))
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// wrap adds Access-Control-Allow-Origin (and the headers the portal may read) to actual
// responses when the request comes from the portal origin.
func (c cors) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Vary", "Origin")
		if c.allowed(r) {
			w.Header().Set("Access-Control-Allow-Origin", c.origin)
			w.Header().Set("Access-Control-Expose-Headers", "Content-Disposition, Content-Length, ETag, X-Correlation-Id")
		}
		next.ServeHTTP(w, r)
	})
}
