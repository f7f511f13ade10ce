// Package deliverystore keeps delivery sessions in Azure Table storage (DESIGN 3): one partition
// per delivery (PartitionKey = deliveryId) holding the session row and one row per audit event.
// Every state change is written with its audit events in one entity-group transaction
// conditioned on the session row's ETag, so the trail can never miss or invent a transition and
// two concurrent changes cannot both win. Listing by tenant and correlationId goes through
// index rows in a second table (PartitionKey "corr-<tenant>", RowKey "<correlationId>|<deliveryId>").
package deliverystore

import (
	"context"
	"errors"
	"sort"
	"strings"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/azure/tablestore"
	"github.com/esign-svc/esign/shared/delivery"
)

// Default table names.
const (
	TableSessions = "deliveries"
	TableIndex    = "deliveryindex"
)

// Errors the store returns besides the tablestore ones.
var (
	ErrNotFound   = &apperr.Error{Kind: apperr.KindNotFound, Code: "delivery_not_found", Detail: "no such delivery session"}
	ErrConcurrent = &apperr.Error{Kind: apperr.KindConflict, Code: "concurrent_update", Detail: "the delivery was changed by another request; nothing was written"}
)

// Store is the table-backed delivery store. Safe for concurrent use.
type Store struct {
	t   *tablestore.Store
	idx *tablestore.Store
}

// New opens the store on two tables of the account. It does no I/O (call Ensure at start).
func New(acct *azconn.Account, sessionsTable, indexTable string) (*Store, error) {
	t, err := tablestore.New(acct, sessionsTable)
	if err != nil {
		return nil, err
	}
	idx, err := tablestore.New(acct, indexTable)
	if err != nil {
		return nil, err
	}
	return &Store{t: t, idx: idx}, nil
}

// Ensure creates the tables when missing.
func (s *Store) Ensure(ctx context.Context) error {
	if err := s.t.EnsureTable(ctx); err != nil {
		return err
	}
	return s.idx.EnsureTable(ctx)
}

func pkCorrelation(tenant string) string { return "corr-" + tenant }

// Create stores a new session with the events of its Start change: first its index row (an
// index row without a session is skipped by List), then the session row and the events in one
// transaction. Errors: the tablestore ones (entity_exists if the deliveryId is taken).
func (s *Store) Create(ctx context.Context, sess *delivery.Session, ch delivery.Change) error {
	if _, err := s.idx.Upsert(ctx, tablestore.Entity{PartitionKey: pkCorrelation(sess.TenantID),
		RowKey: sess.CorrelationID + "|" + sess.DeliveryID, Props: map[string]any{"deliveryId": sess.DeliveryID}}); err != nil {
		return err
	}
	row, err := sessionEntity(sess)
	if err != nil {
		return err
	}
	row.ETag = ""
	ops := []tablestore.Op{tablestore.InsertOp(row)}
	evOps, err := eventOps(sess, ch)
	if err != nil {
		return err
	}
	return s.t.Transact(ctx, sess.DeliveryID, append(ops, evOps...))
}

// Load reads a session. Errors: ErrNotFound; the tablestore ones.
func (s *Store) Load(ctx context.Context, deliveryID string) (*delivery.Session, error) {
	if deliveryID == "" {
		return nil, ErrNotFound
	}
	e, err := s.t.Get(ctx, deliveryID, rowSession)
	if apperr.KindOf(err) == apperr.KindNotFound {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return sessionFrom(e)
}

// Apply writes the session row (if its ETag still matches) and the change's events in one
// transaction. A lost race is ErrConcurrent and nothing is written.
func (s *Store) Apply(ctx context.Context, sess *delivery.Session, ch delivery.Change) error {
	row, err := sessionEntity(sess)
	if err != nil {
		return err
	}
	evOps, err := eventOps(sess, ch)
	if err != nil {
		return err
	}
	err = s.t.Transact(ctx, sess.DeliveryID, append([]tablestore.Op{tablestore.ReplaceOp(row)}, evOps...))
	if err == nil {
		return nil
	}
	switch apperr.KindOf(err) {
	case apperr.KindPrecondition, apperr.KindConflict:
		return ErrConcurrent
	case apperr.KindNotFound:
		return ErrNotFound
	}
	return err
}

// Step is a transition on a freshly loaded session.
type Step func(s *delivery.Session) (delivery.Change, error)

// Update loads the session, runs step and applies its change. When another request changed the
// session meanwhile it reloads and runs step once more; a second lost race is ErrConcurrent. A
// step error is returned with the change it made so far (which the caller may persist with
// Apply when a failure must be recorded) and nothing is written; an empty change writes nothing.
func (s *Store) Update(ctx context.Context, deliveryID string, step Step) (*delivery.Session, delivery.Change, error) {
	for attempt := 0; ; attempt++ {
		sess, err := s.Load(ctx, deliveryID)
		if err != nil {
			return nil, delivery.Change{}, err
		}
		ch, err := step(sess)
		if err != nil {
			return sess, ch, err
		}
		if ch.Empty() {
			return sess, ch, nil
		}
		err = s.Apply(ctx, sess, ch)
		if errors.Is(err, ErrConcurrent) && attempt == 0 {
			continue
		}
		if err != nil {
			return nil, ch, err
		}
		return sess, ch, nil
	}
}

func eventOps(sess *delivery.Session, ch delivery.Change) ([]tablestore.Op, error) {
	ops := make([]tablestore.Op, 0, len(ch.Events))
	for i, ev := range ch.Events {
		e, err := eventEntity(sess, ev, i)
		if err != nil {
			return nil, err
		}
		ops = append(ops, tablestore.InsertOp(e))
	}
	return ops, nil
}

// Events is the session's audit trail in time order.
func (s *Store) Events(ctx context.Context, deliveryID string) ([]AuditEvent, error) {
	rows, err := s.t.Query(ctx, deliveryID, &tablestore.QueryOptions{RowKeyPrefix: prefixEvent})
	if err != nil {
		return nil, err
	}
	out := make([]AuditEvent, 0, len(rows))
	for _, r := range rows {
		out = append(out, eventFrom(r))
	}
	return out, nil
}

// ListByCorrelation lists the tenant's sessions of a correlationId, oldest first. Errors: the
// tablestore ones.
func (s *Store) ListByCorrelation(ctx context.Context, tenantID, correlationID string) ([]*delivery.Session, error) {
	var out []*delivery.Session
	err := s.idx.Each(ctx, pkCorrelation(tenantID), &tablestore.QueryOptions{RowKeyPrefix: correlationID + "|"}, func(e tablestore.Entity) error {
		if !strings.HasPrefix(e.RowKey, correlationID+"|") {
			return nil
		}
		sess, err := s.Load(ctx, e.String("deliveryId"))
		if errors.Is(err, ErrNotFound) {
			return nil // an index row whose Create did not finish
		}
		if err != nil {
			return err
		}
		if sess.TenantID == tenantID && sess.CorrelationID == correlationID {
			out = append(out, sess)
		}
		return nil
	})
	if apperr.KindOf(err) == apperr.KindNotFound {
		return nil, nil
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out, err
}
