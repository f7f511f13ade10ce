// Package operator is the client of the operator's shared notification service, which the spec
// names as the sender of signer invitation e-mails. Its API is not published; this project
// defines it as follows, and the service operator implements it:
//
//	POST {NOTIFICATION_SERVICE_URL}/v1/messages
//	Content-Type: application/json
//	X-Esign-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(NOTIFICATION_SERVICE_KEY, t + "." + body)>
//	Idempotency-Key: <64 hex>
//
//	{"channel":"email","kind":"invitation","to":"…","subject":"…","text":"…","html":"…","correlationId":"…"}
//
// The signature header is the one the portal callback uses (package callbacksig), so the service
// can check it with the same code: 300 s tolerance, constant-time compare. The Idempotency-Key is
// hex SHA-256 over correlationId, kind, the SHA-256 of the lower-cased recipient and the
// notification's dedupe id (notify.WithDedupeID; for an invitation it changes with each new
// link), separated by NUL bytes: the same notification sent twice carries the same key, and the
// key never reveals the address. Without a dedupe id the body's SHA-256 takes its place.
//
// Requests go through package webhook, which signs them, bounds each attempt by DefaultTimeout
// and never follows a redirect. Answers: 2xx is sent; 408, 425, 429, 5xx, transport failures and
// time-outs are KindUnavailable (code notification_unavailable: retry later, the same key makes
// the retry one message); any other answer means the service refused this message (apperr
// KindInvalid, code notification_rejected: permanent, do not retry). The wrapped *webhook.Error
// stays reachable (errors.Is webhook.ErrRetryable, errors.As for RetryAfter). The client never
// logs, and its errors carry the status only, never the address or the body.
package operator

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/settings"
	"github.com/esign-svc/esign/shared/webhook"
)

// Settings the client reads.
const (
	SettingURL = "NOTIFICATION_SERVICE_URL"
	SettingKey = "NOTIFICATION_SERVICE_KEY"
)

// Error codes.
const (
	CodeRejected    = "notification_rejected"
	CodeUnavailable = "notification_unavailable"
)

// DefaultTimeout bounds one request (connect, send, answer).
const DefaultTimeout = 15 * time.Second

// IdempotencyHeader is the header carrying the idempotency key.
const IdempotencyHeader = webhook.IdempotencyHeader

// Client sends messages to the operator's notification service. Safe for concurrent use.
type Client struct {
	endpoint string // {base}/v1/messages
	hook     *webhook.Client
}

var _ notify.Sender = (*Client)(nil)

// New makes a client for the service at baseURL, signing with key. baseURL must be an absolute
// https URL (http only for a loopback host, for local development and tests) without
// credentials, query or fragment (webhook.ParseBaseURL); key at least callbacksig.MinSecretLen
// bytes. A nil httpClient gets one with DefaultTimeout; each request is bounded by DefaultTimeout
// in any case. Errors: plain configuration errors naming what is wrong (not the key);
// webhook.ErrShortSecret for a short key.
func New(baseURL, key string, httpClient *http.Client) (*Client, error) {
	u, err := webhook.ParseBaseURL(baseURL)
	if err != nil {
		return nil, err
	}
	opts := []webhook.Option{webhook.WithTimeout(DefaultTimeout)}
	if httpClient != nil {
		opts = append(opts, webhook.WithHTTPClient(httpClient))
	}
	hook, err := webhook.New(key, opts...)
	if err != nil {
		return nil, err
	}
	return &Client{endpoint: u.String() + "/v1/messages", hook: hook}, nil
}

// FromLookup builds the client from NOTIFICATION_SERVICE_URL and NOTIFICATION_SERVICE_KEY; it is
// the notify.Builder of the "operator" provider. Errors name the setting at fault.
func FromLookup(lookup settings.Lookup) (notify.Sender, error) {
	r := settings.NewReader(lookup)
	base := r.Required(SettingURL)
	key := r.Secret(SettingKey)
	if err := r.Err(); err != nil {
		return nil, err
	}
	c, err := New(base, key, nil)
	if err != nil {
		name := SettingURL
		if errors.Is(err, webhook.ErrShortSecret) {
			name = SettingKey
		}
		return nil, fmt.Errorf("setting %s: %w", name, err)
	}
	return c, nil
}

// wireMessage is the request body.
type wireMessage struct {
	Channel       notify.Channel `json:"channel"`
	Kind          notify.Kind    `json:"kind"`
	To            string         `json:"to"`
	Subject       string         `json:"subject,omitempty"`
	Text          string         `json:"text"`
	HTML          string         `json:"html,omitempty"`
	CorrelationID string         `json:"correlationId,omitempty"`
}

// Send posts m to the service. Errors: KindInvalid code invalid_message (m incomplete, nothing
// sent), KindInvalid code notification_rejected (4xx other than 408, 425 and 429, and any other
// answer that is neither 2xx nor retryable), KindUnavailable code notification_unavailable (5xx,
// 408, 425, 429, network failure, time-out, ctx done).
func (c *Client) Send(ctx context.Context, m notify.Message) error {
	if err := m.Validate(); err != nil {
		return apperr.Wrap(err, apperr.KindInvalid, apperr.CodeInvalidMessage, "the %s message is incomplete", m.Kind)
	}
	body, err := json.Marshal(wireMessage{Channel: m.Channel, Kind: m.Kind, To: m.To, Subject: m.Subject,
		Text: m.Text, HTML: m.HTML, CorrelationID: m.CorrelationID})
	if err != nil {
		return err
	}
	_, err = c.hook.Post(ctx, webhook.Request{URL: c.endpoint, Body: body, IdempotencyKey: IdempotencyKey(m, notify.DedupeID(ctx), body)})
	return webhook.AppError(err, "the notification service", CodeUnavailable, CodeRejected)
}

// IdempotencyKey is the Idempotency-Key of m (see the package doc): hex SHA-256 of correlationId,
// kind, SHA-256 of the lower-cased recipient and dedupeID (the body's SHA-256 when dedupeID is
// empty), NUL-separated (webhook.Key).
func IdempotencyKey(m notify.Message, dedupeID string, body []byte) string {
	if dedupeID == "" {
		b := sha256.Sum256(body)
		dedupeID = "body:" + hex.EncodeToString(b[:])
	}
	rcpt := sha256.Sum256([]byte(strings.ToLower(strings.TrimSpace(m.To))))
	return webhook.Key(m.CorrelationID, string(m.Kind), hex.EncodeToString(rcpt[:]), dedupeID)
}
