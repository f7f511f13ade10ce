package apperr

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// Problem is the RFC 9457 body the service answers errors with.
type Problem struct {
	Type   string       `json:"type"`
	Title  string       `json:"title"`
	Status int          `json:"status"`
	Detail string       `json:"detail,omitempty"`
	Code   string       `json:"code"`
	Errors []FieldError `json:"errors,omitempty"`
	// RequestID is this request's id: the X-Correlation-Id the caller sent (when a plain token)
	// or one made for it, answered in that header too and logged as requestId. It is not a
	// session's or delivery's correlationId.
	RequestID string         `json:"requestId,omitempty"`
	Extra     map[string]any `json:"-"`
}

// MarshalJSON flattens Extra into the object (RFC 9457 extension members).
func (p Problem) MarshalJSON() ([]byte, error) {
	type plain Problem
	b, err := json.Marshal(plain(p))
	if err != nil || len(p.Extra) == 0 {
		return b, err
	}
	m := map[string]any{}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for k, v := range p.Extra {
		if _, taken := m[k]; !taken {
			m[k] = v
		}
	}
	return json.Marshal(m)
}

// ProblemFor turns any error into the problem to answer. Internal errors get a generic detail:
// their cause is for the log, never for the caller.
func ProblemFor(err error) Problem {
	e, ok := As(err)
	if !ok || e.Kind == KindInternal {
		return Problem{Type: "about:blank", Title: http.StatusText(500), Status: 500,
			Detail: "an internal error occurred; it has been logged", Code: CodeInternal}
	}
	status := e.Kind.Status()
	return Problem{
		Type:   "https://esign.invalid/problems/" + e.Code,
		Title:  http.StatusText(status),
		Status: status,
		Detail: e.Detail,
		Code:   e.Code,
		Errors: e.Fields,
		Extra:  e.Extra,
	}
}

// WriteProblem writes err as application/problem+json. It reports whether err was internal, so
// the caller (the one edge that logs) knows to log it. requestID is the request's
// X-Correlation-Id (logging.CorrelationID), answered as requestId.
func WriteProblem(w http.ResponseWriter, requestID string, err error) (internal bool) {
	p := ProblemFor(err)
	p.RequestID = requestID
	if e, ok := As(err); ok && e.RetryAfter > 0 { // 429, an OTP block's 400, a 503 that knows its wait
		secs := int(e.RetryAfter.Seconds() + 0.999)
		w.Header().Set("Retry-After", strconv.Itoa(secs))
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(p.Status)
	_ = json.NewEncoder(w).Encode(p)
	return p.Status >= 500
}
