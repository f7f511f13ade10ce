package event

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/webhook"
)

// Delivery policy (DESIGN 17).
const (
	// RetryFor is how long an event is retried after its first attempt.
	RetryFor = 24 * time.Hour
	// FailFor is how long a subscription may fail (no success since) before it is disabled.
	FailFor = 72 * time.Hour
)

// backoff is the delay before attempt n+1 after attempt n (n from 1); past its end the last
// delay repeats, until RetryFor.
var backoff = []time.Duration{5 * time.Second, 30 * time.Second, 2 * time.Minute, 10 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour, 4 * time.Hour}

// Backoff is the delay after the n-th failed attempt.
func Backoff(n int) time.Duration {
	if n < 1 {
		n = 1
	}
	if n > len(backoff) {
		return backoff[len(backoff)-1]
	}
	return backoff[n-1]
}

// Pending is an event on its way to one subscription: made by the fan-out, removed once
// delivered or given up.
type Pending struct {
	TenantID, SubID string
	Event           Envelope
	FirstAt         time.Time // the first attempt's due time
	Attempts        int       // attempts made
	NextAt          time.Time
	// Direct, when set, is a delivery to a URL of its own rather than to subscription SubID
	// (the workflow terminal callback): SubID then names its deliveries log.
	Direct *Direct
}

// Direct is a delivery that is not an event to a subscription: its own URL and body, signed by
// the Sender's DirectClient (its scheme, e.g. X-Esign-Signature under WEBHOOK_SECRETS), with
// Pending.Event.ID as its idempotency key. Ref names what it is for (the workflow id).
type Direct struct {
	URL  string          `json:"url"`
	Body json.RawMessage `json:"body"`
	Ref  string          `json:"ref"`
}

// Queue keeps pending deliveries (webhookstore.Store): each in its subscription's partition with
// an entry in a sharded schedule, so a timer finds the due ones without scanning.
type Queue interface {
	Enqueue(ctx context.Context, p Pending) error
	DuePending(ctx context.Context, now time.Time, limit int) ([]Pending, error)
	Reschedule(ctx context.Context, p Pending, prevAt time.Time) error
	Done(ctx context.Context, p Pending) error
}

// Sender POSTs events to subscriptions and logs each attempt.
type Sender struct {
	Store  Store
	Queue  Queue
	Cipher Cipher
	Client Poster // a webhook client with the outbound URL policy (webhook.NewUnsigned + WithPolicy)
	Now    func() time.Time
	// DirectClient posts the Direct deliveries with its own signing scheme (webhook.New with
	// the deployment's secret); nil when none is configured (a Direct delivery then fails once,
	// code webhook_not_configured).
	DirectClient Poster
	// OnDirect, when set, is told of each Direct attempt after it is logged, with a short
	// code when there was no answer (the workflow audits its callback with it).
	OnDirect func(ctx context.Context, p Pending, a Attempt, code string) error
}

// secrets are the secrets that sign for s at now: the current one, and the previous one during
// its grace.
func (d *Sender) secrets(s *Subscription, now time.Time) ([]string, error) {
	cur, err := d.Cipher.DecryptString(s.SecretEnc, AAD(s.TenantID, s.ID))
	if err != nil {
		return nil, err
	}
	out := []string{cur}
	if s.PrevSecretEnc != "" && now.Before(s.PrevUntil) {
		prev, err := d.Cipher.DecryptString(s.PrevSecretEnc, AAD(s.TenantID, s.ID))
		if err != nil {
			return nil, err
		}
		out = append(out, prev)
	}
	return out, nil
}

// Attempt POSTs env to s once (attempt n) and logs it; the outcome is delivered or failed
// (the caller decides on retries and rewrites it). Errors: the store's and the cipher's; a
// failed POST is an outcome, not an error.
func (d *Sender) Attempt(ctx context.Context, s *Subscription, env Envelope, n int, now time.Time) (Attempt, error) {
	a, err := d.post(ctx, s, env, n, now)
	if err != nil {
		return a, err
	}
	return a, d.Store.AddAttempt(ctx, s.TenantID, s.ID, a)
}

func (d *Sender) post(ctx context.Context, s *Subscription, env Envelope, n int, now time.Time) (Attempt, error) {
	a := Attempt{EventID: env.ID, Type: env.Type, At: now, Attempt: n}
	secrets, err := d.secrets(s, now)
	if err != nil {
		return a, err
	}
	body, err := env.Body()
	if err != nil {
		return a, err
	}
	start := d.Now()
	status, perr := d.Client.Post(ctx, webhook.Request{URL: s.URL, Body: body, IdempotencyKey: env.ID, Secrets: secrets})
	a.Status, a.DurationMs = status, d.Now().Sub(start).Milliseconds()
	a.Outcome = OutcomeDelivered
	if perr != nil {
		a.Outcome, a.Error = OutcomeFailed, errText(perr)
	}
	return a, nil
}

// errText is what the log says of a failed attempt: the client's error names statuses and
// causes, never a body or a secret.
func errText(err error) string {
	s := err.Error()
	if len(s) > 300 {
		s = s[:300]
	}
	return s
}

// Deliver makes the next attempt of p: on success it is done and the subscription's failing
// mark is cleared; on a retryable failure within RetryFor it is due again after Backoff; else it
// is given up. A subscription failing for FailFor is disabled with its reason. A subscription
// deleted or disabled meanwhile drops p. Errors: the store's (p stays due and is tried again).
func (d *Sender) Deliver(ctx context.Context, p Pending) error {
	now := d.Now().UTC()
	if p.Direct != nil {
		return d.deliverDirect(ctx, p, now)
	}
	s, err := d.Store.Load(ctx, p.TenantID, p.SubID)
	if errors.Is(err, ErrNotFound) {
		return d.Queue.Done(ctx, p)
	}
	if err != nil {
		return err
	}
	if s.State != StateActive {
		return d.Queue.Done(ctx, p)
	}
	a, err := d.post(ctx, s, p.Event, p.Attempts+1, now)
	if err != nil {
		return err
	}
	retry := a.Outcome == OutcomeFailed && now.Sub(p.FirstAt) < RetryFor
	if a.Outcome == OutcomeFailed && retry {
		a.Outcome = OutcomeRetrying
	}
	disable := a.Outcome != OutcomeDelivered && !s.FailingSince.IsZero() && now.Sub(s.FailingSince) >= FailFor
	if disable {
		a.Outcome = OutcomeDisabled
	}
	if err := d.Store.AddAttempt(ctx, s.TenantID, s.ID, a); err != nil {
		return err
	}
	if err := d.mark(ctx, s, a, now, disable); err != nil {
		return err
	}
	return d.next(ctx, p, a, now)
}

// next is p after attempt a: due again after Backoff when it is retrying, else removed.
func (d *Sender) next(ctx context.Context, p Pending, a Attempt, now time.Time) error {
	if a.Outcome == OutcomeRetrying {
		prev := p.NextAt
		p.Attempts++
		p.NextAt = now.Add(Backoff(p.Attempts))
		return d.Queue.Reschedule(ctx, p, prev)
	}
	return d.Queue.Done(ctx, p)
}

// deliverDirect is Deliver for a Direct delivery: the same attempts, back-off, retry window
// and deliveries log (under p.SubID), without a subscription to load, mark or disable. A
// permanent answer (a 4xx but 408/425/429, a refused URL) ends it at once: the callback's
// receiver said no.
func (d *Sender) deliverDirect(ctx context.Context, p Pending, now time.Time) error {
	a := Attempt{EventID: p.Event.ID, Type: p.Event.Type, At: now, Attempt: p.Attempts + 1, Outcome: OutcomeDelivered}
	var perr error
	if d.DirectClient == nil {
		perr = errNotConfigured
	} else {
		start := d.Now()
		a.Status, perr = d.DirectClient.Post(ctx, webhook.Request{URL: p.Direct.URL, Body: p.Direct.Body, IdempotencyKey: p.Event.ID})
		a.DurationMs = d.Now().Sub(start).Milliseconds()
	}
	code := ""
	if perr != nil {
		a.Error, code = errText(perr), failCode(perr)
		a.Outcome = OutcomeFailed
		if errors.Is(perr, webhook.ErrRetryable) && now.Sub(p.FirstAt) < RetryFor {
			a.Outcome = OutcomeRetrying
		}
	}
	if err := d.Store.AddAttempt(ctx, p.TenantID, p.SubID, a); err != nil {
		return err
	}
	if d.OnDirect != nil {
		if err := d.OnDirect(ctx, p, a, code); err != nil {
			return err
		}
	}
	return d.next(ctx, p, a, now)
}

var errNotConfigured = errors.New("no signing secret is configured")

// failCode is the short code of a failed Direct attempt that had no answer: not_configured,
// url_refused, timeout, network or invalid_request; empty when the receiver answered.
func failCode(err error) string {
	if errors.Is(err, errNotConfigured) {
		return "webhook_not_configured"
	}
	var we *webhook.Error
	if !errors.As(err, &we) {
		return "network"
	}
	switch {
	case we.Status != 0:
		return ""
	case errors.Is(err, webhook.ErrURLRefused):
		return "url_refused"
	case we.Timeout():
		return "timeout"
	case we.Retryable:
		return "network"
	}
	return "invalid_request"
}

// mark keeps the subscription's failing state: cleared by a success, set by the first failure,
// and the subscription disabled with its reason after FailFor of failures.
func (d *Sender) mark(ctx context.Context, s *Subscription, a Attempt, now time.Time, disable bool) error {
	ok := a.Outcome == OutcomeDelivered
	if ok == s.FailingSince.IsZero() && !disable {
		return nil // nothing changes
	}
	_, err := d.Store.Update(ctx, s.TenantID, s.ID, func(s *Subscription) (kernel.Change, error) {
		var ch kernel.Change
		switch {
		case s.State != StateActive:
		case ok:
			s.FailingSince = time.Time{}
		case disable || (!s.FailingSince.IsZero() && now.Sub(s.FailingSince) >= FailFor):
			s.State, s.DisabledAt = StateDisabled, now
			s.DisabledReason = fmt.Sprintf("every delivery failed since %s (last: %s)", s.FailingSince.Format(time.RFC3339), lastFailure(a))
			ch.Record(EvDisabled, kernel.NoSlot, now, map[string]any{"failingSince": s.FailingSince.Format(time.RFC3339)})
			ch.By(kernel.Actor{Kind: "system", ID: "webhooks"})
		case s.FailingSince.IsZero():
			s.FailingSince = now
		}
		return ch, nil
	})
	return err
}

func lastFailure(a Attempt) string {
	if a.Status != 0 {
		return fmt.Sprintf("status %d", a.Status)
	}
	return "no answer"
}

// OutboxSource is the kernel's outbox (aggstore.Outbox): the due aggregates with unsent events.
type OutboxSource interface {
	Due(ctx context.Context, now time.Time, limit int) ([]OutboxBatch, error)
}

// OutboxBatch is one aggregate's unsent events; Done removes them (after they were fanned out).
type OutboxBatch interface {
	Events() []kernel.Published
	Done(ctx context.Context, ev kernel.Published) error
	Finish(ctx context.Context) error
}

// Fanout turns the kernel's outbox rows into pending deliveries, one per matching active
// subscription of the event's tenant, then removes them. A fan-out killed half way is run again
// by the next timer: Enqueue is keyed by (subscription, event id), so nothing is lost or doubled.
type Fanout struct {
	Source OutboxSource
	Store  Store
	Queue  Queue
	Now    func() time.Time
}

// Run fans out up to limit due aggregates' events. It returns how many events it fanned out.
func (f *Fanout) Run(ctx context.Context, limit int) (int, error) {
	now := f.Now().UTC()
	batches, err := f.Source.Due(ctx, now, limit)
	if err != nil {
		return 0, err
	}
	n := 0
	subs := map[string][]*Subscription{}
	for _, b := range batches {
		for _, ev := range b.Events() {
			list, ok := subs[ev.TenantID]
			if !ok {
				if list, err = f.Store.List(ctx, ev.TenantID); err != nil {
					return n, err
				}
				subs[ev.TenantID] = list
			}
			env := FromPublished(ev)
			for _, s := range list {
				if s.State != StateActive || !Matches(s.Events, ev.Type) || s.CreatedAt.After(ev.At) {
					continue
				}
				if err := f.Queue.Enqueue(ctx, Pending{TenantID: s.TenantID, SubID: s.ID, Event: env, FirstAt: now, NextAt: now}); err != nil {
					return n, err
				}
			}
			if err := b.Done(ctx, ev); err != nil {
				return n, err
			}
			n++
		}
		if err := b.Finish(ctx); err != nil {
			return n, err
		}
	}
	return n, nil
}

// FromPublished is the envelope of an outbox event: ids, state and times only.
func FromPublished(ev kernel.Published) Envelope {
	d := Data{Object: ev.Object, ID: ev.AggregateID, State: ev.State, OccurredAt: ev.At}
	if ev.Slot != kernel.NoSlot {
		slot := ev.Slot
		d.Slot = &slot
	}
	return Envelope{ID: ev.ID, Type: ev.Type, Timestamp: ev.At, TenantID: ev.TenantID, Data: d}
}

// Parallel is how many subscriptions Sends posts to at once: a receiver that times out holds
// up only its own subscription's deliveries.
const Parallel = 8

// Sends delivers up to limit due pending deliveries: each subscription's in turn (its failing
// mark is updated by one attempt at a time), up to Parallel subscriptions at once. It returns
// how many it attempted and the first error (the others are still tried; a failed one stays
// due).
func (d *Sender) Sends(ctx context.Context, limit int) (int, error) {
	due, err := d.Queue.DuePending(ctx, d.Now().UTC(), limit)
	if err != nil {
		return 0, err
	}
	var order []string
	bySub := map[string][]Pending{}
	for _, p := range due {
		k := p.TenantID + "|" + p.SubID
		if p.Direct != nil {
			k += "|" + p.Event.ID // no failing mark to keep: each on its own, a slow one holds up no other
		}
		if _, ok := bySub[k]; !ok {
			order = append(order, k)
		}
		bySub[k] = append(bySub[k], p)
	}
	var (
		mu    sync.Mutex
		first error
		wg    sync.WaitGroup
		slots = make(chan struct{}, Parallel)
	)
	for _, k := range order {
		wg.Add(1)
		slots <- struct{}{}
		go func(list []Pending) {
			defer func() { <-slots; wg.Done() }()
			for _, p := range list {
				if err := d.Deliver(ctx, p); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}(bySub[k])
	}
	wg.Wait()
	return len(due), first
}
