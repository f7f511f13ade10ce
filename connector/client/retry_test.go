package client

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"syscall"
	"testing"
	"time"
)

// TestRetryable: what is sent again and what is not (the decision alone; the service's own
// answers are exercised by tests/connector).
func TestRetryable(t *testing.T) {
	t.Parallel()
	c := New("http://127.0.0.1:1/api", "k", StaticToken("t"))
	get := call{method: http.MethodGet}
	post := call{method: http.MethodPost}
	idem := call{method: http.MethodPost, idempotent: true}
	status := func(s int) error { return &Error{Status: s} }
	timeout := &net.OpError{Op: "read", Err: errTimeout{}}
	for _, tc := range []struct {
		name  string
		cl    call
		err   error
		retry bool
	}{
		{"GET 503", get, status(503), true},
		{"GET 429", get, status(429), true},
		{"GET 500", get, status(500), false},
		{"GET 404", get, status(404), false},
		{"POST 503", post, status(503), false},
		{"idempotent POST 503", idem, status(503), true},
		{"idempotent POST 409", idem, status(409), false},
		{"POST refused connection", post, fmt.Errorf("POST /x: %w", syscall.ECONNREFUSED), true},
		{"POST time-out", post, timeout, false},
		{"GET time-out", get, timeout, true},
		{"POST other error", post, errors.New("boom"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, got := c.retryable(tc.cl, tc.err, 0); got != tc.retry {
				t.Fatalf("retry %v, want %v", got, tc.retry)
			}
		})
	}
	if _, again := c.retryable(get, status(503), c.Retries); again {
		t.Fatal("retried past Retries")
	}
	wait, _ := c.retryable(get, &Error{Status: 429, RetryAfter: 7 * time.Second}, 0)
	if wait != 7*time.Second {
		t.Fatalf("Retry-After not honoured: %s", wait)
	}
	for attempt := range 3 {
		wait, _ := c.retryable(get, status(503), attempt)
		if lo, hi := c.Backoff<<attempt/2, c.Backoff<<attempt; wait < lo || wait > hi {
			t.Fatalf("attempt %d waits %s, want within [%s, %s]", attempt, wait, lo, hi)
		}
	}
}

type errTimeout struct{}

func (errTimeout) Error() string   { return "i/o timeout" }
func (errTimeout) Timeout() bool   { return true }
func (errTimeout) Temporary() bool { return true }
