package acs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/notify"
)

// Stable error codes Send returns (in *apperr.Error): notify's, which every provider shares.
const (
	// CodeUnavailable: the service could not be reached, timed out, throttled (429) or answered
	// 5xx. KindUnavailable; RetryAfter carries the service's Retry-After when it sent one.
	CodeUnavailable = notify.CodeUnavailable
	// CodeRefused: the service refused the message (4xx, or a failed per-recipient result or
	// e-mail operation). KindInvalid: sending it again will not help.
	CodeRefused = notify.CodeRefused
	// CodeAuthRefused: the service refused our credentials (401/403): the key, the clock
	// (x-ms-date skew) or the identity's role is wrong. KindInvalid.
	CodeAuthRefused = notify.CodeAuthRefused
	// CodeInvalidMessage: the Message itself cannot be sent by this provider. KindInvalid.
	CodeInvalidMessage = notify.CodeInvalidMessage
)

const maxResponse = 64 << 10

// client makes authenticated JSON calls to one ACS resource.
type client struct {
	base *url.URL
	auth authorizer
	http *http.Client
}

func newClient(cfg Config) (*client, error) {
	if cfg.Endpoint == nil {
		return nil, fmt.Errorf("acs: setting %s: is required", SettingEndpoint)
	}
	var auth authorizer
	switch {
	case len(cfg.AccessKey) > 0:
		now := cfg.Now
		if now == nil {
			now = time.Now
		}
		auth = hmacAuth{key: cfg.AccessKey, now: now}
	case cfg.Credential != nil:
		auth = bearerAuth{cred: cfg.Credential}
	default:
		return nil, fmt.Errorf("acs: setting %s: an access key or a managed identity is required", SettingAccessKey)
	}
	hc := cfg.HTTPClient
	if hc == nil {
		timeout := cfg.Timeout
		if timeout <= 0 {
			timeout = 15 * time.Second
		}
		hc = &http.Client{Timeout: timeout}
	}
	return &client{base: cfg.Endpoint, auth: auth, http: hc}, nil
}

// url is the endpoint joined with an operation path and api-version.
func (c *client) url(path, apiVersion string) *url.URL {
	u := *c.base
	u.Path = strings.TrimRight(u.Path, "/") + path
	u.RawPath = ""
	u.RawQuery = url.Values{"api-version": {apiVersion}}.Encode()
	return &u
}

// response is what do read: the status, headers and at most maxResponse bytes of body.
type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends one authenticated request. Transport failures, timeouts and token failures come back
// as KindUnavailable; the status is left to the caller.
func (c *client) do(ctx context.Context, method string, u *url.URL, body []byte) (response, error) {
	req, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(body))
	if err != nil {
		return response{}, apperr.Wrap(err, apperr.KindInternal, notify.CodeRequest, "build ACS request")
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if err := c.auth.authorize(ctx, req, body); err != nil {
		return response{}, apperr.Wrap(err, apperr.KindUnavailable, CodeUnavailable, "ACS credential unavailable")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		// err names the method and URL (endpoint and api-version only) and the cause.
		return response{}, apperr.Wrap(err, apperr.KindUnavailable, CodeUnavailable, "ACS unreachable")
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return response{}, apperr.Wrap(err, apperr.KindUnavailable, CodeUnavailable, "ACS answer cut short")
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}, nil
}

// statusError maps a non-success answer to the domain error. The service's error message is
// not copied (it may repeat the recipient); only its short code is.
func statusError(r response, what string) *apperr.Error {
	code := serviceErrorCode(r.body)
	detail := fmt.Sprintf("ACS %s answered %d", what, r.status)
	if code != "" {
		detail += " (" + code + ")"
	}
	switch {
	case r.status == http.StatusTooManyRequests || r.status == http.StatusRequestTimeout || r.status >= 500:
		e := apperr.New(apperr.KindUnavailable, CodeUnavailable, "%s", detail)
		e.RetryAfter = retryAfter(r.header, time.Now())
		return e
	case r.status == http.StatusUnauthorized || r.status == http.StatusForbidden:
		return apperr.New(apperr.KindInvalid, CodeAuthRefused, "%s", detail)
	default:
		return apperr.New(apperr.KindInvalid, CodeRefused, "%s", detail)
	}
}

// serviceErrorCode returns error.code from an ACS error body when it is a short identifier.
func serviceErrorCode(body []byte) string {
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	return safeCode(e.Error.Code)
}

// safeCode keeps a service code only if it looks like one (letters, digits, '.', '_', '-').
func safeCode(s string) string {
	if s == "" || len(s) > 64 {
		return ""
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return ""
		}
	}
	return s
}

// retryAfter reads retry-after-ms / x-ms-retry-after-ms (milliseconds) or Retry-After
// (seconds or an HTTP date); 0 when absent or unreadable. It is capped at one hour.
func retryAfter(h http.Header, now time.Time) time.Duration {
	var d time.Duration
	for _, name := range []string{"retry-after-ms", "x-ms-retry-after-ms"} {
		if v := strings.TrimSpace(h.Get(name)); v != "" {
			if ms, err := strconv.ParseInt(v, 10, 64); err == nil && ms > 0 {
				d = time.Duration(ms) * time.Millisecond
				break
			}
		}
	}
	if v := strings.TrimSpace(h.Get("Retry-After")); d == 0 && v != "" {
		if s, err := strconv.ParseInt(v, 10, 64); err == nil && s > 0 {
			d = time.Duration(s) * time.Second
		} else if t, err := http.ParseTime(v); err == nil && t.After(now) {
			d = t.Sub(now)
		}
	}
	return min(d, time.Hour)
}

// invalidMessage is the error for a Message this provider cannot send.
func invalidMessage(err error) error {
	var ae *apperr.Error
	if errors.As(err, &ae) {
		return ae
	}
	return apperr.Wrap(err, apperr.KindInvalid, CodeInvalidMessage, "the message cannot be sent")
}
