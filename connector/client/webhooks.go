package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
)

// WebhookRequest is POST /webhooks's body: url, the event types ("*": all) and a description.
type WebhookRequest struct {
	URL         string   `json:"url"`
	Events      []string `json:"events"`
	Description string   `json:"description,omitempty"`
}

// Webhook is a subscription; Secret only in the answers of create and rotate-secret.
type Webhook struct {
	ID             string   `json:"id"`
	URL            string   `json:"url,omitempty"`
	Events         []string `json:"events,omitempty"`
	Description    string   `json:"description,omitempty"`
	State          string   `json:"state,omitempty"`
	DisabledReason string   `json:"disabledReason,omitempty"`
	CreatedAt      string   `json:"createdAt,omitempty"`
	Secret         string   `json:"secret,omitempty"`
	// PreviousSecretExpiresAt is rotate-secret's: until then the old secret signs too.
	PreviousSecretExpiresAt string `json:"previousSecretExpiresAt,omitempty"`
}

// WebhookAttempt is one POST in a subscription's deliveries log.
type WebhookAttempt struct {
	EventID    string `json:"eventId"`
	Type       string `json:"type"`
	At         string `json:"at"`
	Attempt    int    `json:"attempt"`
	Status     int    `json:"status"`
	Outcome    string `json:"outcome"`
	DurationMs int64  `json:"durationMs"`
	Error      string `json:"error,omitempty"`
}

// WebhookDeliveries is one page of the log, newest first.
type WebhookDeliveries struct {
	Items      []WebhookAttempt `json:"items"`
	NextCursor string           `json:"nextCursor,omitempty"`
}

func hookPath(id, tail string) string { return "/webhooks/" + esc(id) + tail }

// CreateWebhook subscribes a URL (the caller needs Service.Admin).
func (c *Client) CreateWebhook(ctx context.Context, req WebhookRequest) (*Webhook, error) {
	var w Webhook
	_, err := c.do(ctx, call{method: http.MethodPost, path: "/webhooks", json: req, ok: []int{http.StatusCreated}}, &w)
	return &w, err
}

// ListWebhooks lists the tenant's subscriptions.
func (c *Client) ListWebhooks(ctx context.Context) ([]Webhook, error) {
	var out struct {
		Items []Webhook `json:"items"`
	}
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/webhooks", idempotent: true}, &out)
	return out.Items, err
}

// GetWebhook reads one subscription.
func (c *Client) GetWebhook(ctx context.Context, id string) (*Webhook, error) {
	var w Webhook
	_, err := c.do(ctx, call{method: http.MethodGet, path: hookPath(id, ""), idempotent: true}, &w)
	return &w, err
}

// DeleteWebhook ends a subscription.
func (c *Client) DeleteWebhook(ctx context.Context, id string) error {
	_, err := c.do(ctx, call{method: http.MethodDelete, path: hookPath(id, ""), idempotent: true, ok: []int{http.StatusNoContent}}, nil)
	return err
}

// RotateWebhookSecret makes a new secret; the old one signs for 24 h more.
func (c *Client) RotateWebhookSecret(ctx context.Context, id string) (*Webhook, error) {
	var w Webhook
	_, err := c.do(ctx, call{method: http.MethodPost, path: hookPath(id, "/rotate-secret")}, &w)
	return &w, err
}

// ListWebhookDeliveries reads a page of the deliveries log (limit 0: the service's default;
// cursor: the previous page's NextCursor).
func (c *Client) ListWebhookDeliveries(ctx context.Context, id string, limit int, cursor string) (*WebhookDeliveries, error) {
	q := url.Values{}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	var d WebhookDeliveries
	_, err := c.do(ctx, call{method: http.MethodGet, path: hookPath(id, "/deliveries"), query: q, idempotent: true}, &d)
	return &d, err
}

// PingWebhook sends a webhook.ping event now and answers the attempt.
func (c *Client) PingWebhook(ctx context.Context, id string) (*WebhookAttempt, error) {
	var a WebhookAttempt
	_, err := c.do(ctx, call{method: http.MethodPost, path: hookPath(id, "/ping")}, &a)
	return &a, err
}
