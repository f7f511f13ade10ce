package webhook

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
)

// The two outcomes of a failed Post; every error Post returns matches exactly one (errors.Is).
var (
	// ErrRetryable: the same request may succeed later (network failure, time-out, 408, 425, 429,
	// 5xx). A queue job answers non-2xx and lets the queue retry, after RetryAfter if set.
	ErrRetryable = errors.New("webhook: retryable failure")
	// ErrPermanent: the request will never succeed as it is (any other answer, a refused URL, a
	// malformed request). A queue job records it and acknowledges the message.
	ErrPermanent = errors.New("webhook: permanent failure")
)

// MaxRetryAfter caps the wait a Retry-After header may ask for (the retry window of DESIGN 10).
const MaxRetryAfter = 24 * time.Hour

// Error is a failed Post. It never holds the body, and a transport cause names the endpoint
// without its query.
type Error struct {
	Retryable bool
	// Status is the answer's status code; 0 when there was none (transport failure, time-out,
	// refused URL, malformed request).
	Status int
	// RetryAfter is the wait a retryable answer asked for in Retry-After (delta seconds or an
	// HTTP date), capped at MaxRetryAfter; 0 when it asked for none.
	RetryAfter time.Duration
	// Err is the cause when there was no answer.
	Err error
}

func (e *Error) Error() string {
	class := "permanent"
	if e.Retryable {
		class = "retryable"
	}
	msg := "webhook: " + class + " failure"
	if e.Status != 0 {
		msg += ": answered " + strconv.Itoa(e.Status)
	}
	if e.RetryAfter > 0 {
		msg += " (retry after " + e.RetryAfter.String() + ")"
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// Is matches ErrRetryable or ErrPermanent by the error's class.
func (e *Error) Is(target error) bool {
	return (target == ErrRetryable && e.Retryable) || (target == ErrPermanent && !e.Retryable)
}

// Timeout says whether the attempt ran out of time (the per-attempt time-out or the caller's
// deadline).
func (e *Error) Timeout() bool {
	var ne net.Error
	return errors.As(e.Err, &ne) && ne.Timeout()
}

// retryableStatus is the answers worth repeating the same request for.
func retryableStatus(s int) bool {
	return s == http.StatusRequestTimeout || s == http.StatusTooEarly || s == http.StatusTooManyRequests || s >= 500
}

// answerError classifies a status the caller does not accept.
func answerError(resp *http.Response, now time.Time) *Error {
	e := &Error{Status: resp.StatusCode, Retryable: retryableStatus(resp.StatusCode)}
	if e.Retryable {
		e.RetryAfter = retryAfter(resp.Header.Get("Retry-After"), now)
	}
	return e
}

// retryAfter reads a Retry-After value: delta seconds or an HTTP date; 0 when absent, malformed
// or past.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	var d time.Duration
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n <= 0 {
			return 0
		}
		d = MaxRetryAfter
		if n < int64(MaxRetryAfter/time.Second) {
			d = time.Duration(n) * time.Second
		}
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now)
	}
	return min(max(d, 0), MaxRetryAfter)
}

// transportError classifies a failure with no answer: retryable, unless the URL policy refused
// the address at dial time. The cause keeps its type (time-outs stay detectable) but names the
// endpoint without query.
func transportError(err error) *Error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = &url.Error{Op: ue.Op, URL: redact(ue.URL), Err: ue.Err}
	}
	return &Error{Retryable: !errors.Is(err, ErrURLRefused), Err: err}
}

// redact drops credentials, query and fragment from a URL for an error message.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}

// AppError translates an error of Post into the project's error type for a service client:
// retryable is apperr KindUnavailable unavailableCode ("<service> could not be reached" or
// "answered <status>", with the answer's RetryAfter), permanent is KindInvalid rejectedCode
// ("<service> refused the request with <status>"). The *Error stays reachable (errors.Is ErrRetryable, errors.As *Error). nil
// stays nil.
func AppError(err error, service, unavailableCode, rejectedCode string) error {
	if err == nil {
		return nil
	}
	var e *Error
	if !errors.As(err, &e) {
		return err
	}
	switch {
	case e.Retryable && e.Status == 0:
		return apperr.Wrap(err, apperr.KindUnavailable, unavailableCode, "%s could not be reached", service)
	case e.Retryable:
		ae := apperr.Wrap(err, apperr.KindUnavailable, unavailableCode, "%s answered %d", service, e.Status)
		ae.RetryAfter = e.RetryAfter
		return ae
	case e.Status == 0:
		return apperr.Wrap(err, apperr.KindInvalid, rejectedCode, "%s was not sent the request", service)
	default:
		return apperr.Wrap(err, apperr.KindInvalid, rejectedCode, "%s refused the request with %d", service, e.Status)
	}
}

// invalid is a permanent error for a request Post will not send.
func invalid(format string, args ...any) *Error {
	return &Error{Err: fmt.Errorf(format, args...)}
}
