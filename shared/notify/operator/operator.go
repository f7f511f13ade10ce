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
// Answers: 2xx is sent; 4xx means the service refused this message (apperr KindInvalid, code
// notification_rejected: permanent, do not retry); 5xx, 429 and transport failures or time-outs
// are KindUnavailable (code notification_unavailable: retry later). The client never logs, and
// its errors carry the status only, never the address or the body.
package operator

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
	"strings"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/callbacksig"
	"github.com/esign-svc/esign/shared/config"
	"github.com/esign-svc/esign/shared/notify"
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
const IdempotencyHeader = "Idempotency-Key"

// Client sends messages to the operator's notification service. Safe for concurrent use.
type Client struct {
	endpoint string // {base}/v1/messages
	key      string
	http     *http.Client
	now      func() time.Time
}

var _ notify.Sender = (*Client)(nil)

// New makes a client for the service at baseURL, signing with key. baseURL must be an absolute
// https URL (http only for a loopback host, for local development and tests) without query or
// fragment; key at least callbacksig.MinSecretLen bytes. A nil httpClient gets one with
// DefaultTimeout. Errors: plain configuration errors, naming what is wrong (not the key).
func New(baseURL, key string, httpClient *http.Client) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(strings.TrimSpace(baseURL), "/"))
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") || u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("must be an absolute https URL without query or fragment")
	}
	if u.Scheme == "http" && !loopback(u.Hostname()) {
		return nil, errors.New("must be https (http is allowed only on a loopback host)")
	}
	if len(key) < callbacksig.MinSecretLen {
		return nil, fmt.Errorf("signing key must be at least %d characters", callbacksig.MinSecretLen)
	}
	if httpClient == nil {
		httpClient = &http.Client{Timeout: DefaultTimeout}
	}
	return &Client{endpoint: u.String() + "/v1/messages", key: key, http: httpClient, now: time.Now}, nil
}

// FromLookup builds the client from NOTIFICATION_SERVICE_URL and NOTIFICATION_SERVICE_KEY; it is
// the notify.Builder of the "operator" provider. Errors name the setting at fault.
func FromLookup(lookup config.Lookup) (notify.Sender, error) {
	r := config.NewReader(lookup)
	base := r.Required(SettingURL)
	key := r.Secret(SettingKey)
	if err := r.Err(); err != nil {
		return nil, err
	}
	c, err := New(base, key, nil)
	if err != nil {
		name := SettingURL
		if strings.Contains(err.Error(), "key") {
			name = SettingKey
		}
		return nil, fmt.Errorf("setting %s: %w", name, err)
	}
	return c, nil
}

func loopback(host string) bool {
	ip := net.ParseIP(host)
	return host == "localhost" || (ip != nil && ip.IsLoopback())
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
// sent), KindInvalid code notification_rejected (4xx other than 408 and 429), KindUnavailable
// code notification_unavailable (5xx, 408, 429, network failure, time-out, ctx done).
func (c *Client) Send(ctx context.Context, m notify.Message) error {
	if err := m.Validate(); err != nil {
		return apperr.Wrap(err, apperr.KindInvalid, apperr.CodeInvalidMessage, "the %s message is incomplete", m.Kind)
	}
	body, err := json.Marshal(wireMessage{Channel: m.Channel, Kind: m.Kind, To: m.To, Subject: m.Subject,
		Text: m.Text, HTML: m.HTML, CorrelationID: m.CorrelationID})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(callbacksig.Header, callbacksig.Sign(c.key, c.now(), body))
	req.Header.Set(IdempotencyHeader, IdempotencyKey(m, notify.DedupeID(ctx), body))
	resp, err := c.http.Do(req)
	if err != nil {
		// The URL error names the endpoint only (no body, no address).
		return apperr.Wrap(err, apperr.KindUnavailable, CodeUnavailable, "the notification service could not be reached")
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	switch s := resp.StatusCode; {
	case s >= 200 && s < 300:
		return nil
	case s == http.StatusRequestTimeout || s == http.StatusTooManyRequests || s >= 500:
		return apperr.New(apperr.KindUnavailable, CodeUnavailable, "the notification service answered %d", s)
	default:
		return apperr.New(apperr.KindInvalid, CodeRejected, "the notification service refused the %s message with %d", m.Kind, s)
	}
}

// IdempotencyKey is the Idempotency-Key of m (see the package doc): hex SHA-256 of correlationId,
// kind, SHA-256 of the lower-cased recipient and dedupeID (the body's SHA-256 when dedupeID is
// empty), NUL-separated.
func IdempotencyKey(m notify.Message, dedupeID string, body []byte) string {
	if dedupeID == "" {
		b := sha256.Sum256(body)
		dedupeID = "body:" + hex.EncodeToString(b[:])
	}
	rcpt := sha256.Sum256([]byte(strings.ToLower(strings.TrimSpace(m.To))))
	h := sha256.New()
	for _, part := range []string{m.CorrelationID, string(m.Kind), hex.EncodeToString(rcpt[:]), dedupeID} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}
