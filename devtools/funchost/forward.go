package funchost

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
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
			pr.SetXForwarded() // Host and Proto; X-Forwarded-For is the front end's (appendForwardedFor)
			pr.Out.Header["X-Forwarded-For"] = pr.In.Header["X-Forwarded-For"]
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
	if r.ContentLength != 0 && r.Body != nil && r.Body != http.NoBody {
		body := &watchedBody{ReadCloser: r.Body}
		r.Body, sw.bodyUnread = body, func(code int) bool {
			if code >= 400 { // the handler refused the request: the rest of the body is nobody's
				return !body.drain(maxDrain)
			}
			return !body.done.Load() // a handler that streams may still be reading it
		}
	}
	rp.ServeHTTP(sw, r)
	d := time.Since(start).Round(time.Millisecond)
	if proxyErr != nil {
		h.log.printf("%s Executed (Failed, Duration=%s): %v", prefix, d, proxyErr)
		return
	}
	h.log.printf("%s Executed (Succeeded, Status=%d, Duration=%s)", prefix, sw.status(), d)
}

// statusWriter records the status code; Unwrap lets the proxy flush through it.
//
// Full duplex turns off net/http's own care for a body the handler left unread (drain up to
// 256 KiB, else answer with Connection: close): the server would close the connection after
// the answer without saying so, and the client's next request on it would fail. So when the
// final status is written while the request body has not been read to its end (the handler
// answered early: a 413 past its limit, a 401 before reading), the answer says Connection:
// close and net/http closes the connection after it; when the answer refuses the request (4xx,
// 5xx) the host first drains up to maxDrain of the body, and only a longer one closes.
type statusWriter struct {
	http.ResponseWriter
	code       int
	bodyUnread func(code int) bool // nil: the request had no body
}

func (s *statusWriter) WriteHeader(code int) {
	if code >= 200 && s.code == 0 {
		s.code = code
		if s.bodyUnread != nil && s.bodyUnread(code) {
			s.Header().Set("Connection", "close")
		}
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.code == 0 {
		s.WriteHeader(http.StatusOK)
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

// maxDrain is how much of a body the handler left unread the host reads and discards before
// answering, so that a client still sending it gets the answer and keeps its connection: a
// connection closed while the client writes is reset, and the reset can destroy the answer in
// flight. A longer body is not drained: the answer says Connection: close.
const maxDrain = 4 << 20

// watchedBody notes when the request body has been read to its end.
type watchedBody struct {
	io.ReadCloser
	done atomic.Bool
}

// drain reads and discards what is left of the body, at most limit bytes, and reports whether
// the body was then read to its end.
func (b *watchedBody) drain(limit int64) bool {
	if b.done.Load() {
		return true
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(b, limit))
	return b.done.Load()
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.done.Store(true)
	}
	return n, err
}
