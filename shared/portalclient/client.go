package portalclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/callbacksig"
)

// Settings the processor reads for the client.
const (
	SettingURL     = "PORTAL_API_URL"
	SettingSecrets = "PORTAL_CALLBACK_SECRETS"
)

// Error codes.
const (
	CodeInvalidRequest = "invalid_purge_request"
	CodeRejected       = "portal_purge_rejected"
	CodeUnavailable    = "portal_unavailable"
)

// DefaultTimeout bounds one request (connect, send, answer).
const DefaultTimeout = 10 * time.Second

// IdempotencyHeader is the header carrying the idempotency key.
const IdempotencyHeader = "Idempotency-Key"

// PurgePath is the purge endpoint below the base URL.
const PurgePath = "/v1/purge"

// Client calls the signing portal's API. Safe for concurrent use.
type Client struct {
	base   string // the base URL without a trailing slash
	secret string
	http   *http.Client
	now    func() time.Time
}

// Option adjusts a Client.
type Option func(*Client)

// WithHTTPClient replaces the default client (DefaultTimeout, no redirects). The caller's client
// should bound its time-outs too.
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// WithClock replaces time.Now for the signature time (tests).
func WithClock(now func() time.Time) Option { return func(c *Client) { c.now = now } }

// New makes a client for the portal API at baseURL, signing with secret. baseURL must be an
// absolute https URL (http only for a loopback host) without query or fragment; secret at least
// callbacksig.MinSecretLen bytes. Errors: plain configuration errors saying what is wrong (never
// the secret).
func New(baseURL, secret string, opts ...Option) (*Client, error) {
	u, err := ParseBaseURL(baseURL)
	if err != nil {
		return nil, err
	}
	if len(secret) < callbacksig.MinSecretLen {
		return nil, fmt.Errorf("the portal secret must be at least %d characters", callbacksig.MinSecretLen)
	}
	c := &Client{base: u.String(), secret: secret, now: time.Now, http: &http.Client{
		Timeout: DefaultTimeout,
		// A redirect would carry the signed body elsewhere: refuse it (3xx is then a rejection).
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// ParseBaseURL checks a PORTAL_API_URL value: absolute, https (http only on a loopback host), no
// query or fragment. The returned URL has no trailing slash. Errors: plain, saying what is wrong.
func ParseBaseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimRight(strings.TrimSpace(raw), "/"))
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, errors.New("must be an absolute https URL without credentials, query or fragment")
	}
	if u.Scheme == "http" && !loopback(u.Hostname()) {
		return nil, errors.New("must be https (http is allowed only on a loopback host)")
	}
	return u, nil
}

func loopback(host string) bool {
	ip := net.ParseIP(host)
	return host == "localhost" || (ip != nil && ip.IsLoopback())
}

// ReasonSealed is the purge reason after a seal.
const ReasonSealed = "sealed"

// PurgeRequest asks the portal to forget what it holds for a session's slots.
type PurgeRequest struct {
	GroupID    string   `json:"groupId"`
	SessionIDs []string `json:"sessionIds"`
	Reason     string   `json:"reason"`
}

// MaxSessionIDs bounds the slots of one request (a session has far fewer).
const MaxSessionIDs = 100

// Validate checks the request. Errors: apperr KindInvalid invalid_purge_request naming the field.
func (r PurgeRequest) Validate() error {
	var fields []apperr.FieldError
	if strings.TrimSpace(r.GroupID) == "" {
		fields = append(fields, apperr.Field("groupId", "is required"))
	}
	if len(r.SessionIDs) == 0 || len(r.SessionIDs) > MaxSessionIDs {
		fields = append(fields, apperr.Field("sessionIds", fmt.Sprintf("must hold 1 to %d sessionIds", MaxSessionIDs)))
	}
	for i, s := range r.SessionIDs {
		if strings.TrimSpace(s) == "" {
			fields = append(fields, apperr.Field(fmt.Sprintf("sessionIds[%d]", i), "must not be empty"))
		}
	}
	if r.Reason != ReasonSealed {
		fields = append(fields, apperr.Field("reason", "must be "+ReasonSealed))
	}
	if len(fields) > 0 {
		return apperr.Invalid(CodeInvalidRequest, fields...)
	}
	return nil
}

// IdempotencyKey is the Idempotency-Key of a session's purge: groupId + ":purge".
func IdempotencyKey(groupID string) string { return groupID + ":purge" }

// Purge asks the portal to purge the slots' temporary data. It returns nil when the portal
// answered 200, 202 or 204, or 404 (it holds nothing for the session). Errors: KindInvalid
// invalid_purge_request (nothing sent), KindInvalid portal_purge_rejected (other answers,
// permanent), KindUnavailable portal_unavailable (5xx, 408, 429, network failure, time-out, ctx
// done: retry later).
func (c *Client) Purge(ctx context.Context, r PurgeRequest) error {
	if err := r.Validate(); err != nil {
		return err
	}
	body, err := json.Marshal(r)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+PurgePath, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(callbacksig.Header, callbacksig.Sign(c.secret, c.now(), body))
	req.Header.Set(IdempotencyHeader, IdempotencyKey(r.GroupID))
	resp, err := c.http.Do(req)
	if err != nil {
		// The URL error names the endpoint only; the body holds no personal data anyway.
		return apperr.Wrap(err, apperr.KindUnavailable, CodeUnavailable, "the signing portal could not be reached")
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	switch s := resp.StatusCode; {
	case s == http.StatusOK || s == http.StatusAccepted || s == http.StatusNoContent || s == http.StatusNotFound:
		return nil
	case s == http.StatusRequestTimeout || s == http.StatusTooManyRequests || s >= 500:
		return apperr.New(apperr.KindUnavailable, CodeUnavailable, "the signing portal answered %d", s)
	default:
		return apperr.New(apperr.KindInvalid, CodeRejected, "the signing portal refused the purge with %d", s)
	}
}
