// Package webhookstore keeps the tenants' webhook subscriptions (shared/event) on the aggregate
// kernel (shared/kernel/aggstore): one partition per subscription, a hash of (tenant, id), so
// another tenant's id reads as a missing one. The partition holds the subscription row and its
// audit rows (webhook.created, webhook.secret_rotated, webhook.deleted, webhook.disabled), its
// deliveries log (one row per attempt, newest first) and its pending deliveries (one row per
// event on its way). The index table lists each tenant's subscriptions and holds the sharded
// schedule of the pending deliveries' next attempts.
package webhookstore

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/azure/tablestore"
	"github.com/esign-svc/esign/shared/event"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/kernel/aggstore"
)

// Default table names.
const (
	TableWebhooks = "webhooks"
	TableIndex    = "webhookindex"
)

const (
	rowSub       = "sub"
	prefixAtt    = "att-"
	prefixPend   = "pend-"
	scheduleSend = "whsend"
)

var kind = aggstore.Kind[*event.Subscription]{
	Root:     rowSub,
	NotFound: event.ErrNotFound,
	ID:       func(s *event.Subscription) string { return partition(s.TenantID, s.ID) },
	Encode:   encode,
	Decode:   decode,
	// The failing mark changes without an audit event: always write.
	WriteEmpty: true,
}

var (
	_ event.Store = (*Store)(nil)
	_ event.Queue = (*Store)(nil)
)

// Store is the subscription store. Safe for concurrent use.
type Store struct {
	tab   *aggstore.Table[*event.Subscription]
	x     *aggstore.Index
	sends *aggstore.Schedule
}

// New opens the store (no I/O; Ensure creates the tables).
func New(acct *azconn.Account, table, index string) (*Store, error) {
	tab, x, err := aggstore.Open(acct, table, index, kind)
	if err != nil {
		return nil, err
	}
	return &Store{tab: tab, x: x, sends: aggstore.NewSchedule(x, scheduleSend)}, nil
}

// Ensure creates the tables when missing and starts the send schedule.
func (s *Store) Ensure(ctx context.Context, now time.Time) error {
	if err := aggstore.Ensure(ctx, s.tab, s.x); err != nil {
		return err
	}
	return s.sends.Start(ctx, now)
}

func partition(tenant, id string) string {
	return aggstore.Key{Kind: "whsub", Scope: tenant, Value: id}.Partition()
}

func tenantKey(tenant string) aggstore.Key { return aggstore.Key{Kind: "whten", Scope: tenant} }

// Create lists the subscription under its tenant, then writes it with its first change.
func (s *Store) Create(ctx context.Context, sub *event.Subscription, ch kernel.Change) error {
	if err := s.x.AddMember(ctx, tenantKey(sub.TenantID), sub.ID, nil); err != nil {
		return err
	}
	return s.tab.Create(ctx, sub, ch)
}

// Load reads tenant's subscription. Errors: event.ErrNotFound (another tenant's, a deleted
// one); the tablestore ones.
func (s *Store) Load(ctx context.Context, tenant, id string) (*event.Subscription, error) {
	sub, err := s.tab.Load(ctx, partition(tenant, id))
	if err != nil {
		return nil, err
	}
	if sub.TenantID != tenant || sub.State == event.StateDeleted {
		return nil, event.ErrNotFound
	}
	return sub, nil
}

// List is the tenant's subscriptions, deleted ones left out, oldest first.
func (s *Store) List(ctx context.Context, tenant string) ([]*event.Subscription, error) {
	members, err := s.x.Members(ctx, tenantKey(tenant))
	if err != nil {
		return nil, err
	}
	var out []*event.Subscription
	for _, m := range members {
		sub, err := s.Load(ctx, tenant, m.String("member"))
		if apperr.KindOf(err) == apperr.KindNotFound {
			continue // a create that died after listing, or a deleted one
		}
		if err != nil {
			return nil, err
		}
		out = append(out, sub)
	}
	slices.SortFunc(out, func(a, b *event.Subscription) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return out, nil
}

// Update loads the subscription, runs step and writes its change (the kernel's bounded retry).
// Errors: event.ErrNotFound; step's; the kernel's.
func (s *Store) Update(ctx context.Context, tenant, id string, step func(*event.Subscription) (kernel.Change, error)) (*event.Subscription, error) {
	sub, _, err := s.tab.Update(ctx, partition(tenant, id), aggstore.Plain(func(sub *event.Subscription) (kernel.Change, error) {
		if sub.TenantID != tenant || sub.State == event.StateDeleted {
			return kernel.Change{}, event.ErrNotFound
		}
		return step(sub)
	}))
	return sub, err
}

// AddAttempt appends one attempt to the deliveries log.
func (s *Store) AddAttempt(ctx context.Context, tenant, id string, a event.Attempt) error {
	b, err := json.Marshal(a)
	if err != nil {
		return err
	}
	rk := fmt.Sprintf("%s%020d-%s-%04d", prefixAtt, int64(^uint64(0)>>1)-a.At.UnixNano(), a.EventID, a.Attempt)
	_, err = s.tab.Rows().Upsert(ctx, tablestore.Entity{PartitionKey: partition(tenant, id), RowKey: rk,
		Props: map[string]any{"attempt": string(b)}})
	return err
}

// Attempts is a page of the deliveries log, newest first; cursor is the previous page's Next.
// Errors: invalid_request naming cursor or limit.
func (s *Store) Attempts(ctx context.Context, tenant, id, cursor string, limit int) (event.Page, error) {
	if limit < 1 || limit > event.MaxPage {
		return event.Page{}, apperr.Invalid("invalid_request", apperr.Field("limit", fmt.Sprintf("must be 1 to %d", event.MaxPage)))
	}
	if cursor != "" && (!strings.HasPrefix(cursor, prefixAtt) || len(cursor) > 300) {
		return event.Page{}, apperr.Invalid("invalid_request", apperr.Field("cursor", "is not a cursor of this log"))
	}
	opts := &tablestore.QueryOptions{RowKeyPrefix: prefixAtt, Limit: limit + 1}
	if cursor != "" {
		opts.Filter = "RowKey gt " + tablestore.Quote(cursor)
	}
	rows, err := s.tab.Rows().Query(ctx, partition(tenant, id), opts)
	if err != nil {
		return event.Page{}, err
	}
	var p event.Page
	for i, r := range rows {
		if i == limit {
			p.Next = rows[i-1].RowKey
			break
		}
		var a event.Attempt
		if err := json.Unmarshal([]byte(r.String("attempt")), &a); err != nil {
			return event.Page{}, fmt.Errorf("webhookstore: attempt %s: %w", r.RowKey, err)
		}
		p.Items = append(p.Items, a)
	}
	return p, nil
}

func sendID(p event.Pending) string { return p.TenantID + "|" + p.SubID + "|" + p.Event.ID }

func pendingRow(p event.Pending) (tablestore.Entity, error) {
	b, err := json.Marshal(p.Event)
	if err != nil {
		return tablestore.Entity{}, err
	}
	props := map[string]any{"event": string(b), "firstAtNs": p.FirstAt.UnixNano(), "attempts": int64(p.Attempts), "nextAtNs": p.NextAt.UnixNano()}
	if p.Direct != nil {
		d, err := json.Marshal(p.Direct)
		if err != nil {
			return tablestore.Entity{}, err
		}
		props["direct"] = string(d)
	}
	return tablestore.Entity{PartitionKey: partition(p.TenantID, p.SubID), RowKey: prefixPend + p.Event.ID, Props: props}, nil
}

// Enqueue makes p due at p.NextAt: its schedule entry first, then its row (a row never exists
// without an entry that finds it). An event already pending for the subscription stays as it
// is (a fan-out run again).
func (s *Store) Enqueue(ctx context.Context, p event.Pending) error {
	row, err := pendingRow(p)
	if err != nil {
		return err
	}
	if err := s.sends.Add(ctx, sendID(p), p.NextAt); err != nil {
		return err
	}
	_, err = s.tab.Rows().Insert(ctx, row)
	if apperr.KindOf(err) == apperr.KindConflict {
		return nil // the stale entry is dropped when it is due
	}
	return err
}

// DuePending lists up to limit deliveries due at now. A schedule entry whose row is gone or
// has moved on is removed.
func (s *Store) DuePending(ctx context.Context, now time.Time, limit int) ([]event.Pending, error) {
	items, err := s.sends.Due(ctx, now, limit)
	if err != nil {
		return nil, err
	}
	var out []event.Pending
	for _, it := range items {
		parts := strings.SplitN(it.ID, "|", 3)
		if len(parts) != 3 {
			_ = s.sends.Remove(ctx, it.ID, it.At)
			continue
		}
		row, err := s.tab.Rows().Get(ctx, partition(parts[0], parts[1]), prefixPend+parts[2])
		if apperr.KindOf(err) == apperr.KindNotFound {
			if err := s.sends.Remove(ctx, it.ID, it.At); err != nil {
				return nil, err
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		if row.Int64("nextAtNs") != it.At.UnixNano() {
			if err := s.sends.Remove(ctx, it.ID, it.At); err != nil {
				return nil, err
			}
			continue
		}
		p := event.Pending{TenantID: parts[0], SubID: parts[1], FirstAt: kernel.FromNanos(row.Int64("firstAtNs")),
			Attempts: int(row.Int64("attempts")), NextAt: it.At}
		if err := json.Unmarshal([]byte(row.String("event")), &p.Event); err != nil {
			return nil, fmt.Errorf("webhookstore: pending %s: %w", row.RowKey, err)
		}
		if d := row.String("direct"); d != "" {
			p.Direct = &event.Direct{}
			if err := json.Unmarshal([]byte(d), p.Direct); err != nil {
				return nil, fmt.Errorf("webhookstore: pending %s: %w", row.RowKey, err)
			}
		}
		out = append(out, p)
	}
	return out, nil
}

// Reschedule moves p (due at prevAt) to p.NextAt with its new attempt count.
func (s *Store) Reschedule(ctx context.Context, p event.Pending, prevAt time.Time) error {
	row, err := pendingRow(p)
	if err != nil {
		return err
	}
	if err := s.sends.Add(ctx, sendID(p), p.NextAt); err != nil {
		return err
	}
	if _, err := s.tab.Rows().Upsert(ctx, row); err != nil {
		return err
	}
	return s.sends.Remove(ctx, sendID(p), prevAt)
}

// Done removes p: its row, then its entry.
func (s *Store) Done(ctx context.Context, p event.Pending) error {
	err := s.tab.Rows().Delete(ctx, partition(p.TenantID, p.SubID), prefixPend+p.Event.ID, "")
	if err != nil && apperr.KindOf(err) != apperr.KindNotFound {
		return err
	}
	return s.sends.Remove(ctx, sendID(p), p.NextAt)
}

func encode(sub *event.Subscription) (tablestore.Entity, error) {
	return tablestore.Entity{PartitionKey: partition(sub.TenantID, sub.ID), RowKey: rowSub, ETag: sub.ETag, Props: map[string]any{
		"id": sub.ID, "tenantId": sub.TenantID, "url": sub.URL, "events": strings.Join(sub.Events, " "),
		"description": sub.Description, "secretEnc": sub.SecretEnc, "prevSecretEnc": sub.PrevSecretEnc,
		"prevUntilNs": kernel.Nanos(sub.PrevUntil), "state": sub.State, "disabledReason": sub.DisabledReason,
		"disabledAtNs": kernel.Nanos(sub.DisabledAt), "failingSinceNs": kernel.Nanos(sub.FailingSince),
		"createdAtNs": kernel.Nanos(sub.CreatedAt), "createdBy": sub.CreatedBy,
	}}, nil
}

func decode(e tablestore.Entity) (*event.Subscription, error) {
	sub := &event.Subscription{ID: e.String("id"), TenantID: e.String("tenantId"), URL: e.String("url"),
		Events: strings.Fields(e.String("events")), Description: e.String("description"), SecretEnc: e.String("secretEnc"),
		PrevSecretEnc: e.String("prevSecretEnc"), PrevUntil: kernel.FromNanos(e.Int64("prevUntilNs")), State: e.String("state"),
		DisabledReason: e.String("disabledReason"), DisabledAt: kernel.FromNanos(e.Int64("disabledAtNs")),
		FailingSince: kernel.FromNanos(e.Int64("failingSinceNs")), CreatedAt: kernel.FromNanos(e.Int64("createdAtNs")),
		CreatedBy: e.String("createdBy"), ETag: e.ETag}
	if sub.ID == "" || sub.TenantID == "" {
		return nil, fmt.Errorf("webhookstore: subscription row %s has no id", e.PartitionKey)
	}
	return sub, nil
}
