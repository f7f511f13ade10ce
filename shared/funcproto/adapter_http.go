package funcproto

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"runtime/debug"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/esign-svc/esign/shared/apperr"
)

// HTTPBinding and ResponseBinding are the binding names this project's function.json files use
// for the HTTP trigger and the HTTP output.
const (
	HTTPBinding     = "req"
	ResponseBinding = "res"
)

// HTTPInvocation adapts an ordinary http.Handler to an invoked HTTP trigger (one with output
// bindings besides res). For each invocation POST it decodes Data.req, rebuilds the
// *http.Request (method, URL with path /api/..., query, headers, body, route parameters via
// Param and r.PathValue), runs h with a recording ResponseWriter and answers the host 200 with
// Outputs.res holding h's status, headers and body. Queue outputs added with AddOutput are
// kept only when h's status is 2xx. A payload that does not decode becomes res 400
// problem+json (code invalid_invocation); a panic in h becomes res 500 problem+json and a Logs
// line; a binary (non UTF-8) reply becomes res 500, since the http output carries text. The
// reply to the host is always JSON.
func HTTPInvocation(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			writeInvocationResponse(w, http.StatusMethodNotAllowed, &InvocationResponse{
				Logs: []string{"funcproto: invocations are POSTed; got " + truncate(r.Method, 16)}})
			return
		}
		inv, err := readInvocation(r.Body, r.ContentLength)
		st := newState(r, inv)
		var req *http.Request
		if err == nil {
			req, err = rebuildRequest(r.Context(), st, inv)
		}
		if err != nil {
			st.logf("funcproto: invocation not decoded: %s", errorSummary(err))
			rec := newRecorder()
			apperr.WriteProblem(rec, r.Header.Get("X-Correlation-Id"), err)
			writeInvocationResponse(w, http.StatusOK, &InvocationResponse{
				Outputs: map[string]any{ResponseBinding: responseData(rec)},
				Logs:    st.takeLogs(),
			})
			return
		}
		rec := newRecorder()
		if !serveRecovered(st, h, rec, req) {
			rec = newRecorder()
			apperr.WriteProblem(rec, req.Header.Get("X-Correlation-Id"), apperr.New(apperr.KindInternal, apperr.CodeInternal, "handler panicked"))
		}
		if !utf8.Valid(rec.body.Bytes()) {
			st.logf("funcproto: the handler wrote %d bytes that are not UTF-8 text; binary replies need a forwarded route", rec.body.Len())
			rec = newRecorder()
			apperr.WriteProblem(rec, req.Header.Get("X-Correlation-Id"), apperr.New(apperr.KindInternal, apperr.CodeInternal, "binary reply"))
		}
		res := responseData(rec)
		outputs := map[string]any{}
		if res.StatusCode >= 200 && res.StatusCode < 300 {
			outputs = st.takeOutputs()
		} else if n := st.outputCount(); n > 0 {
			st.logf("funcproto: %d output(s) dropped: status %d", n, res.StatusCode)
		}
		outputs[ResponseBinding] = res
		writeInvocationResponse(w, http.StatusOK, &InvocationResponse{Outputs: outputs, Logs: st.takeLogs()})
	})
}

// rebuildRequest turns Data.req into the request the app's handler sees.
func rebuildRequest(parent context.Context, st *state, inv *InvocationRequest) (*http.Request, error) {
	d, err := inv.httpRequest(HTTPBinding, true) // the payload is this invocation's own
	if err != nil {
		return nil, err
	}
	if d.Method == "" {
		d.Method = http.MethodGet
	}
	if !validMethod(d.Method) {
		return nil, invalid("Data.req.Method", "is not an HTTP method")
	}
	u, err := url.Parse(d.URL)
	if err != nil || d.URL == "" {
		return nil, invalid("Data.req.Url", "is not a URL")
	}
	if u.Path == "" {
		u.Path = "/"
	}
	if u.RawQuery == "" && len(d.Query) > 0 {
		u.RawQuery = d.Query.Encode()
	}
	st.params = d.Params
	ctx := withState(parent, st)
	req, err := http.NewRequestWithContext(ctx, d.Method, u.String(), &bodyReader{d.Body})
	if err != nil {
		return nil, invalid("Data.req.Url", "is not a URL")
	}
	req.Header = d.Headers
	req.Host = u.Host
	if h := d.Headers.Get("Host"); h != "" {
		req.Host = h
	}
	req.ContentLength = int64(len(d.Body))
	req.Header.Del("Content-Length")
	if len(d.Body) > 0 {
		req.Header.Set("Content-Length", strconv.Itoa(len(d.Body)))
	}
	req.RequestURI = u.RequestURI()
	req.RemoteAddr = "127.0.0.1:0"
	for k, v := range d.Params {
		req.SetPathValue(k, v)
	}
	return req, nil
}

// bodyReader is a rebuilt request's body: it lets go of the bytes once it has given them all,
// so that a handler that reads its body into a buffer of its own does not keep the
// invocation's copy as well while it runs, and it hands them over whole to a reader that
// takes them so (web.ReadBody: TakeBytes), with no copy at all.
type bodyReader struct{ b []byte }

// TakeBytes returns the bytes not yet read and leaves the body empty.
func (r *bodyReader) TakeBytes() []byte {
	b := r.b
	r.b = nil
	return b
}

// Close lets go of the bytes not yet read.
func (r *bodyReader) Close() error {
	r.b = nil
	return nil
}

func (r *bodyReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		r.b = nil
		return 0, io.EOF
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	if len(r.b) == 0 {
		r.b = nil
	}
	return n, nil
}

func validMethod(m string) bool {
	if m == "" || len(m) > 32 {
		return false
	}
	for _, c := range m {
		if c < 'A' || c > 'Z' {
			return false
		}
	}
	return true
}

// serveRecovered runs h, reporting false if it panicked (the panic is logged).
func serveRecovered(st *state, h http.Handler, w http.ResponseWriter, r *http.Request) (ok bool) {
	defer func() {
		if p := recover(); p != nil {
			ok = false
			st.logf("funcproto: handler panicked: %s", panicSummary(p))
		}
	}()
	h.ServeHTTP(w, r)
	return true
}

// panicSummary is the panic value's type and first frames: enough to find the bug, without
// echoing long values that might carry request data.
func panicSummary(p any) string {
	var msg string
	switch v := p.(type) {
	case error:
		msg = v.Error()
	case string:
		msg = v
	default:
		msg = fmt.Sprintf("%T", p)
	}
	frames := stackFrames(string(debug.Stack()), 3)
	return truncate(msg, 200) + " at " + strings.Join(frames, " < ")
}

// stackFrames picks the first n function names below the panic machinery.
func stackFrames(stack string, n int) []string {
	lines := strings.Split(stack, "\n")
	var out []string
	afterPanic := false
	for i := 0; i+1 < len(lines) && len(out) < n; i++ {
		l := lines[i]
		if strings.HasPrefix(l, "panic(") {
			afterPanic = true
			i++
			continue
		}
		if !afterPanic || strings.HasPrefix(l, "\t") || l == "" {
			continue
		}
		fn := l
		if j := strings.LastIndex(fn, "("); j > 0 {
			fn = fn[:j]
		}
		loc := strings.TrimSpace(lines[i+1])
		if j := strings.LastIndex(loc, " +"); j > 0 {
			loc = loc[:j]
		}
		if j := strings.LastIndex(loc, "/"); j >= 0 {
			loc = loc[j+1:]
		}
		out = append(out, fn+" ("+loc+")")
		i++
	}
	return out
}

// errorSummary is what goes into Logs for an error: its code for domain errors, else its text.
func errorSummary(err error) string {
	if e, ok := apperr.As(err); ok {
		if len(e.Fields) > 0 {
			return e.Code + " (" + e.Fields[0].Field + ": " + e.Fields[0].Message + ")"
		}
		return e.Code
	}
	return truncate(err.Error(), 300)
}

func responseData(rec *recorder) *HTTPResponseData {
	return &HTTPResponseData{StatusCode: rec.statusCode(), Headers: flatHeaders(rec.header), Body: rec.body.String()}
}
