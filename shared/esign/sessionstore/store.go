// Package sessionstore keeps signing sessions in Azure Table storage (DESIGN section 3): one
// partition per session (PartitionKey = groupId) holding the session row, a row per slot, a row
// per audit event, the signature rows and the callback ids seen. Every state change is written
// with its audit events in one entity-group transaction conditioned on the session's ETag, so the
// audit trail can never miss or invent a transition and two concurrent changes cannot both win.
// Lookups by correlationId, slot sessionId and expiry go through small index rows in a second
// table.
package sessionstore

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/azure/tablestore"
	"github.com/esign-svc/esign/shared/esign"
)

// Index partitions.
const (
	pkSessionID = "sid"
	pkExpiry    = "expiry"
)

func pkCorrelation(tenant string) string { return "corr-" + tenant }

// Errors the store returns besides the tablestore ones.
var (
	ErrNotFound   = &apperr.Error{Kind: apperr.KindNotFound, Code: "session_not_found", Detail: "no such signing session"}
	ErrConcurrent = &apperr.Error{Kind: apperr.KindConflict, Code: "concurrent_update", Detail: "the session was changed by another request; nothing was written"}
	ErrReplayed   = &apperr.Error{Kind: apperr.KindUnauthenticated, Code: "callback_replayed", Detail: "this callback was already accepted"}
)

// Store is the table-backed session store.
type Store struct {
	t   *tablestore.Store
	idx *tablestore.Store
}

// New opens the store on two tables (sessions, index) of the account.
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

// LiveConflict is the 409 for a second session on a correlationId that has a live one; it names
// the live groupId.
func LiveConflict(groupID string) error {
	return &apperr.Error{Kind: apperr.KindConflict, Code: "session_exists",
		Detail: "a live signing session exists for this correlationId", Extra: map[string]any{"groupId": groupID}}
}

// Create stores a new session, its slots and the events of its Start change. It first claims the
// tenant's correlationId: when the session it points to is still live (pending, in_progress or
// sealing, and not past expiry) it returns LiveConflict and writes nothing.
func (s *Store) Create(ctx context.Context, sess *esign.Session, slots []esign.Slot, ch esign.Change, now time.Time) error {
	if err := s.claimCorrelation(ctx, sess, now); err != nil {
		return err
	}
	for i := range slots {
		_, err := s.idx.Upsert(ctx, tablestore.Entity{PartitionKey: pkSessionID, RowKey: slots[i].SessionID,
			Props: map[string]any{"groupId": sess.GroupID, "slotIndex": int64(slots[i].Index)}})
		if err != nil {
			return err
		}
	}
	if _, err := s.idx.Upsert(ctx, expiryEntity(sess)); err != nil {
		return err
	}
	ops := []tablestore.Op{tablestore.InsertOp(sessionEntity(sess))}
	for i := range slots {
		e, err := slotEntity(sess.GroupID, &slots[i])
		if err != nil {
			return err
		}
		ops = append(ops, tablestore.InsertOp(e))
	}
	evOps, err := eventOps(sess.GroupID, slots, ch)
	if err != nil {
		return err
	}
	return s.t.Transact(ctx, sess.GroupID, append(ops, evOps...))
}

func (s *Store) claimCorrelation(ctx context.Context, sess *esign.Session, now time.Time) error {
	pk, rk := pkCorrelation(sess.TenantID), sess.CorrelationID
	row := tablestore.Entity{PartitionKey: pk, RowKey: rk, Props: map[string]any{"groupId": sess.GroupID}}
	existing, err := s.idx.Get(ctx, pk, rk)
	switch {
	case apperr.KindOf(err) == apperr.KindNotFound:
		if _, err := s.idx.Insert(ctx, row); err != nil {
			if apperr.KindOf(err) == apperr.KindConflict {
				return s.claimCorrelation(ctx, sess, now) // lost a race: look at the winner
			}
			return err
		}
		return nil
	case err != nil:
		return err
	}
	prev := existing.String("groupId")
	if live, err := s.isLive(ctx, prev, now); err != nil {
		return err
	} else if live {
		return LiveConflict(prev)
	}
	row.ETag = existing.ETag
	if _, err := s.idx.Replace(ctx, row); err != nil {
		if apperr.KindOf(err) == apperr.KindPrecondition {
			return s.claimCorrelation(ctx, sess, now)
		}
		return err
	}
	return nil
}

func (s *Store) isLive(ctx context.Context, groupID string, now time.Time) (bool, error) {
	e, err := s.t.Get(ctx, groupID, rowSession)
	if apperr.KindOf(err) == apperr.KindNotFound {
		return false, nil // a claim whose session was never written
	}
	if err != nil {
		return false, err
	}
	prev := sessionFrom(e)
	if prev.State == esign.SessionSealing {
		return true, nil
	}
	return prev.State.Live() && !prev.Expired(now), nil
}

// Load reads a session and its slots (ordered by index). Missing -> ErrNotFound.
func (s *Store) Load(ctx context.Context, groupID string) (*esign.Session, []esign.Slot, error) {
	if groupID == "" {
		return nil, nil, ErrNotFound
	}
	rows, err := s.t.Query(ctx, groupID, &tablestore.QueryOptions{Filter: "RowKey eq 'session' or (RowKey ge 'slot-' and RowKey lt 'slot.')"})
	if err != nil {
		return nil, nil, err
	}
	var sess *esign.Session
	var slots []esign.Slot
	for _, r := range rows {
		switch {
		case r.RowKey == rowSession:
			sess = sessionFrom(r)
		case strings.HasPrefix(r.RowKey, prefixSlot):
			sl, err := slotFrom(r)
			if err != nil {
				return nil, nil, err
			}
			slots = append(slots, sl)
		}
	}
	if sess == nil {
		return nil, nil, ErrNotFound
	}
	sort.Slice(slots, func(i, j int) bool { return slots[i].Index < slots[j].Index })
	return sess, slots, nil
}

// Apply writes a transition: the session (if its ETag still matches), the slots the change
// touched (each on its own ETag), the change's audit events and any extra operations of the same
// partition (signature rows, callback ids), all in one transaction. A lost race is ErrConcurrent
// and nothing is written; a callback id already present is ErrReplayed.
func (s *Store) Apply(ctx context.Context, sess *esign.Session, slots []esign.Slot, ch esign.Change, extra ...tablestore.Op) error {
	ops := []tablestore.Op{tablestore.ReplaceOp(sessionEntity(sess))}
	for _, i := range ch.Slots {
		e, err := slotEntity(sess.GroupID, &slots[i])
		if err != nil {
			return err
		}
		ops = append(ops, tablestore.ReplaceOp(e))
	}
	evOps, err := eventOps(sess.GroupID, slots, ch)
	if err != nil {
		return err
	}
	ops = append(ops, evOps...)
	first := len(ops)
	ops = append(ops, extra...)
	err = s.t.Transact(ctx, sess.GroupID, ops)
	switch k := apperr.KindOf(err); {
	case err == nil:
	case k == apperr.KindPrecondition:
		return ErrConcurrent
	case k == apperr.KindConflict:
		if i, ok := tablestore.FailedOp(err); ok && i >= first && strings.HasPrefix(ops[i].Entity.RowKey, prefixCallbk) {
			return ErrReplayed
		}
		return ErrConcurrent
	default:
		return err
	}
	if !sess.State.Live() {
		// Best effort: a stale expiry row is skipped (and removed) by the expiry job.
		_ = s.idx.Delete(ctx, pkExpiry, expiryKey(sess), "")
	}
	return nil
}

// CallbackOnce is the extra operation that accepts a callback id once per session.
func CallbackOnce(groupID, callbackID string) tablestore.Op {
	return tablestore.InsertOp(tablestore.Entity{PartitionKey: groupID, RowKey: prefixCallbk + callbackID,
		Props: map[string]any{"seenAtNs": time.Now().UnixNano()}})
}

func eventOps(groupID string, slots []esign.Slot, ch esign.Change) ([]tablestore.Op, error) {
	ops := make([]tablestore.Op, 0, len(ch.Events))
	for i, ev := range ch.Events {
		hash := ""
		if ev.Slot >= 0 && ev.Slot < len(slots) {
			hash = slots[ev.Slot].EmailHash
		}
		e, err := eventEntity(groupID, ev, i, hash)
		if err != nil {
			return nil, err
		}
		ops = append(ops, tablestore.InsertOp(e))
	}
	return ops, nil
}

// Events is the session's audit trail in time order.
func (s *Store) Events(ctx context.Context, groupID string) ([]AuditEvent, error) {
	rows, err := s.t.Query(ctx, groupID, &tablestore.QueryOptions{RowKeyPrefix: prefixEvent})
	if err != nil {
		return nil, err
	}
	out := make([]AuditEvent, 0, len(rows))
	for _, r := range rows {
		out = append(out, eventFrom(r))
	}
	return out, nil
}

// GroupByCorrelation is the groupId of the tenant's latest session for a correlationId.
func (s *Store) GroupByCorrelation(ctx context.Context, tenantID, correlationID string) (string, error) {
	e, err := s.idx.Get(ctx, pkCorrelation(tenantID), correlationID)
	if apperr.KindOf(err) == apperr.KindNotFound {
		return "", ErrNotFound
	}
	if err != nil {
		return "", err
	}
	return e.String("groupId"), nil
}

// SlotBySessionID finds the session and slot of a slot's sessionId.
func (s *Store) SlotBySessionID(ctx context.Context, sessionID string) (groupID string, slot int, err error) {
	e, err := s.idx.Get(ctx, pkSessionID, sessionID)
	if apperr.KindOf(err) == apperr.KindNotFound {
		return "", 0, ErrNotFound
	}
	if err != nil {
		return "", 0, err
	}
	return e.String("groupId"), int(e.Int64("slotIndex")), nil
}

func expiryKey(sess *esign.Session) string {
	return fmt.Sprintf("%020d-%s", sess.ExpiresAt.UnixNano(), sess.GroupID)
}

func expiryEntity(sess *esign.Session) tablestore.Entity {
	return tablestore.Entity{PartitionKey: pkExpiry, RowKey: expiryKey(sess), Props: map[string]any{"groupId": sess.GroupID}}
}

// DueForExpiry lists up to limit groupIds whose expiry is at or before now and whose expiry row
// is still present (sessions that ended otherwise have had theirs removed).
func (s *Store) DueForExpiry(ctx context.Context, now time.Time, limit int) ([]string, error) {
	upper := fmt.Sprintf("%020d~", now.UnixNano())
	rows, err := s.idx.Query(ctx, pkExpiry, &tablestore.QueryOptions{Filter: "RowKey lt " + tablestore.Quote(upper), Limit: limit})
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.String("groupId"))
	}
	return out, nil
}

// ForgetExpiry removes a session's expiry row (the session is no longer live).
func (s *Store) ForgetExpiry(ctx context.Context, sess *esign.Session) error {
	err := s.idx.Delete(ctx, pkExpiry, expiryKey(sess), "")
	if apperr.KindOf(err) == apperr.KindNotFound {
		return nil
	}
	return err
}

// IsConcurrent reports whether err is a lost race worth one reload-and-retry.
func IsConcurrent(err error) bool { return errors.Is(err, ErrConcurrent) }
