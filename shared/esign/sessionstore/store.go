// Package sessionstore keeps signing sessions in Azure Table storage (DESIGN section 3) on the
// aggregate kernel (shared/kernel/aggstore): one partition per session (PartitionKey = groupId)
// holding the session row (with its slots inside it, so a load is one point read), a row per
// audit event, the signature rows and the callback ids seen. Every state change is written with
// its audit events in one entity-group transaction conditioned on the session row's ETag, so the
// audit trail can never miss or invent a transition and two concurrent changes cannot both win.
// The index table holds the correlationId claims (a partition per key), the expiry schedule
// (hour buckets in 16 shards) and the cross-device token rows.
package sessionstore

import (
	"context"
	"errors"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/azure/tablestore"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/event"
	"github.com/esign-svc/esign/shared/kernel/aggstore"
)

// ClaimLease is how long a correlationId claim whose session row is not written yet counts as a
// create under way (after that, as a create that died).
const ClaimLease = 2 * time.Minute

// Errors the store returns besides the tablestore ones.
var (
	ErrNotFound   = esign.ErrSessionNotFound
	ErrConcurrent = aggstore.ErrConcurrent // matches esign.ErrConcurrent
	ErrReplayed   = &apperr.Error{Kind: apperr.KindUnauthenticated, Code: "callback_replayed", Detail: "this callback was already accepted"}
)

// aggregate is a session with its slots: the unit the kernel loads and writes.
type aggregate struct {
	s     *esign.Session
	slots []esign.Slot
}

var kind = aggstore.Kind[aggregate]{
	Root:     rowSession,
	NotFound: ErrNotFound,
	ID:       func(a aggregate) string { return a.s.GroupID },
	Encode:   func(a aggregate) (tablestore.Entity, error) { return sessionEntity(a.s, a.slots) },
	Decode:   sessionFrom,
	// Integrator events (DESIGN 17): an outbox row with each published audit event.
	Publish: event.Map, Object: "session",
	Tenant: func(a aggregate) string { return a.s.TenantID },
	State:  func(a aggregate) string { return string(a.s.State) },
	// Steps may change session fields no event records (a slot's link id): always write.
	WriteEmpty: true,
	Subject: func(a aggregate, slot int) string {
		if slot >= 0 && slot < len(a.slots) {
			return a.slots[slot].EmailHash
		}
		return ""
	},
	ExtraConflict: func(op tablestore.Op) error {
		if aggstore.HasPrefix(op, prefixCallbk) {
			return ErrReplayed
		}
		return nil
	},
}

// Store is the table-backed session store. Safe for concurrent use.
type Store struct {
	tab     *aggstore.Table[aggregate]
	index   *aggstore.Index
	expiry  *aggstore.Schedule
	invites *aggstore.Checks  // the invitation checks (invitations.go)
	remind  *aggstore.Checks  // the reminder schedule (invitations.go)
	t       *tablestore.Store // the sessions table, for the store's own rows
	idx     *tablestore.Store // the index table
}

// New opens the store on two tables (sessions, index) of the account. It does no I/O (call
// Ensure at start).
func New(acct *azconn.Account, sessionsTable, indexTable string) (*Store, error) {
	s := &Store{}
	k := kind
	k.Before, k.After = s.beforeChange, s.afterChange
	tab, index, err := aggstore.Open(acct, sessionsTable, indexTable, k)
	if err != nil {
		return nil, err
	}
	s.tab, s.index, s.t, s.idx = tab, index, tab.Rows(), index.Rows()
	s.expiry = aggstore.NewSchedule(index, "exp")
	s.invites = aggstore.NewChecks(index, InviteSchedule, aggstore.DefaultCheckAfter)
	s.remind = aggstore.NewChecks(index, ReminderSchedule, aggstore.DefaultCheckAfter)
	return s, nil
}

// beforeChange puts a change that invites on the invitation-check schedule before the change
// is written (one upsert; a stale entry is harmless, a missing one is not).
func (s *Store) beforeChange(ctx context.Context, a aggregate, ch esign.Change) error {
	if err := s.scheduleReminder(ctx, a, ch); err != nil {
		return err
	}
	return s.scheduleInviteCheck(ctx, a.s.GroupID, ch)
}

// afterChange takes a session that ended (cancelled, expired, complete) off the expiry
// schedule. Best effort: a stale entry is skipped (and removed) by the expiry job.
func (s *Store) afterChange(ctx context.Context, a aggregate, _ esign.Change) {
	if a.s.State.Terminal() {
		_ = s.expiry.Remove(ctx, a.s.GroupID, a.s.ExpiresAt)
	}
}

// Ensure creates the tables when missing and starts the expiry and invitation-check schedules.
func (s *Store) Ensure(ctx context.Context) error {
	if err := aggstore.Ensure(ctx, s.tab, s.index); err != nil {
		return err
	}
	if err := s.expiry.Start(ctx, time.Now()); err != nil {
		return err
	}
	if err := s.remind.Start(ctx, time.Now()); err != nil {
		return err
	}
	return s.invites.Start(ctx, time.Now())
}

// LiveConflict is the 409 for a second session on a correlationId that has a live one; it names
// the live groupId.
func LiveConflict(groupID string) error {
	return &apperr.Error{Kind: apperr.KindConflict, Code: "session_exists",
		Detail: "a live signing session exists for this correlationId", Extra: map[string]any{"groupId": groupID}}
}

func correlationKey(tenant, correlationID string) aggstore.Key {
	return aggstore.Key{Kind: "corr", Scope: tenant, Value: correlationID}
}

// Create stores a new session, its slots and the events of its Start change: it claims the
// tenant's correlationId (an insert; a read only when taken), adds the session to the expiry
// schedule and (when the change invites) to the invitation-check schedule, and writes the
// session row and its events in one transaction. Errors: LiveConflict
// when the correlationId belongs to a live session (pending, in_progress or sealing and not past
// expiry) or to a create still under way (ClaimLease); ErrConcurrent; the tablestore ones.
func (s *Store) Create(ctx context.Context, sess *esign.Session, slots []esign.Slot, ch esign.Change, now time.Time) error {
	err := s.index.Claim(ctx, correlationKey(sess.TenantID, sess.CorrelationID), sess.GroupID, now, ClaimLease, s.holds(now))
	var taken *aggstore.TakenError
	if errors.As(err, &taken) {
		return LiveConflict(taken.Owner)
	}
	if err != nil {
		return err
	}
	if err := s.expiry.Add(ctx, sess.GroupID, sess.ExpiresAt); err != nil {
		return err
	}
	return s.tab.Create(ctx, aggregate{sess, slots}, ch) // with its invitation check (beforeChange)
}

// holds says whether a claim's session still holds its correlationId at now.
func (s *Store) holds(now time.Time) aggstore.HoldsFunc {
	return func(ctx context.Context, groupID string) (aggstore.Holding, error) {
		a, err := s.tab.Load(ctx, groupID)
		if errors.Is(err, ErrNotFound) {
			return aggstore.Missing, nil
		}
		if err != nil {
			return 0, err
		}
		if a.s.State == esign.SessionSealing || (a.s.State.Live() && !a.s.Expired(now)) {
			return aggstore.Held, nil
		}
		return aggstore.Released, nil
	}
}

// Load reads a session and its slots (ordered by index) by one point read. Errors: ErrNotFound;
// a decode error for a corrupt row; the tablestore ones.
func (s *Store) Load(ctx context.Context, groupID string) (*esign.Session, []esign.Slot, error) {
	a, err := s.tab.Load(ctx, groupID)
	if err != nil {
		return nil, nil, err
	}
	return a.s, a.slots, nil
}

// Apply writes a transition: the session row with its slots (if its ETag still matches), the
// change's audit events and any extra operations of the same partition (signature rows,
// callback ids), all in one transaction. A lost race is ErrConcurrent and nothing is written; a
// callback id already present is ErrReplayed. A change that invites first adds the session to
// the invitation-check schedule (one upsert). A session that ended (cancelled, expired,
// complete) leaves the expiry schedule.
func (s *Store) Apply(ctx context.Context, sess *esign.Session, slots []esign.Slot, ch esign.Change, extra ...tablestore.Op) error {
	return s.tab.Apply(ctx, aggregate{sess, slots}, ch, extra...)
}

// CallbackOnce is the extra operation that accepts a callback id once per session.
func CallbackOnce(groupID, callbackID string) tablestore.Op {
	return tablestore.InsertOp(tablestore.Entity{PartitionKey: groupID, RowKey: prefixCallbk + callbackID,
		Props: map[string]any{"seenAtNs": time.Now().UnixNano()}})
}

// Events is the session's audit trail in time order.
func (s *Store) Events(ctx context.Context, groupID string) ([]AuditEvent, error) {
	return s.tab.Events(ctx, groupID)
}

// GroupByCorrelation is the groupId of the tenant's latest session for a correlationId.
func (s *Store) GroupByCorrelation(ctx context.Context, tenantID, correlationID string) (string, error) {
	g, err := s.index.Owner(ctx, correlationKey(tenantID, correlationID))
	if apperr.KindOf(err) == apperr.KindNotFound {
		return "", ErrNotFound
	}
	return g, err
}

// DueForExpiry lists up to limit groupIds whose expiry is at or before now and whose schedule
// entry is still present (sessions that ended otherwise have had theirs removed).
func (s *Store) DueForExpiry(ctx context.Context, now time.Time, limit int) ([]string, error) {
	items, err := s.expiry.Due(ctx, now, limit)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, it.ID)
	}
	return out, nil
}

// ForgetExpiry removes a session's expiry entry (the session is no longer live).
func (s *Store) ForgetExpiry(ctx context.Context, sess *esign.Session) error {
	return s.expiry.Remove(ctx, sess.GroupID, sess.ExpiresAt)
}

// ForgetOrphanExpiry removes the due expiry entries of a groupId whose session does not exist (a
// create that failed after adding it), so they stop coming back from DueForExpiry.
func (s *Store) ForgetOrphanExpiry(ctx context.Context, groupID string, now time.Time) error {
	return s.expiry.RemoveDue(ctx, groupID, now)
}

// IsConcurrent reports whether err is a lost race worth one reload-and-retry.
func IsConcurrent(err error) bool { return errors.Is(err, ErrConcurrent) }
