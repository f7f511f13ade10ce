package funcproto

import (
	"bytes"
	"net/http"
	"sort"
	"strings"
)

// recorder is the ResponseWriter an invoked handler writes to.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func newRecorder() *recorder { return &recorder{header: http.Header{}} }

func (rec *recorder) Header() http.Header { return rec.header }

func (rec *recorder) WriteHeader(status int) {
	if rec.status != 0 || status < 100 || status > 999 {
		return
	}
	if status < 200 { // informational replies cannot pass through an invocation
		return
	}
	rec.status = status
}

func (rec *recorder) Write(p []byte) (int, error) {
	if rec.status == 0 {
		rec.WriteHeader(http.StatusOK)
	}
	return rec.body.Write(p)
}

// Flush is accepted and ignored: an invocation reply is sent whole.
func (rec *recorder) Flush() {}

func (rec *recorder) statusCode() int {
	if rec.status == 0 {
		return http.StatusOK
	}
	return rec.status
}

// flatHeaders joins multiple values with ", " (the http output binding takes one string per
// header); Set-Cookie keeps only its first value because cookies cannot be comma-joined.
func flatHeaders(h http.Header) map[string]string {
	out := make(map[string]string, len(h))
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		vals := h[k]
		if len(vals) == 0 {
			continue
		}
		if http.CanonicalHeaderKey(k) == "Set-Cookie" {
			out[k] = vals[0]
			continue
		}
		out[k] = strings.Join(vals, ", ")
	}
	return out
}
