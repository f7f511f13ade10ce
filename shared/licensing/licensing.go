// Package licensing is the client of the operator's licensing service (DESIGN 19). Every call
// carries the deployment's licence (the compact JWS) as a bearer token and times out in 5 s:
//
//   - POST /v1/validate {tenantId, feature, correlationId} answers {allowed, reason?}: asked at
//     session, delivery, batch and workflow create, after the offline licence; a refusal is 403
//     licence_refused with the reason; an unreachable service (network, time-out, 5xx, an answer
//     that does not decode) falls back to the offline licence alone, logged at most once a minute;
//   - POST /v1/usage {id, tenantId, kind, at} records metering, idempotent by id: the apps queue a
//     Usage on the licence-usage queue (binding "usage") and the processor's job posts it, so a
//     service outage is retried by the queue, never lost;
//   - GET /v1/health feeds /api/health.
//
// The package reads no environment: the apps read LICENSING_URL and build the Client. A nil
// *Client is the offline licence alone: Validate allows, Health reports nothing.
package licensing

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/licence"
	"github.com/esign-svc/esign/shared/webhook"
)

// Setting is the apps' setting naming the licensing service's base URL; empty: offline only.
const Setting = "LICENSING_URL"

// Endpoints below the base URL.
const (
	PathValidate = "/v1/validate"
	PathUsage    = "/v1/usage"
	PathHealth   = "/v1/health"
)

// DefaultTimeout bounds one call (connect, send, answer).
const DefaultTimeout = 5 * time.Second

// LogEvery is the least time between two log lines about an unreachable service at validate.
const LogEvery = time.Minute

// Error codes.
const (
	// CodeRefused (403) is the service's refusal at create; the problem carries its reason.
	CodeRefused = "licence_refused"
	// CodeUnavailable (503, retried by the queue) is a usage post the service did not take.
	CodeUnavailable = "licensing_unavailable"
	// CodeRejected is a usage post the service answered with a 4xx: retrying cannot help.
	CodeRejected = "licensing_rejected"
	// CodeInvalidUsage is a usage message that fails Usage.Validate (nothing is sent).
	CodeInvalidUsage = "invalid_usage"
)

// MaxReasonLen bounds the reason of a refusal that is passed on to the caller.
const MaxReasonLen = 200

// Validator is what the create use cases ask after the offline licence: nil when the tenant may
// create what needs feature. *Client is one; a nil *Client allows everything.
type Validator interface {
	Validate(ctx context.Context, tenantID string, feature licence.Feature, correlationID string) error
}

// Check asks v when there is one: nil for a nil v (the offline licence alone), else v.Validate.
func Check(ctx context.Context, v Validator, tenantID string, feature licence.Feature, correlationID string) error {
	if v == nil {
		return nil
	}
	return v.Validate(ctx, tenantID, feature, correlationID)
}

// Open is the client the licence settings name (LICENSING_URL), sending l's JWS: nil, the
// offline licence alone, when the setting is unset. Errors: New's.
func Open(s licence.Settings, l *licence.Licence, opts ...Option) (*Client, error) {
	if s.ServiceURL == "" {
		return nil, nil
	}
	return New(s.ServiceURL, l.Token(), opts...)
}

// Client calls the licensing service. Safe for concurrent use.
type Client struct {
	base    string // no trailing slash
	licence string // the compact JWS sent as the bearer token
	http    *http.Client
	timeout time.Duration
	now     func() time.Time
	logf    func(format string, args ...any)

	mu      sync.Mutex
	lastLog time.Time
	logged  bool // lastLog is set
}

// Option adjusts a Client.
type Option func(*Client)

// WithTimeout replaces DefaultTimeout (tests).
func WithTimeout(d time.Duration) Option { return func(c *Client) { c.timeout = d } }

// WithClock replaces time.Now for the once-a-minute log (tests).
func WithClock(now func() time.Time) Option { return func(c *Client) { c.now = now } }

// WithLog sets where the fall-back notice is logged (the app's logger). Default: nowhere.
func WithLog(logf func(format string, args ...any)) Option {
	return func(c *Client) { c.logf = logf }
}

// New makes a client of the service at baseURL (absolute https, http only on a loopback
// host, no credentials, query or fragment) sending licenceJWS as the bearer token. Errors:
// plain configuration errors naming LICENSING_URL (never the licence).
func New(baseURL, licenceJWS string, opts ...Option) (*Client, error) {
	u, err := webhook.ParseBaseURL(baseURL)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Setting, err)
	}
	licenceJWS = strings.TrimSpace(licenceJWS)
	if licenceJWS == "" {
		return nil, errors.New("licensing: no licence to send")
	}
	c := &Client{base: u.String(), licence: licenceJWS, timeout: DefaultTimeout, now: time.Now,
		logf: func(string, ...any) {}}
	c.http = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// ValidateRequest is the body of POST /v1/validate.
type ValidateRequest struct {
	TenantID      string `json:"tenantId"`
	Feature       string `json:"feature"`
	CorrelationID string `json:"correlationId"`
}

// ValidateAnswer is the service's answer.
type ValidateAnswer struct {
	Allowed *bool  `json:"allowed"`
	Reason  string `json:"reason,omitempty"`
}

// Validate asks the service whether tenantID may create what needs feature. nil when allowed,
// when c is nil (offline only) and when the service is unreachable (the offline licence, which
// the caller has checked already, decides; logged at most once a minute). Error:
// *apperr.Error KindForbidden licence_refused, detail and `reason` member the service's reason
// (control characters dropped, at most MaxReasonLen bytes), `feature` member the feature.
func (c *Client) Validate(ctx context.Context, tenantID string, feature licence.Feature, correlationID string) error {
	if c == nil {
		return nil
	}
	body, _ := json.Marshal(ValidateRequest{TenantID: tenantID, Feature: string(feature), CorrelationID: correlationID})
	status, raw, err := c.do(ctx, http.MethodPost, PathValidate, body)
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("answered %d", status)
	}
	var a ValidateAnswer
	if err == nil {
		if derr := json.Unmarshal(raw, &a); derr != nil || a.Allowed == nil {
			err = errors.New("the answer is not {allowed, reason?}")
		}
	}
	if err != nil {
		c.fallBack(err)
		return nil
	}
	if *a.Allowed {
		return nil
	}
	reason := cleanReason(a.Reason)
	e := apperr.New(apperr.KindForbidden, CodeRefused, "the licensing service refused the %q feature: %s", string(feature), reason)
	e.Extra = map[string]any{"reason": reason, "feature": string(feature)}
	return e
}

// fallBack logs that validate fell back to the offline licence, at most once per LogEvery.
func (c *Client) fallBack(err error) {
	c.mu.Lock()
	now := c.now()
	due := !c.logged || now.Sub(c.lastLog) >= LogEvery
	if due {
		c.lastLog, c.logged = now, true
	}
	c.mu.Unlock()
	if due {
		c.logf("licensing: the service at %s is unreachable (%v); the offline licence alone decides (logged at most once a minute)", c.base, err)
	}
}

// cleanReason is the service's reason fit for a problem detail: printable, bounded, never empty.
func cleanReason(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, strings.TrimSpace(s))
	if len(s) > MaxReasonLen {
		s = strings.ToValidUTF8(s[:MaxReasonLen], "")
	}
	if s == "" {
		s = "no reason given"
	}
	return s
}

// Health asks GET /v1/health. nil when the service answers 2xx. Errors: plain, saying what
// failed (never the licence).
func (c *Client) Health(ctx context.Context) error {
	if c == nil {
		return nil
	}
	status, _, err := c.do(ctx, http.MethodGet, PathHealth, nil)
	if err != nil {
		return err
	}
	if status < 200 || status > 299 {
		return fmt.Errorf("licensing: health answered %d", status)
	}
	return nil
}

// Record posts one usage record. nil when the service answered 2xx (a repeat of an id it has
// is its business: the id makes it idempotent). Errors: KindInvalid invalid_usage (nothing
// sent); KindInvalid licensing_rejected for a 4xx other than 408, 425, 429 (permanent);
// KindUnavailable licensing_unavailable otherwise (network, time-out, 5xx, 408, 425, 429:
// retry later).
func (c *Client) Record(ctx context.Context, u Usage) error {
	if err := u.Validate(); err != nil {
		return err
	}
	body, _ := json.Marshal(u)
	status, _, err := c.do(ctx, http.MethodPost, PathUsage, body)
	if err != nil {
		return apperr.Wrap(err, apperr.KindUnavailable, CodeUnavailable, "the licensing service is unavailable")
	}
	switch {
	case status >= 200 && status <= 299:
		return nil
	case status >= 400 && status <= 499 && status != 408 && status != 425 && status != 429:
		return apperr.New(apperr.KindInvalid, CodeRejected, "the licensing service refused the usage record (%d)", status)
	default:
		return apperr.New(apperr.KindUnavailable, CodeUnavailable, "the licensing service answered %d", status)
	}
}

// maxAnswer bounds what is read of an answer.
const maxAnswer = 64 << 10

// do makes one call with the bearer licence under the client's time-out.
func (c *Client) do(ctx context.Context, method, path string, body []byte) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.licence)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, errors.New(redact(err.Error(), c.licence))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return 0, nil, err
	}
	return resp.StatusCode, raw, nil
}

// redact drops the licence from an error text (a transport error never holds headers, but the
// guarantee is cheap).
func redact(s, secret string) string { return strings.ReplaceAll(s, secret, "[licence]") }
