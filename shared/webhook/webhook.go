// Package webhook is the one client for the signed JSON POSTs this service sends: to the
// operator's services (notification service, signing portal purge) and to URLs its callers give
// (workflow terminal callbacks, batch webhooks). Every request is
//
//	POST <url>
//	Content-Type: application/json
//	X-Esign-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, t + "." + raw body)>
//	Idempotency-Key: <the caller's key>
//
// signed by package callbacksig (DESIGN 4), so a receiver checks it with callbacksig.Verify. A
// client made by NewUnsigned sends no X-Esign-Signature (the connector's completion webhook when
// its operator set no secret, spec 001 SERVICE_BATCH_NOTIFY_WEBHOOK_URL). The
// Idempotency-Key is the caller's: it must be the same for every attempt of one message (derive
// it from the message, see Key), so a retried request is done once.
//
// Post makes one attempt, bounded by the client's time-out, and never follows a redirect (it
// would carry the signed body elsewhere, past any URL policy). Retrying is the caller's queue's
// job; the outcome tells it whether to: nil for an accepted status (any 2xx unless WithAccept
// says otherwise), else an *Error matching ErrRetryable (network failure, time-out, 408, 425,
// 429, 5xx; RetryAfter from a Retry-After header) or ErrPermanent (every other answer, a refused
// URL, a malformed request).
//
// Outbound URLs a caller did not configure itself go through a Policy (DESIGN 10): CheckURL before
// storing them, and WithPolicy on the client to check them again on each Post and on the address
// a host name resolves to. The client never logs; its errors carry statuses and causes, never a
// body, and name an endpoint without its query.
package webhook

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/esign-svc/esign/shared/callbacksig"
)

// IdempotencyHeader is the header carrying the idempotency key.
const IdempotencyHeader = "Idempotency-Key"

// DefaultTimeout bounds one attempt (connect, send, answer) unless WithTimeout says otherwise.
const DefaultTimeout = 10 * time.Second

// MaxKeyLen bounds an idempotency key.
const MaxKeyLen = 255

// ErrShortSecret is New's error for a secret shorter than callbacksig.MinSecretLen.
var ErrShortSecret = fmt.Errorf("the signing secret must be at least %d characters", callbacksig.MinSecretLen)

// Client posts signed JSON. Safe for concurrent use.
type Client struct {
	secret  string // "": unsigned (NewUnsigned)
	http    *http.Client
	timeout time.Duration
	now     func() time.Time
	accept  func(status int) bool
	policy  *Policy
}

// Option adjusts a Client.
type Option func(*Client)

// WithHTTPClient uses h for the requests (its transport and time-out; redirects are refused
// whatever h says).
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// WithTimeout bounds each attempt by d (default DefaultTimeout), on top of any time-out of the
// HTTP client and the caller's context.
func WithTimeout(d time.Duration) Option { return func(c *Client) { c.timeout = d } }

// WithClock replaces time.Now for the signature time and Retry-After dates (tests).
func WithClock(now func() time.Time) Option { return func(c *Client) { c.now = now } }

// WithAccept makes exactly these statuses success (default: any 2xx). An answer outside them is
// classified as usual: retryable or permanent.
func WithAccept(statuses ...int) Option {
	set := map[int]bool{}
	for _, s := range statuses {
		set[s] = true
	}
	return func(c *Client) { c.accept = func(s int) bool { return set[s] } }
}

// WithPolicy checks every URL with p before sending and, unless WithHTTPClient gave a transport
// other than *http.Transport, the address each host name resolves to (no proxy is used then).
func WithPolicy(p Policy) Option { return func(c *Client) { c.policy = &p } }

// New makes a client signing with secret (at least callbacksig.MinSecretLen bytes). Errors:
// ErrShortSecret, or a plain error for a non-positive time-out (configuration; never the secret).
func New(secret string, opts ...Option) (*Client, error) {
	if len(secret) < callbacksig.MinSecretLen {
		return nil, ErrShortSecret
	}
	return build(secret, opts)
}

// NewUnsigned makes a client that posts without X-Esign-Signature, for a receiver its operator
// configured without a shared secret; everything else is as New's. Errors: as New's.
func NewUnsigned(opts ...Option) (*Client, error) { return build("", opts) }

func build(secret string, opts []Option) (*Client, error) {
	c := &Client{secret: secret, timeout: DefaultTimeout, now: time.Now,
		accept: func(s int) bool { return s >= 200 && s < 300 }}
	for _, o := range opts {
		o(c)
	}
	if c.timeout <= 0 {
		return nil, errors.New("the webhook time-out must be positive")
	}
	var h http.Client
	if c.http != nil {
		h = *c.http
	} else {
		h.Timeout = c.timeout
	}
	// A redirect would carry the signed body elsewhere: refuse it (the 3xx is then the answer).
	h.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	if c.policy != nil {
		h.Transport = c.policy.guard(h.Transport)
	}
	c.http = &h
	return c, nil
}

// guard returns rt with the policy checked at dial time, when rt is (or defaults to) an
// *http.Transport; any other transport is returned as is.
func (p Policy) guard(rt http.RoundTripper) http.RoundTripper {
	if rt == nil {
		rt = http.DefaultTransport
	}
	t, ok := rt.(*http.Transport)
	if !ok {
		return rt
	}
	t = t.Clone()
	t.Proxy = nil
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: p.control}
	t.DialContext = d.DialContext
	return t
}

// Request is one message to post.
type Request struct {
	URL string
	// Body is the raw JSON, signed and sent as is.
	Body []byte
	// IdempotencyKey is the same for every attempt of one message: 1 to MaxKeyLen printable
	// ASCII characters, not starting or ending with a space.
	IdempotencyKey string
	// Secrets, when set, sign the request the Standard Webhooks way (standard.go) instead of
	// with the client's secret: webhook-id is the IdempotencyKey, webhook-timestamp the
	// client's clock, webhook-signature one v1 signature per secret (events, DESIGN 17).
	Secrets []string
}

// Post sends r once. It returns the answer's status (0 when there was none) and nil when the
// client accepts it, else an *Error matching ErrRetryable or ErrPermanent (see the package doc).
// A malformed request (body not JSON, bad key, not an absolute http(s) URL) or a URL the policy
// refuses is ErrPermanent and nothing is sent.
func (c *Client) Post(ctx context.Context, r Request) (int, error) {
	if !json.Valid(r.Body) {
		return 0, invalid("the body is not JSON")
	}
	if !validKey(r.IdempotencyKey) {
		return 0, invalid("the idempotency key must be 1 to %d printable ASCII characters", MaxKeyLen)
	}
	if c.policy != nil {
		if _, err := c.policy.CheckURL(r.URL); err != nil {
			return 0, &Error{Err: err}
		}
	}
	u, err := url.Parse(r.URL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return 0, invalid("the URL must be an absolute http(s) URL")
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(r.Body))
	if err != nil {
		return 0, invalid("the URL is not usable")
	}
	req.Header.Set("Content-Type", "application/json")
	if len(r.Secrets) > 0 {
		at := c.now()
		sig, err := signatures(r.Secrets, r.IdempotencyKey, at, r.Body)
		if err != nil {
			return 0, invalid("a signing secret is not a Standard Webhooks secret")
		}
		req.Header.Set(HeaderID, r.IdempotencyKey)
		req.Header.Set(HeaderTimestamp, strconv.FormatInt(at.Unix(), 10))
		req.Header.Set(HeaderSignature, sig)
	} else if c.secret != "" {
		req.Header.Set(callbacksig.Header, callbacksig.Sign(c.secret, c.now(), r.Body))
	}
	req.Header.Set(IdempotencyHeader, r.IdempotencyKey)
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, transportError(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if c.accept(resp.StatusCode) {
		return resp.StatusCode, nil
	}
	return resp.StatusCode, answerError(resp, c.now())
}

func validKey(k string) bool {
	if k == "" || len(k) > MaxKeyLen || k[0] == ' ' || k[len(k)-1] == ' ' {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < ' ' || k[i] > '~' {
			return false
		}
	}
	return true
}

// Key derives an idempotency key from the parts that identify one message: hex SHA-256 of the
// parts, each followed by a NUL byte. The same parts give the same key; nothing of them can be
// read back from it without guessing them. Hash a personal part (an address) first all the same:
// the key is a header the receiver may log.
func Key(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}
