// Package client is a typed Go client of the dispatcher's HTTP API (docs/openapi.yaml): signing
// sessions, delivery, render and batch dispatch, workflows and document upload. Every request
// carries the Functions host key as `?code=`; the requester's routes carry a bearer JWT from a
// TokenSource (the OAuth client-credentials grant: ClientCredentials), fetched once, cached until
// shortly before expiry, and refreshed once when the dispatcher answers 401. Non-success answers
// are *Error (the problem+json, typed); a request is sent again, with exponential back-off, only
// when that cannot do it twice: a GET, a request the service makes idempotent (delivery with its
// Idempotency-Key, a one-record render, a workflow create, both keyed by their correlationId), or
// any request whose connection was refused before a byte was sent.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/esign-svc/esign/connector/settings"
)

// Client calls the dispatcher. Safe for concurrent use.
type Client struct {
	base   string
	code   string
	tokens TokenSource
	http   *http.Client
	// Retries is how many times a retryable request is sent again (default 3).
	Retries int
	// Backoff is the first wait before a retry, doubled each time with jitter, at most 30 s
	// (default 500 ms); a Retry-After of the answer is honoured when longer.
	Backoff time.Duration
}

// Option adjusts a Client.
type Option func(*Client)

// WithHTTPClient makes the requests with h.
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// New makes a client of the dispatcher at baseURL (e.g. https://app.azurewebsites.net/api) with
// the host key code and tokens for the JWT routes.
func New(baseURL, code string, tokens TokenSource, opts ...Option) *Client {
	c := &Client{base: strings.TrimRight(baseURL, "/"), code: code, tokens: tokens,
		http: &http.Client{Timeout: 2 * time.Minute}, Retries: 3, Backoff: 500 * time.Millisecond}
	for _, o := range opts {
		o(c)
	}
	c.http = guarded(c.http)
	return c
}

// ErrInsecureRedirect is the error of a redirect that would send a request (its host key,
// JWT or client secret) over plain http: from https to http, or to a non-loopback http host.
var ErrInsecureRedirect = errors.New("refused a redirect to plain http: it would send a secret in clear")

// ErrInsecureURL is the error of a base URL that is plain http to a host other than loopback:
// the host key and the JWT are never sent there.
var ErrInsecureURL = errors.New("the service URL must be https (plain http only to a loopback host)")

// CheckRedirect is the redirect policy of every client of the connector: at most 10
// redirects, never to plain http after https, never to plain http off the loopback host.
func CheckRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	if req.URL.Scheme != "https" && (len(via) > 0 && via[0].URL.Scheme == "https" || settings.CheckSecretURL(req.URL.String()) != nil) {
		return fmt.Errorf("%w (to %s://%s)", ErrInsecureRedirect, req.URL.Scheme, req.URL.Host)
	}
	return nil
}

// guarded is a copy of h whose redirect policy is CheckRedirect, then h's own when it has one.
func guarded(h *http.Client) *http.Client {
	g := *h
	own := h.CheckRedirect
	g.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if err := CheckRedirect(req, via); err != nil {
			return err
		}
		if own != nil {
			return own(req, via)
		}
		return nil
	}
	return &g
}

// call is one request.
type call struct {
	method, path string
	query        url.Values
	json         any       // a JSON body, or
	raw          io.Reader // a raw body with contentType
	contentType  string
	header       http.Header
	anonymous    bool // no JWT (health, the recipient's and the portal's token routes)
	idempotent   bool // safe to send again after an answer was lost
	ok           []int
}

// Response is what a call answered besides its decoded body.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

func (c *Client) url(p string, q url.Values) string {
	v := url.Values{}
	for k, vs := range q {
		v[k] = vs
	}
	v.Set("code", c.code)
	return c.base + p + "?" + v.Encode()
}

// do sends cl, with retries and one token refresh on 401, and decodes a JSON answer into out
// (when out is non-nil and the answer is JSON). Errors: *Error for an answer outside cl.ok,
// *TokenError, or the transport's error.
func (c *Client) do(ctx context.Context, cl call, out any) (*Response, error) {
	if settings.CheckSecretURL(c.base) != nil {
		return nil, fmt.Errorf("%s %s: %w", cl.method, cl.path, ErrInsecureURL)
	}
	var body []byte
	if cl.json != nil {
		b, err := json.Marshal(cl.json)
		if err != nil {
			return nil, fmt.Errorf("%s %s: encode the body: %w", cl.method, cl.path, err)
		}
		body, cl.contentType = b, "application/json"
	} else if cl.raw != nil {
		b, err := io.ReadAll(cl.raw)
		if err != nil {
			return nil, err
		}
		body = b
	}
	refreshed := false
	for attempt := 0; ; attempt++ {
		resp, err := c.once(ctx, cl, body, out)
		if err == nil {
			return resp, nil
		}
		var e *Error
		if errors.As(err, &e) && e.Status == http.StatusUnauthorized && !cl.anonymous && !refreshed && e.Problem.Code != "" {
			refreshed = true
			attempt--
			continue
		}
		wait, retry := c.retryable(cl, err, attempt)
		if !retry {
			return resp, err
		}
		select {
		case <-ctx.Done():
			return resp, err
		case <-time.After(wait):
		}
	}
}

func (c *Client) retryable(cl call, err error, attempt int) (time.Duration, bool) {
	if attempt >= c.Retries {
		return 0, false
	}
	wait := c.Backoff << attempt
	wait = min(wait, 30*time.Second)
	wait = wait/2 + time.Duration(rand.Int64N(int64(wait/2)+1))
	var e *Error
	switch {
	case errors.As(err, &e):
		if !retryableStatus(e.Status) || !(cl.idempotent || cl.method == http.MethodGet) {
			return 0, false
		}
		return max(wait, e.RetryAfter), true
	case errors.Is(err, syscall.ECONNREFUSED):
		return wait, true // nothing was sent
	}
	var ne net.Error
	if errors.As(err, &ne) && (cl.idempotent || cl.method == http.MethodGet) {
		return wait, true
	}
	return 0, false
}

func (c *Client) once(ctx context.Context, cl call, body []byte, out any) (*Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, cl.method, c.url(cl.path, cl.query), rd)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", cl.method, cl.path, err)
	}
	for k, vs := range cl.header {
		req.Header[k] = vs
	}
	if cl.contentType != "" {
		req.Header.Set("Content-Type", cl.contentType)
	}
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", "application/json")
	}
	var tok string
	if !cl.anonymous {
		if tok, err = c.tokens.Token(ctx); err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		// The transport's error names the URL, which holds the host key: say the route only.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("%s %s: %w", cl.method, cl.path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: read the answer: %w", cl.method, cl.path, err)
	}
	r := &Response{Status: resp.StatusCode, Header: resp.Header, Body: raw}
	ok := cl.ok
	if len(ok) == 0 {
		ok = []int{http.StatusOK}
	}
	for _, s := range ok {
		if s != resp.StatusCode {
			continue
		}
		if out != nil && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			if err := json.Unmarshal(raw, out); err != nil {
				return r, fmt.Errorf("%s %s: decode the answer: %w", cl.method, cl.path, err)
			}
		}
		return r, nil
	}
	e := decodeError(cl.method, cl.path, resp, raw)
	if e.Status == http.StatusUnauthorized && tok != "" {
		c.tokens.Invalidate(tok)
	}
	return r, e
}

// esc escapes one path segment.
func esc(s string) string { return url.PathEscape(s) }
