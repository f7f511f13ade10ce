package funcproto

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"

	"github.com/esign-svc/esign/shared/apperr"
)

// Limits on what Logf keeps for one invocation.
const (
	maxLogLines   = 200
	maxLogLineLen = 2048
)

// InvocationIDHeader is the header the host sets on every request to the handler.
const InvocationIDHeader = "X-Azure-Functions-InvocationId"

// state is one invocation's collected outputs and logs, carried in the context.
type state struct {
	req          *InvocationRequest
	invocationID string
	params       map[string]string

	mu      sync.Mutex
	outputs map[string][]json.RawMessage
	order   []string
	logs    []string
	dropped int
}

type stateKey struct{}

func withState(ctx context.Context, s *state) context.Context {
	return context.WithValue(ctx, stateKey{}, s)
}

func stateFrom(ctx context.Context) *state {
	s, _ := ctx.Value(stateKey{}).(*state)
	return s
}

func newState(r *http.Request, req *InvocationRequest) *state {
	return &state{req: req, invocationID: r.Header.Get(InvocationIDHeader), outputs: map[string][]json.RawMessage{}}
}

// AddOutput adds v to the output binding named binding of the current invocation. v must
// marshal to a JSON object (the real host decodes string outputs that look like base64);
// several calls for one binding produce an array. HTTPInvocation drops every output unless the
// handler's status is 2xx. Errors: *apperr.Error KindInternal with code "no_invocation" when ctx
// is not an invocation's (a forwarded request has no output bindings), "invalid_output" when
// the binding name is empty or "res", or v is not a JSON object.
func AddOutput(ctx context.Context, binding string, v any) error {
	s := stateFrom(ctx)
	if s == nil {
		return apperr.Wrap(errNoInvocation, apperr.KindInternal, "no_invocation", "output %q added outside an invocation", binding)
	}
	if binding == "" || strings.EqualFold(binding, "res") || strings.EqualFold(binding, "$return") {
		return apperr.New(apperr.KindInternal, "invalid_output", "output binding name %q is reserved or empty", binding)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return apperr.Wrap(err, apperr.KindInternal, "invalid_output", "output for %q does not encode", binding)
	}
	if b = bytes.TrimSpace(b); len(b) == 0 || b[0] != '{' {
		return apperr.New(apperr.KindInternal, "invalid_output", "output for %q must be a JSON object", binding)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, seen := s.outputs[binding]; !seen {
		s.order = append(s.order, binding)
	}
	s.outputs[binding] = append(s.outputs[binding], b)
	return nil
}

// Logf appends a line to the current invocation's Logs, which the host prints with the
// function name and invocation id. It does nothing outside an invocation. Lines longer than
// 2 KiB are cut and at most 200 lines are kept. Never log bodies, e-mail addresses, phone
// numbers, tokens or codes.
func Logf(ctx context.Context, format string, args ...any) {
	s := stateFrom(ctx)
	if s == nil {
		return
	}
	s.logf(format, args...)
}

func (s *state) logf(format string, args ...any) {
	line := truncate(sprintf(format, args...), maxLogLineLen)
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.logs) >= maxLogLines {
		s.dropped++
		return
	}
	s.logs = append(s.logs, line)
}

// takeLogs returns the collected lines, noting any that were dropped.
func (s *state) takeLogs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	logs := append([]string(nil), s.logs...)
	if s.dropped > 0 {
		logs = append(logs, sprintf("funcproto: %d further log lines dropped", s.dropped))
	}
	return logs
}

// takeOutputs returns the outputs as the host expects: one object, or an array of them.
func (s *state) takeOutputs() map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]any, len(s.outputs))
	for _, name := range s.order {
		vals := s.outputs[name]
		if len(vals) == 1 {
			out[name] = vals[0]
			continue
		}
		arr := make([]json.RawMessage, len(vals))
		copy(arr, vals)
		out[name] = arr
	}
	return out
}

func (s *state) outputCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, v := range s.outputs {
		n += len(v)
	}
	return n
}

// Param is the route parameter name of an invoked HTTP request (Data.req.Params), matched
// exactly or else case-insensitively; "" when absent or outside an invocation. The adapter also
// sets each parameter with SetPathValue, so r.PathValue works as well.
func Param(r *http.Request, name string) string {
	s := stateFrom(r.Context())
	if s == nil {
		return ""
	}
	if v, ok := s.params[name]; ok {
		return v
	}
	for k, v := range s.params {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

// Invocation is the decoded invocation the context belongs to, if any.
func Invocation(ctx context.Context) (*InvocationRequest, bool) {
	s := stateFrom(ctx)
	if s == nil {
		return nil, false
	}
	return s.req, true
}

// InvocationID is the host's invocation id (header X-Azure-Functions-InvocationId) of the
// context's invocation; "" outside one or when the host sent none.
func InvocationID(ctx context.Context) string {
	if s := stateFrom(ctx); s != nil {
		return s.invocationID
	}
	return ""
}
