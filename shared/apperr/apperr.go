// Package apperr is the service's one error type. Every error that crosses a package boundary
// and means something to a caller is an *Error with a Kind (which fixes the HTTP status) and a
// stable Code (which clients may switch on). Adapters translate SDK errors into these; handlers
// write them with WriteProblem. Anything else is internal: logged once and answered generically.
package apperr

import (
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Codes more than one package answers with.
const (
	CodeInternal       = "internal_error"      // every internal error, as the caller sees it
	CodeInvalidRequest = "invalid_request"     // a field at fault, named
	CodeInvalidMessage = "invalid_message"     // a queue or notification message that cannot be processed
	CodePrecondition   = "precondition_failed" // a stored resource changed since it was read (ETag)
)

// Kind classifies an error; it decides the HTTP status.
type Kind int

const (
	KindInternal        Kind = iota // 500, detail hidden
	KindInvalid                     // 400
	KindUnauthenticated             // 401
	KindForbidden                   // 403 (authorisation, licence)
	KindNotFound                    // 404
	KindConflict                    // 409 (wrong state, duplicate)
	KindGone                        // 410
	KindPrecondition                // 412 (ETag mismatch)
	KindTooLarge                    // 413
	KindUnprocessable               // 422 (only where the spec says so)
	KindRateLimited                 // 429
	KindUnavailable                 // 503 (a dependency is down; worth retrying)
)

var statuses = map[Kind]int{
	KindInternal:        http.StatusInternalServerError,
	KindInvalid:         http.StatusBadRequest,
	KindUnauthenticated: http.StatusUnauthorized,
	KindForbidden:       http.StatusForbidden,
	KindNotFound:        http.StatusNotFound,
	KindConflict:        http.StatusConflict,
	KindGone:            http.StatusGone,
	KindPrecondition:    http.StatusPreconditionFailed,
	KindTooLarge:        http.StatusRequestEntityTooLarge,
	KindUnprocessable:   http.StatusUnprocessableEntity,
	KindRateLimited:     http.StatusTooManyRequests,
	KindUnavailable:     http.StatusServiceUnavailable,
}

// Status is the HTTP status for the kind.
func (k Kind) Status() int { return statuses[k] }

// FieldError names one field at fault in a request.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
	// RuleID names the template rule that failed, for a record that breaks a template's
	// rule (DESIGN 9); empty otherwise.
	RuleID string `json:"ruleId,omitempty"`
}

// Error is the domain error.
type Error struct {
	Kind       Kind
	Code       string        // stable, snake_case: "invalid_request", "session_expired", ...
	Detail     string        // human-readable, safe to show the caller (no personal data)
	Fields     []FieldError  // validation failures
	RetryAfter time.Duration // for KindRateLimited
	Extra      map[string]any
	Err        error // cause, never shown to the caller
}

func (e *Error) Error() string {
	msg := e.Code
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// New makes an error of a kind.
func New(kind Kind, code, format string, args ...any) *Error {
	return &Error{Kind: kind, Code: code, Detail: fmt.Sprintf(format, args...)}
}

// Wrap makes an error of a kind with a cause.
func Wrap(err error, kind Kind, code, format string, args ...any) *Error {
	return &Error{Kind: kind, Code: code, Detail: fmt.Sprintf(format, args...), Err: err}
}

// Invalid is a 400 naming the fields at fault.
func Invalid(code string, fields ...FieldError) *Error {
	detail := "the request is not valid"
	if len(fields) == 1 {
		detail = fields[0].Field + ": " + fields[0].Message
	}
	return &Error{Kind: KindInvalid, Code: code, Detail: detail, Fields: fields}
}

// Field is shorthand for a FieldError.
func Field(field, message string) FieldError { return FieldError{Field: field, Message: message} }

// Common errors adapters and stores return; match them with KindOf or errors.Is on the code.
var (
	ErrNotFound     = &Error{Kind: KindNotFound, Code: "not_found", Detail: "not found"}
	ErrConflict     = &Error{Kind: KindConflict, Code: "conflict", Detail: "already exists"}
	ErrPrecondition = &Error{Kind: KindPrecondition, Code: CodePrecondition, Detail: "the resource changed"}
)

// Is matches two *Error values by Kind and Code, so errors.Is(err, apperr.ErrNotFound) holds for
// any not-found error carrying the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Kind == e.Kind && t.Code == e.Code
}

// As returns the *Error in err's chain, if any.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// KindOf is the kind of err: KindInternal for anything that is not an *Error.
func KindOf(err error) Kind {
	if e, ok := As(err); ok {
		return e.Kind
	}
	return KindInternal
}
