package sessionstore

import (
	"context"
	"errors"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/azure/tablestore"
	"github.com/esign-svc/esign/shared/esign"
)

// Store helpers of the seal job: the sealing scan of the reconciler, the time a session went to
// sealing, audit events that change no state (pii.purged), the signature rows still present,
// and a per-session seal lock.

const rowSealLock = "seal-lock"

// ErrSealBusy means another seal attempt of the session holds its lock: worth a retry later.
var ErrSealBusy = esign.ErrSealBusy

// Sealing lists up to limit sessions in state sealing (limit <= 0: all). It scans the sessions
// table across partitions with the filter RowKey eq 'session' and state eq 'sealing': Apply
// cannot keep an index row for the state, and at this service's scale (thousands of sessions,
// a scan every five minutes) the scan is cheap. Errors: the table's.
func (s *Store) Sealing(ctx context.Context, limit int) ([]*esign.Session, error) {
	rows, err := s.t.Query(ctx, "", &tablestore.QueryOptions{
		Filter: "RowKey eq " + tablestore.Quote(rowSession) + " and state eq " + tablestore.Quote(string(esign.SessionSealing)),
		Limit:  limit,
	})
	if err != nil {
		return nil, err
	}
	out := make([]*esign.Session, 0, len(rows))
	for _, r := range rows {
		a, err := sessionFrom(r)
		var c *CorruptError
		if errors.As(err, &c) {
			out = append(out, c.Session) // its seal fails for good and records why (seal job)
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, a.s)
	}
	return out, nil
}

// SealingSince is when the session last entered sealing (its latest session.sealing event), or
// the zero time when it has no such event. Errors: the table's.
func (s *Store) SealingSince(ctx context.Context, groupID string) (time.Time, error) {
	return s.LastEvent(ctx, groupID, esign.EvSessionSealing)
}

// LastEvent is the time of the session's latest audit event of kind, or the zero time when it
// has none. It reads only the kind and time columns (aggstore.Table.EventTimes), so it answers
// for a trail whose event data is unreadable. Errors: the table's.
func (s *Store) LastEvent(ctx context.Context, groupID, kind string) (time.Time, error) {
	times, err := s.tab.EventTimes(ctx, groupID, kind)
	if err != nil {
		return time.Time{}, err
	}
	var last time.Time
	for _, at := range times {
		if at.After(last) {
			last = at
		}
	}
	return last, nil
}

// FailCorruptSeal records a seal failure (ch, from esign.FailSeal on CorruptError.Session) on a
// session whose row does not decode: the change's audit events and the row's sealError in one
// transaction, the row merged on the ETag it was read with, so that its unreadable properties
// stay exactly as they were found. Errors: ErrConcurrent when the row changed meanwhile;
// ErrNotFound; the table's.
func (s *Store) FailCorruptSeal(ctx context.Context, sess *esign.Session, ch esign.Change) error {
	if len(ch.Slots) > 0 {
		return apperr.New(apperr.KindInternal, "not_event_only", "FailCorruptSeal takes a change without slots")
	}
	row := tablestore.MergeOp(tablestore.Entity{PartitionKey: sess.GroupID, RowKey: rowSession, ETag: sess.ETag,
		Props: map[string]any{"sealError": sess.SealError}})
	err := s.tab.Record(ctx, aggregate{s: sess}, ch.Events, row)
	switch k := apperr.KindOf(err); {
	case err == nil:
		return nil
	case k == apperr.KindPrecondition:
		return ErrConcurrent
	case k == apperr.KindNotFound:
		return ErrNotFound
	}
	return err
}

// SignatureSlots lists the slot indexes whose signature row is still present (not yet purged),
// in order. Errors: the table's.
func (s *Store) SignatureSlots(ctx context.Context, groupID string) ([]int, error) {
	rows, err := s.t.Query(ctx, groupID, &tablestore.QueryOptions{RowKeyPrefix: prefixSig})
	if err != nil {
		return nil, err
	}
	var out []int
	for _, r := range rows {
		if i, err := strconv.Atoi(strings.TrimPrefix(r.RowKey, prefixSig)); err == nil {
			out = append(out, i)
		}
	}
	sort.Ints(out)
	return out, nil
}

// AcquireSealLock takes the session's seal lock for owner (an id unique to one attempt) until
// now+ttl. The same owner may take it again; a lock past its time is taken over. Errors:
// ErrSealBusy while another owner holds a live lock; otherwise the table's.
func (s *Store) AcquireSealLock(ctx context.Context, groupID, owner string, now time.Time, ttl time.Duration) error {
	row := tablestore.Entity{PartitionKey: groupID, RowKey: rowSealLock,
		Props: map[string]any{"owner": owner, "untilNs": now.Add(ttl).UnixNano()}}
	_, err := s.t.Insert(ctx, row)
	if apperr.KindOf(err) != apperr.KindConflict {
		return err
	}
	cur, err := s.t.Get(ctx, groupID, rowSealLock)
	if apperr.KindOf(err) == apperr.KindNotFound {
		return s.AcquireSealLock(ctx, groupID, owner, now, ttl) // released meanwhile
	}
	if err != nil {
		return err
	}
	if cur.String("owner") != owner && now.UnixNano() < cur.Int64("untilNs") {
		return ErrSealBusy
	}
	row.ETag = cur.ETag
	if _, err := s.t.Replace(ctx, row); err != nil {
		if k := apperr.KindOf(err); k == apperr.KindPrecondition || k == apperr.KindNotFound {
			return ErrSealBusy // another attempt took it over first
		}
		return err
	}
	return nil
}

// ReleaseSealLock removes owner's seal lock; a lock held by another owner, or none, is left
// alone. Errors: the table's.
func (s *Store) ReleaseSealLock(ctx context.Context, groupID, owner string) error {
	cur, err := s.t.Get(ctx, groupID, rowSealLock)
	if apperr.KindOf(err) == apperr.KindNotFound {
		return nil
	}
	if err != nil {
		return err
	}
	if cur.String("owner") != owner {
		return nil
	}
	err = s.t.Delete(ctx, groupID, rowSealLock, cur.ETag)
	if k := apperr.KindOf(err); k == apperr.KindNotFound || k == apperr.KindPrecondition {
		return nil
	}
	return err
}
