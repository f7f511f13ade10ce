package webhook

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/callbacksig"
)

const testSecret = "0123456789abcdef0123456789abcdef-webhook"

// seen is one request a receiver got, checked as a receiver would check it.
type seen struct {
	method, path, query, ctype, key string
	body                            []byte
	sig                             string // the callbacksig header
}

// receiver answers the statuses in turn (the last one from then on), with the headers given for
// that turn, and records every request.
type receiver struct {
	srv      *httptest.Server
	mu       sync.Mutex
	got      []seen
	statuses []int
	headers  []http.Header
}

func newReceiver(t *testing.T, statuses []int, headers ...http.Header) *receiver {
	t.Helper()
	rc := &receiver{statuses: statuses, headers: headers}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		s := seen{method: r.Method, path: r.URL.Path, query: r.URL.RawQuery, ctype: r.Header.Get("Content-Type"),
			key: r.Header.Get(IdempotencyHeader), body: raw, sig: r.Header.Get(callbacksig.Header)}
		rc.mu.Lock()
		n := len(rc.got)
		rc.got = append(rc.got, s)
		rc.mu.Unlock()
		i := min(n, len(rc.statuses)-1)
		if i < len(rc.headers) {
			for k, v := range rc.headers[i] {
				w.Header()[k] = v
			}
		}
		if rc.statuses[i] >= 300 && rc.statuses[i] < 400 {
			w.Header().Set("Location", "/elsewhere")
		}
		w.WriteHeader(rc.statuses[i])
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) requests() []seen {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]seen(nil), rc.got...)
}

func mustNew(t *testing.T, opts ...Option) *Client {
	t.Helper()
	c, err := New(testSecret, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

const testBody = `{"workflowId":"wf-1","correlationId":"C-1","state":"complete","completedAt":"2026-03-01T12:00:00Z"}`

func request(url string) Request {
	return Request{URL: url, Body: []byte(testBody), IdempotencyKey: Key("wf-1", "complete")}
}

func TestPostSignsWithCallbacksig(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, []int{http.StatusNoContent})
	at := time.Date(2026, 11, 1, 9, 30, 0, 0, time.UTC)
	c := mustNew(t, WithClock(func() time.Time { return at }))
	status, err := c.Post(context.Background(), request(rc.srv.URL+"/hooks/done?tenant=t1"))
	if err != nil || status != http.StatusNoContent {
		t.Fatalf("Post: %d %v, want 204 nil", status, err)
	}
	got := rc.requests()
	if len(got) != 1 {
		t.Fatalf("%d requests, want 1", len(got))
	}
	r := got[0]
	if r.method != http.MethodPost || r.path != "/hooks/done" || r.query != "tenant=t1" || r.ctype != "application/json" {
		t.Fatalf("request %s %s?%s (%s), want POST /hooks/done?tenant=t1 application/json", r.method, r.path, r.query, r.ctype)
	}
	// The header is callbacksig's signature of the raw body at the client's clock, field for
	// field, and a receiver verifies it at that time.
	if want := callbacksig.Sign(testSecret, at, []byte(testBody)); r.sig != want {
		t.Fatalf("signature header %q, want %q", r.sig, want)
	}
	if err := callbacksig.Verify(r.sig, r.body, at.Add(time.Minute), []string{"an-older-secret-an-older-secret-", testSecret}); err != nil {
		t.Fatalf("the receiver's callbacksig.Verify: %v", err)
	}
	if string(r.body) != testBody {
		t.Fatalf("body %q, want the raw body as given", r.body)
	}
	if r.key != Key("wf-1", "complete") {
		t.Fatalf("Idempotency-Key %q", r.key)
	}
	// The signature is callbacksig's at the client's clock, and goes stale like any other.
	if err := callbacksig.Verify(callbacksig.Sign(testSecret, at, r.body), r.body, at.Add(10*time.Minute), []string{testSecret}); apperr.KindOf(err) != apperr.KindUnauthenticated {
		t.Fatalf("a 10-minute-old signature verified: %v", err)
	}
}

// TestUnsignedPostsWithoutSignature: NewUnsigned's client sends the same request but for the
// X-Esign-Signature header, which it leaves out; New still refuses an empty secret.
func TestUnsignedPostsWithoutSignature(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, []int{http.StatusNoContent})
	c, err := NewUnsigned()
	if err != nil {
		t.Fatal(err)
	}
	if status, err := c.Post(context.Background(), request(rc.srv.URL+"/hooks/done")); err != nil || status != http.StatusNoContent {
		t.Fatalf("Post: %d %v, want 204 nil", status, err)
	}
	got := rc.requests()
	if len(got) != 1 || got[0].sig != "" || string(got[0].body) != testBody || got[0].ctype != "application/json" || got[0].key != Key("wf-1", "complete") {
		t.Fatalf("requests %+v, want one unsigned POST of the body with its key", got)
	}
	if _, err := New(""); !errors.Is(err, ErrShortSecret) {
		t.Fatalf("New with no secret: %v, want ErrShortSecret", err)
	}
}

func TestIdempotencyKeyIsStableAcrossRetries(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, []int{http.StatusServiceUnavailable, http.StatusBadGateway, http.StatusOK})
	start := time.Date(2026, 11, 1, 9, 30, 0, 0, time.UTC)
	clock := start
	c := mustNew(t, WithClock(func() time.Time { return clock }))
	var errs []error
	for range 3 { // the queue delivers the same message again after each retryable failure
		_, err := c.Post(context.Background(), request(rc.srv.URL))
		errs = append(errs, err)
		clock = clock.Add(time.Second)
	}
	if !errors.Is(errs[0], ErrRetryable) || !errors.Is(errs[1], ErrRetryable) || errs[2] != nil {
		t.Fatalf("outcomes %v, want retryable, retryable, done", errs)
	}
	got := rc.requests()
	if len(got) != 3 {
		t.Fatalf("%d requests, want 3", len(got))
	}
	for i, r := range got {
		if r.key != got[0].key || r.key == "" {
			t.Fatalf("attempt %d carried key %q, attempt 0 %q", i, r.key, got[0].key)
		}
		// each attempt is signed afresh at the client's clock
		if want := callbacksig.Sign(testSecret, start.Add(time.Duration(i)*time.Second), r.body); r.sig != want {
			t.Fatalf("attempt %d: signature %q, want %q", i, r.sig, want)
		}
	}
}

func TestStatusClassification(t *testing.T) {
	t.Parallel()
	type outcome int
	const (
		done outcome = iota
		retryable
		permanent
	)
	tests := []struct {
		name   string
		status int
		accept []int // nil: the default (any 2xx)
		want   outcome
	}{
		{"200", http.StatusOK, nil, done},
		{"201", http.StatusCreated, nil, done},
		{"202", http.StatusAccepted, nil, done},
		{"204", http.StatusNoContent, nil, done},
		{"301 not followed", http.StatusMovedPermanently, nil, permanent},
		{"302 not followed", http.StatusFound, nil, permanent},
		{"307 not followed", http.StatusTemporaryRedirect, nil, permanent},
		{"400", http.StatusBadRequest, nil, permanent},
		{"401", http.StatusUnauthorized, nil, permanent},
		{"403", http.StatusForbidden, nil, permanent},
		{"404", http.StatusNotFound, nil, permanent},
		{"409", http.StatusConflict, nil, permanent},
		{"410", http.StatusGone, nil, permanent},
		{"413", http.StatusRequestEntityTooLarge, nil, permanent},
		{"422", http.StatusUnprocessableEntity, nil, permanent},
		{"408", http.StatusRequestTimeout, nil, retryable},
		{"425", http.StatusTooEarly, nil, retryable},
		{"429", http.StatusTooManyRequests, nil, retryable},
		{"500", http.StatusInternalServerError, nil, retryable},
		{"502", http.StatusBadGateway, nil, retryable},
		{"503", http.StatusServiceUnavailable, nil, retryable},
		{"504", http.StatusGatewayTimeout, nil, retryable},
		{"404 accepted", http.StatusNotFound, []int{200, 202, 204, 404}, done},
		{"201 outside the accepted set", http.StatusCreated, []int{200, 202, 204, 404}, permanent},
		{"503 outside the accepted set", http.StatusServiceUnavailable, []int{200}, retryable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rc := newReceiver(t, []int{tt.status})
			var opts []Option
			if tt.accept != nil {
				opts = append(opts, WithAccept(tt.accept...))
			}
			status, err := mustNew(t, opts...).Post(context.Background(), request(rc.srv.URL))
			if n := len(rc.requests()); n != 1 {
				t.Fatalf("%d requests, want 1 (no redirect followed, no retry inside Post)", n)
			}
			if status != tt.status {
				t.Fatalf("status %d, want %d", status, tt.status)
			}
			if tt.want == done {
				if err != nil {
					t.Fatalf("%v, want done", err)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) || e.Status != tt.status {
				t.Fatalf("%v, want an *Error with status %d", err, tt.status)
			}
			if errors.Is(err, ErrRetryable) != (tt.want == retryable) || errors.Is(err, ErrPermanent) != (tt.want == permanent) {
				t.Fatalf("%v: retryable %v permanent %v, want outcome %d", err, errors.Is(err, ErrRetryable), errors.Is(err, ErrPermanent), tt.want)
			}
		})
	}
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		status int
		header string
		want   time.Duration
	}{
		{"429 seconds", http.StatusTooManyRequests, "7", 7 * time.Second},
		{"503 HTTP date", http.StatusServiceUnavailable, now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{"429 without header", http.StatusTooManyRequests, "", 0},
		{"429 date in the past", http.StatusTooManyRequests, now.Add(-time.Hour).Format(http.TimeFormat), 0},
		{"429 malformed", http.StatusTooManyRequests, "soon", 0},
		{"429 negative", http.StatusTooManyRequests, "-5", 0},
		{"429 beyond the cap", http.StatusTooManyRequests, "99999999999999999", MaxRetryAfter},
		{"400 ignores it", http.StatusBadRequest, "7", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := http.Header{}
			if tt.header != "" {
				h.Set("Retry-After", tt.header)
			}
			rc := newReceiver(t, []int{tt.status}, h)
			_, err := mustNew(t, WithClock(func() time.Time { return now })).Post(context.Background(), request(rc.srv.URL))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("%v, want an *Error", err)
			}
			if e.RetryAfter != tt.want {
				t.Fatalf("RetryAfter %v, want %v", e.RetryAfter, tt.want)
			}
		})
	}
}

func TestTransportFailuresAreRetryable(t *testing.T) {
	t.Parallel()
	// blocking answers only when the client gives up: once the body is read, the server watches
	// the connection and cancels the request's context when it closes.
	blocking := func(t *testing.T) string {
		srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			<-r.Context().Done()
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	tests := []struct {
		name    string
		url     func(t *testing.T) string
		opts    []Option
		timeout bool
	}{
		{"per-attempt time-out", blocking, []Option{WithTimeout(50 * time.Millisecond)}, true},
		{"time-out over a client without one", blocking, []Option{WithHTTPClient(&http.Client{}), WithTimeout(50 * time.Millisecond)}, true},
		{"the HTTP client's time-out", blocking, []Option{WithHTTPClient(&http.Client{Timeout: 50 * time.Millisecond})}, true},
		{"unreachable", func(*testing.T) string { return closed.URL + "/hook?token=secret-in-query" }, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// The caller's context is only a backstop against a hang: the attempt must end by
			// the client's own time-out (or error) while that context is still live.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			status, err := mustNew(t, tt.opts...).Post(ctx, request(tt.url(t)))
			if ctx.Err() != nil {
				t.Fatalf("the attempt ended only by the caller's context: %v", err)
			}
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, ErrRetryable) || e.Status != 0 || status != 0 {
				t.Fatalf("%d %v, want a retryable *Error without a status", status, err)
			}
			if e.Timeout() != tt.timeout {
				t.Fatalf("Timeout() %v, want %v (%v)", e.Timeout(), tt.timeout, err)
			}
			if strings.Contains(err.Error(), "secret-in-query") {
				t.Fatalf("the error shows the URL's query: %v", err)
			}
		})
	}
	t.Run("cancelled context sends nothing", func(t *testing.T) {
		t.Parallel()
		rc := newReceiver(t, []int{http.StatusOK})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := mustNew(t).Post(ctx, request(rc.srv.URL))
		if !errors.Is(err, ErrRetryable) || !errors.Is(err, context.Canceled) {
			t.Fatalf("%v, want retryable, context.Canceled", err)
		}
		if len(rc.requests()) != 0 {
			t.Fatal("a request was sent on a cancelled context")
		}
	})
}

func TestMalformedRequestIsPermanentAndNotSent(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, []int{http.StatusOK})
	c := mustNew(t)
	tests := []struct {
		name string
		req  Request
	}{
		{"body not JSON", Request{URL: rc.srv.URL, Body: []byte("{"), IdempotencyKey: "k"}},
		{"empty body", Request{URL: rc.srv.URL, IdempotencyKey: "k"}},
		{"no key", Request{URL: rc.srv.URL, Body: []byte(testBody)}},
		{"key with a leading space", Request{URL: rc.srv.URL, Body: []byte(testBody), IdempotencyKey: " ab"}},
		{"key with a trailing space", Request{URL: rc.srv.URL, Body: []byte(testBody), IdempotencyKey: "ab "}},
		{"key not ASCII", Request{URL: rc.srv.URL, Body: []byte(testBody), IdempotencyKey: "clé"}},
		{"key with a newline", Request{URL: rc.srv.URL, Body: []byte(testBody), IdempotencyKey: "a\nX-Evil: 1"}},
		{"key too long", Request{URL: rc.srv.URL, Body: []byte(testBody), IdempotencyKey: strings.Repeat("k", MaxKeyLen+1)}},
		{"relative URL", Request{URL: "/hook", Body: []byte(testBody), IdempotencyKey: "k"}},
		{"ftp URL", Request{URL: "ftp://example.com/hook", Body: []byte(testBody), IdempotencyKey: "k"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Post(context.Background(), tt.req)
			if !errors.Is(err, ErrPermanent) || errors.Is(err, ErrRetryable) {
				t.Fatalf("%v, want permanent", err)
			}
		})
	}
	if n := len(rc.requests()); n != 0 {
		t.Fatalf("%d malformed requests were sent", n)
	}
}

func TestNew(t *testing.T) {
	t.Parallel()
	if _, err := New("short"); !errors.Is(err, ErrShortSecret) || strings.Contains(err.Error(), "short") {
		t.Fatalf("short secret: %v, want ErrShortSecret without the secret", err)
	}
	if _, err := New(testSecret, WithTimeout(0)); err == nil {
		t.Fatal("a zero time-out was accepted")
	}
	// The caller's HTTP client is not changed by New (redirects are refused on a copy).
	h := &http.Client{}
	mustNew(t, WithHTTPClient(h))
	if h.CheckRedirect != nil {
		t.Fatal("New changed the caller's HTTP client")
	}
}

func TestKey(t *testing.T) {
	t.Parallel()
	k := Key("wf-1", "complete")
	if len(k) != 64 || k != Key("wf-1", "complete") {
		t.Fatalf("key %q is not a stable 64-hex digest", k)
	}
	for _, other := range [][]string{{"wf-1", "rejected"}, {"complete", "wf-1"}, {"wf-1c", "omplete"}, {"wf-1", "complete", ""}} {
		if Key(other...) == k {
			t.Fatalf("Key%q equals Key(wf-1, complete)", other)
		}
	}
}

func TestAppError(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		kind apperr.Kind
		code string
	}{
		{"unreachable", &Error{Retryable: true, Err: errors.New("dial")}, apperr.KindUnavailable, "x_unavailable"},
		{"503", &Error{Retryable: true, Status: 503}, apperr.KindUnavailable, "x_unavailable"},
		{"429 with Retry-After", &Error{Retryable: true, Status: 429, RetryAfter: 7 * time.Second}, apperr.KindUnavailable, "x_unavailable"},
		{"400", &Error{Status: 400}, apperr.KindInvalid, "x_rejected"},
		{"refused URL", &Error{Err: refuse("must be https")}, apperr.KindInvalid, "x_rejected"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := AppError(tt.err, "the x service", "x_unavailable", "x_rejected")
			e, ok := apperr.As(err)
			if !ok || e.Kind != tt.kind || e.Code != tt.code || !strings.HasPrefix(e.Detail, "the x service") {
				t.Fatalf("%v, want kind %d code %s", err, tt.kind, tt.code)
			}
			if !errors.Is(err, tt.err) {
				t.Fatalf("%v no longer reaches the webhook error", err)
			}
			if want := tt.err.(*Error).RetryAfter; e.RetryAfter != want {
				t.Fatalf("RetryAfter %v, want %v", e.RetryAfter, want)
			}
		})
	}
	if AppError(nil, "s", "a", "b") != nil {
		t.Fatal("AppError(nil) is not nil")
	}
}
