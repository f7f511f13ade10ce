package event

import (
	"context"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/text"
	"github.com/esign-svc/esign/shared/webhook"
)

// Limits of a subscription.
const (
	MaxURL         = 2048
	MaxDescription = 200
	// MaxSubscriptions is how many live subscriptions a tenant may have.
	MaxSubscriptions = 20
	// RotationGrace is how long the previous secret keeps signing after a rotation.
	RotationGrace = 24 * time.Hour
	// DefaultPage and MaxPage page the deliveries log.
	DefaultPage = 50
	MaxPage     = 200
)

// Subscription states.
const (
	StateActive   = "active"
	StateDisabled = "disabled" // failing for FailFor: nothing is sent until it is made again
	StateDeleted  = "deleted"  // reads as missing
)

// Audit kinds of a subscription (none publishes an event).
const (
	EvCreated  = "webhook.created"
	EvRotated  = "webhook.secret_rotated"
	EvDeleted  = "webhook.deleted"
	EvDisabled = "webhook.disabled"
)

// Errors.
var (
	ErrNotFound = &apperr.Error{Kind: apperr.KindNotFound, Code: "webhook_not_found", Detail: "no such webhook subscription"}
	ErrTooMany  = &apperr.Error{Kind: apperr.KindConflict, Code: "webhook_limit_reached",
		Detail: "the tenant has the most webhook subscriptions allowed; delete one first"}
	ErrDisabled = &apperr.Error{Kind: apperr.KindConflict, Code: "webhook_disabled",
		Detail: "the subscription is disabled; delete it and subscribe again"}
)

// Subscription is one tenant's webhook subscription. Its secrets are stored encrypted (the PII
// cipher, AAD bound to tenant and id) and never logged.
type Subscription struct {
	ID, TenantID string
	URL          string
	Events       []string
	Description  string
	SecretEnc    string
	// PrevSecretEnc signs too until PrevUntil (a rotation's grace).
	PrevSecretEnc  string
	PrevUntil      time.Time
	State          string
	DisabledReason string
	DisabledAt     time.Time
	// FailingSince is the first failed attempt since the last success (zero: not failing).
	FailingSince time.Time
	CreatedAt    time.Time
	CreatedBy    string
	ETag         string
}

// Attempt is one POST in a subscription's deliveries log.
type Attempt struct {
	EventID    string    `json:"eventId"`
	Type       string    `json:"type"`
	At         time.Time `json:"at"`
	Attempt    int       `json:"attempt"`
	Status     int       `json:"status"` // 0: no answer
	Outcome    string    `json:"outcome"`
	DurationMs int64     `json:"durationMs"`
	Error      string    `json:"error,omitempty"`
}

// Attempt outcomes.
const (
	OutcomeDelivered = "delivered"
	OutcomeRetrying  = "retrying" // failed, another attempt is due
	OutcomeFailed    = "failed"   // failed, no attempt left (24 h passed or refused for good)
	OutcomeDisabled  = "disabled" // failed and the subscription was disabled
)

// Page is one page of the deliveries log, newest first.
type Page struct {
	Items []Attempt
	Next  string // "": last page
}

// Store keeps subscriptions (webhookstore.Store).
type Store interface {
	Create(ctx context.Context, s *Subscription, ch kernel.Change) error
	Load(ctx context.Context, tenant, id string) (*Subscription, error)
	List(ctx context.Context, tenant string) ([]*Subscription, error)
	Update(ctx context.Context, tenant, id string, step func(*Subscription) (kernel.Change, error)) (*Subscription, error)
	AddAttempt(ctx context.Context, tenant, id string, a Attempt) error
	Attempts(ctx context.Context, tenant, id, cursor string, limit int) (Page, error)
}

// Cipher encrypts the secrets (pii.Cipher).
type Cipher interface {
	EncryptString(plaintext string, aad []byte) (string, error)
	DecryptString(ciphertext string, aad []byte) (string, error)
}

// Poster sends one signed POST (webhook.Client).
type Poster interface {
	Post(ctx context.Context, r webhook.Request) (int, error)
}

// Webhooks is the use-case service of subscriptions.
type Webhooks struct {
	Store  Store
	Cipher Cipher
	// Policy checks a subscription's URL (DESIGN 4): https on a public host unless the
	// operator's settings allow loopback or private ones.
	Policy webhook.Policy
	Sender *Sender
	Now    func() time.Time
	NewID  func() string
}

// CreateRequest is the body of POST /api/webhooks.
type CreateRequest struct {
	URL         string   `json:"url"`
	Events      []string `json:"events"`
	Description string   `json:"description"`
}

// Created is a new subscription with its secret, shown this once.
type Created struct {
	Sub    *Subscription
	Secret string
}

// Check validates a create body. Errors: apperr invalid_request naming each field at fault.
func (w *Webhooks) Check(req CreateRequest) error {
	var errs []apperr.FieldError
	bad := func(f, msg string) { errs = append(errs, apperr.Field(f, msg)) }
	switch {
	case req.URL == "":
		bad("url", "is required")
	case len(req.URL) > MaxURL:
		bad("url", "must be at most 2048 characters")
	default:
		if _, err := w.Policy.CheckURL(req.URL); err != nil || strings.TrimSpace(req.URL) != req.URL {
			bad("url", "must be an https URL of a public host")
		}
	}
	if len(req.Events) == 0 {
		bad("events", "must name at least one event type (or \"*\")")
	}
	if len(req.Events) > len(Types)+1 {
		bad("events", "names too many event types")
	}
	seen := map[string]bool{}
	for i, t := range req.Events {
		f := "events[" + strconv.Itoa(i) + "]"
		switch {
		case !KnownType(t):
			bad(f, "is not an event type")
		case seen[t]:
			bad(f, "is named twice")
		}
		seen[t] = true
	}
	if utf8.RuneCountInString(req.Description) > MaxDescription {
		bad("description", "must be at most 200 characters")
	} else if p := text.Problem(req.Description, text.Line); p != "" {
		bad("description", p)
	}
	if len(errs) > 0 {
		return apperr.Invalid("invalid_request", errs...)
	}
	return nil
}

// AAD binds a subscription's secret ciphertext to its tenant and id.
func AAD(tenant, id string) []byte { return []byte("webhook\x00" + tenant + "\x00" + id) }

// Create makes a subscription with a fresh secret. Errors: Check's; ErrTooMany; the store's.
func (w *Webhooks) Create(ctx context.Context, tenant string, by kernel.Actor, req CreateRequest) (Created, error) {
	if err := w.Check(req); err != nil {
		return Created{}, err
	}
	live, err := w.Store.List(ctx, tenant)
	if err != nil {
		return Created{}, err
	}
	if len(live) >= MaxSubscriptions {
		return Created{}, ErrTooMany
	}
	secret, err := webhook.NewSecret()
	if err != nil {
		return Created{}, err
	}
	now := w.Now().UTC()
	s := &Subscription{ID: w.NewID(), TenantID: tenant, URL: req.URL, Events: req.Events, Description: req.Description,
		State: StateActive, CreatedAt: now, CreatedBy: by.ID}
	if s.SecretEnc, err = w.Cipher.EncryptString(secret, AAD(tenant, s.ID)); err != nil {
		return Created{}, err
	}
	var ch kernel.Change
	ch.Record(EvCreated, kernel.NoSlot, now, map[string]any{"events": strings.Join(req.Events, ",")})
	ch.By(by)
	if err := w.Store.Create(ctx, s, ch); err != nil {
		return Created{}, err
	}
	return Created{Sub: s, Secret: secret}, nil
}

// List is the tenant's subscriptions (deleted ones left out), oldest first.
func (w *Webhooks) List(ctx context.Context, tenant string) ([]*Subscription, error) {
	return w.Store.List(ctx, tenant)
}

// Get is one of the tenant's subscriptions. Errors: ErrNotFound (also for another tenant's).
func (w *Webhooks) Get(ctx context.Context, tenant, id string) (*Subscription, error) {
	return w.Store.Load(ctx, tenant, id)
}

// Delete ends a subscription: nothing more is sent to it. Errors: ErrNotFound.
func (w *Webhooks) Delete(ctx context.Context, tenant, id string, by kernel.Actor) error {
	_, err := w.Store.Update(ctx, tenant, id, func(s *Subscription) (kernel.Change, error) {
		var ch kernel.Change
		s.State = StateDeleted
		ch.Record(EvDeleted, kernel.NoSlot, w.Now().UTC(), nil)
		ch.By(by)
		return ch, nil
	})
	return err
}

// Rotate gives a subscription a new secret; the old one keeps signing for RotationGrace (an
// earlier previous secret stops at once). Errors: ErrNotFound; ErrDisabled.
func (w *Webhooks) Rotate(ctx context.Context, tenant, id string, by kernel.Actor) (Created, error) {
	secret, err := webhook.NewSecret()
	if err != nil {
		return Created{}, err
	}
	enc, err := w.Cipher.EncryptString(secret, AAD(tenant, id))
	if err != nil {
		return Created{}, err
	}
	s, err := w.Store.Update(ctx, tenant, id, func(s *Subscription) (kernel.Change, error) {
		if s.State == StateDisabled {
			return kernel.Change{}, ErrDisabled
		}
		now := w.Now().UTC()
		s.PrevSecretEnc, s.PrevUntil, s.SecretEnc = s.SecretEnc, now.Add(RotationGrace), enc
		var ch kernel.Change
		ch.Record(EvRotated, kernel.NoSlot, now, nil)
		ch.By(by)
		return ch, nil
	})
	if err != nil {
		return Created{}, err
	}
	return Created{Sub: s, Secret: secret}, nil
}

// Deliveries is a page of the subscription's deliveries log, newest first. Errors:
// ErrNotFound; invalid_request for a bad limit or cursor.
func (w *Webhooks) Deliveries(ctx context.Context, tenant, id, cursor string, limit int) (Page, error) {
	if _, err := w.Store.Load(ctx, tenant, id); err != nil {
		return Page{}, err
	}
	return w.Store.Attempts(ctx, tenant, id, cursor, limit)
}

// Ping sends a webhook.ping event to the subscription now, once, and logs the attempt.
// Errors: ErrNotFound; ErrDisabled.
func (w *Webhooks) Ping(ctx context.Context, tenant, id string) (Attempt, error) {
	s, err := w.Store.Load(ctx, tenant, id)
	if err != nil {
		return Attempt{}, err
	}
	if s.State == StateDisabled {
		return Attempt{}, ErrDisabled
	}
	now := w.Now().UTC()
	env := Envelope{ID: "evt_" + w.NewID(), Type: Ping, Timestamp: now, TenantID: tenant,
		Data: Data{Object: "webhook", ID: s.ID, State: s.State, OccurredAt: now}}
	return w.Sender.Attempt(ctx, s, env, 1, now)
}
