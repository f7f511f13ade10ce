package funchost

import (
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"time"
)

// forward proxies the request unchanged (method, /api/... path, query, headers, streamed body)
// to the handler and streams its reply back. Bodies are never buffered: Content-Length is kept
// when the client sent one, chunked otherwise, and the reply is flushed as it arrives.
func (h *Host) forward(w http.ResponseWriter, r *http.Request, f *function) {
	id := newGUID()
	prefix := fmt.Sprintf("[fn=%s id=%s]", f.name, id)
	start := time.Now()
	// The route template, not the path: paths may carry tokens.
	h.log.printf("%s Executing (HTTP %s %s, forwarded)", prefix, r.Method, f.route.template)
	proc := f.app.proc.Load()
	if proc == nil { // being restarted (RestartHandler)
		h.log.printf("%s Executed (Failed): app %s has no running handler", prefix, f.app.name)
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	target, _ := url.Parse(proc.baseURL())
	var proxyErr error
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = pr.In.Host
			pr.SetXForwarded()
			pr.Out.Header.Set("X-Azure-Functions-InvocationId", id)
		},
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			proxyErr = err
			w.WriteHeader(http.StatusInternalServerError)
		},
	}
	// The handler may answer while the request body is still arriving (an echo, say): let the
	// client's body be read after the response has started.
	_ = http.NewResponseController(w).EnableFullDuplex()
	sw := &statusWriter{ResponseWriter: w}
	rp.ServeHTTP(sw, r)
	d := time.Since(start).Round(time.Millisecond)
	if proxyErr != nil {
		h.log.printf("%s Executed (Failed, Duration=%s): %v", prefix, d, proxyErr)
		return
	}
	h.log.printf("%s Executed (Succeeded, Status=%d, Duration=%s)", prefix, sw.status(), d)
}

// statusWriter records the status code; Unwrap lets the proxy flush through it.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.code == 0 {
		s.code = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.code == 0 {
		s.code = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func (s *statusWriter) status() int {
	if s.code == 0 {
		return http.StatusOK
	}
	return s.code
}
