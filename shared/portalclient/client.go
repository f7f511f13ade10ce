package portalclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/webhook"
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
const IdempotencyHeader = webhook.IdempotencyHeader

// PurgePath is the purge endpoint below the base URL.
const PurgePath = "/v1/purge"

// Client calls the signing portal's API. Safe for concurrent use.
type Client struct {
	purgeURL string // the base URL + PurgePath
	hook     *webhook.Client
}

// Option adjusts a Client.
type Option func(*[]webhook.Option)

// WithHTTPClient replaces the default client (DefaultTimeout). Redirects are not followed
// whatever h says, and each request is bounded by DefaultTimeout in any case; h should bound its
// time-outs too.
func WithHTTPClient(h *http.Client) Option {
	return func(o *[]webhook.Option) { *o = append(*o, webhook.WithHTTPClient(h)) }
}

// WithClock replaces time.Now for the signature time (tests).
func WithClock(now func() time.Time) Option {
	return func(o *[]webhook.Option) { *o = append(*o, webhook.WithClock(now)) }
}

// New makes a client for the portal API at baseURL, signing with secret. baseURL must be an
// absolute https URL (http only for a loopback host) without credentials, query or fragment;
// secret at least callbacksig.MinSecretLen bytes. Errors: plain configuration errors saying what
// is wrong (never the secret).
func New(baseURL, secret string, opts ...Option) (*Client, error) {
	u, err := ParseBaseURL(baseURL)
	if err != nil {
		return nil, err
	}
	// 404: the portal holds nothing for the session, which is what a purge wants.
	hookOpts := []webhook.Option{webhook.WithTimeout(DefaultTimeout),
		webhook.WithAccept(http.StatusOK, http.StatusAccepted, http.StatusNoContent, http.StatusNotFound)}
	for _, o := range opts {
		o(&hookOpts)
	}
	hook, err := webhook.New(secret, hookOpts...)
	if err != nil {
		return nil, err
	}
	return &Client{purgeURL: u.String() + PurgePath, hook: hook}, nil
}

// ParseBaseURL checks a PORTAL_API_URL value: absolute, https (http only on a loopback host), no
// credentials, query or fragment (webhook.ParseBaseURL). The returned URL has no trailing slash.
// Errors: plain, saying what is wrong.
func ParseBaseURL(raw string) (*url.URL, error) { return webhook.ParseBaseURL(raw) }

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
// permanent), KindUnavailable portal_unavailable (5xx, 408, 425, 429, network failure, time-out,
// ctx done: retry later). The wrapped *webhook.Error stays reachable (errors.Is
// webhook.ErrRetryable, errors.As for RetryAfter).
func (c *Client) Purge(ctx context.Context, r PurgeRequest) error {
	if err := r.Validate(); err != nil {
		return err
	}
	body, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = c.hook.Post(ctx, webhook.Request{URL: c.purgeURL, Body: body, IdempotencyKey: IdempotencyKey(r.GroupID)})
	return webhook.AppError(err, "the signing portal", CodeUnavailable, CodeRejected)
}
