package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// FieldError names one field at fault by its full JSON path.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
	RuleID  string `json:"ruleId,omitempty"`
}

// Problem is the service's RFC 9457 problem+json answer (schema Problem of docs/openapi.yaml).
type Problem struct {
	Type          string       `json:"type,omitempty"`
	Title         string       `json:"title,omitempty"`
	Status        int          `json:"status,omitempty"`
	Detail        string       `json:"detail,omitempty"`
	Code          string       `json:"code,omitempty"`
	Errors        []FieldError `json:"errors,omitempty"`
	RequestID     string       `json:"requestId,omitempty"`
	RequiredRoles []string     `json:"requiredRoles,omitempty"`
	ExpiredAt     string       `json:"expiredAt,omitempty"`
	Feature       string       `json:"feature,omitempty"`
	AttemptsLeft  *int         `json:"attemptsLeft,omitempty"`
	GroupID       string       `json:"groupId,omitempty"`
}

// Error is every non-success answer of the dispatcher: the HTTP status, the problem when the
// body was one (the Functions host answers some 401, 404, 405 and 413 with an empty body), and
// Retry-After when the answer had one. Switch on Code (stable), or use errors.As.
type Error struct {
	Method, Path string // the route, without the query (no key or token)
	Status       int
	Problem      Problem
	RetryAfter   time.Duration
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: %d", e.Method, e.Path, e.Status)
	if e.Problem.Code != "" {
		b.WriteString(" " + e.Problem.Code)
	}
	switch {
	case e.Problem.Detail != "":
		b.WriteString(": " + e.Problem.Detail)
	case e.Problem.Code == "" && e.Status == http.StatusUnauthorized:
		b.WriteString(": the Functions host refused the request (check SERVICE_DISPATCHER_CODE)")
	case e.Problem.Code == "":
		b.WriteString(" " + http.StatusText(e.Status))
	}
	for _, f := range e.Problem.Errors {
		fmt.Fprintf(&b, "\n  %s: %s", f.Field, f.Message)
	}
	return b.String()
}

// Code is the problem's stable code ("" when the answer was not a problem).
func (e *Error) Code() string { return e.Problem.Code }

// CodeOf is err's problem code when it is (or wraps) an *Error, else "".
func CodeOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Problem.Code
	}
	return ""
}

// StatusOf is err's HTTP status when it is (or wraps) an *Error, else 0.
func StatusOf(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

// retryableStatus is what a request may be sent again for: the service or a proxy was
// momentarily unable (408, 429, 502, 503, 504). 500 is the service's own bug: not retried.
func retryableStatus(s int) bool {
	switch s {
	case http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

func decodeError(method, path string, resp *http.Response, raw []byte) *Error {
	e := &Error{Method: method, Path: path, Status: resp.StatusCode}
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &e.Problem)
	}
	if ra := resp.Header.Get("Retry-After"); ra != "" {
		if n, err := strconv.Atoi(ra); err == nil && n >= 0 {
			e.RetryAfter = time.Duration(n) * time.Second
		} else if t, err := http.ParseTime(ra); err == nil {
			e.RetryAfter = time.Until(t)
		}
	}
	return e
}

// InvalidBatchError is a batch submitted with at least one invalid record (422): the batch is
// stored in state invalid and nothing is queued; Receipt names the failing records.
type InvalidBatchError struct {
	Receipt BatchReceipt
}

func (e *InvalidBatchError) Error() string {
	return fmt.Sprintf("batch %s is INVALID: %d of %d records failed validation (nothing queued)",
		e.Receipt.BatchID, e.Receipt.FailedCount, e.Receipt.DocumentCount)
}
