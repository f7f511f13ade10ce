package logging

import (
	"net/http"
	"time"

	"github.com/rs/zerolog"
)

// HTTPHeaderCorrelation is answered on every response and accepted from callers.
const HTTPHeaderCorrelation = "X-Correlation-Id"

// Middleware puts the base logger and a correlation id into each request's context, answers the
// id in X-Correlation-Id, and writes one access line: method, route pattern (never the raw path
// or query), status, bytes and duration. The invocation id comes from the Functions host header
// when present.
func Middleware(logger zerolog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		corr := SafeCorrelationID(r.Header.Get(HTTPHeaderCorrelation))
		inv := r.Header.Get("X-Azure-Functions-InvocationId")
		ctx := WithIDs(With(r.Context(), logger), inv, corr)
		w.Header().Set(HTTPHeaderCorrelation, corr)
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		req := r.WithContext(ctx)
		next.ServeHTTP(rec, req)
		route := req.Pattern
		if route == "" {
			route = "unmatched"
		}
		ev := From(ctx).Info()
		if rec.status >= 500 {
			ev = From(ctx).Error()
		}
		ev.Str("method", r.Method).Str("route", route).Int("status", rec.status).
			Int64("bytes", rec.bytes).Dur("elapsed", time.Since(start)).Msg("http")
	})
}

type statusRecorder struct {
	http.ResponseWriter
	status  int
	bytes   int64
	written bool
}

func (s *statusRecorder) WriteHeader(code int) {
	if !s.written {
		s.status, s.written = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	s.written = true
	n, err := s.ResponseWriter.Write(b)
	s.bytes += int64(n)
	return n, err
}

// Flush lets streaming handlers (the document proxy) flush through the recorder.
func (s *statusRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }
