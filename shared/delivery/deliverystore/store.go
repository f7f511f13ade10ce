// Package deliverystore keeps delivery sessions in Azure Table storage (DESIGN 3) on the
// aggregate kernel (shared/kernel/aggstore): one partition per delivery (PartitionKey =
// deliveryId) holding the session row and one row per audit event. Every state change is
// written with its audit events in one entity-group transaction conditioned on the session
// row's ETag, so the trail can never miss or invent a transition and two concurrent changes
// cannot both win. Listing by tenant and correlationId goes through member rows in the index
// table, in a partition of the (tenant, correlationId) key's own.
package deliverystore

import (
	"context"
	"errors"
	"sort"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/azure/tablestore"
	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/event"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/kernel/aggstore"
)

// Default table names.
const (
	TableSessions = "deliveries"
	TableIndex    = "deliveryindex"
)

// Errors the store returns besides the tablestore ones.
var (
	ErrNotFound   = delivery.ErrNotFound
	ErrConcurrent = aggstore.ErrConcurrent
)

var _ delivery.Store = (*Store)(nil)

var kind = aggstore.Kind[*delivery.Session]{
	Root:     rowSession,
	OwnRoot:  true, // session-<deliveryId>: one per batch record delivered; "session" before issue 26
	NotFound: ErrNotFound,
	ID:       func(s *delivery.Session) string { return s.DeliveryID },
	Encode:   sessionEntity,
	Decode:   sessionFrom,
	Subject:  func(s *delivery.Session, _ int) string { return s.RecipientHash },
	// Integrator events (DESIGN 17): an outbox row with each published audit event.
	Publish: event.Map, Object: "delivery",
	Tenant: func(s *delivery.Session) string { return s.TenantID },
	State:  func(s *delivery.Session) string { return string(s.State) },
}

// Store is the table-backed delivery store. Safe for concurrent use.
type Store struct {
	tab     *aggstore.Table[*delivery.Session]
	index   *aggstore.Index
	invites *aggstore.Checks // the invitation checks (invitations.go)
	remind  *aggstore.Checks // the reminder schedule (invitations.go)
	expire  *aggstore.Checks // the expiry schedule (invitations.go)
}

// New opens the store on two tables of the account. It does no I/O (call Ensure at start).
func New(acct *azconn.Account, sessionsTable, indexTable string) (*Store, error) {
	tab, index, err := aggstore.Open(acct, sessionsTable, indexTable, kind)
	if err != nil {
		return nil, err
	}
	return &Store{tab: tab, index: index, invites: aggstore.NewChecks(index, InviteSchedule, aggstore.DefaultCheckAfter),
		remind: aggstore.NewChecks(index, ReminderSchedule, aggstore.DefaultCheckAfter),
		expire: aggstore.NewChecks(index, ExpirySchedule, aggstore.DefaultCheckAfter)}, nil
}

// Ensure creates the tables when missing and starts the invitation-check, reminder and expiry
// schedules.
func (s *Store) Ensure(ctx context.Context) error {
	if err := aggstore.Ensure(ctx, s.tab, s.index); err != nil {
		return err
	}
	if err := s.invites.Start(ctx, time.Now()); err != nil {
		return err
	}
	if err := s.remind.Start(ctx, time.Now()); err != nil {
		return err
	}
	return s.expire.Start(ctx, time.Now())
}

func correlationKey(tenant, correlationID string) aggstore.Key {
	return aggstore.Key{Kind: "dcorr", Scope: tenant, Value: correlationID}
}

// Create stores a new session with the events of its Start change: first its member row under
// the correlationId (a member without a session is skipped by List), then, when its mode
// e-mails the recipient, its invitation check (due the check delay after CreatedAt) and, with a
// reminders block, its first reminder (delivery.NextReminder), then its expiry (every mode, at
// ExpiresAt), then the session row and the events in one transaction. Errors: delivery.ErrExists if the deliveryId
// is stored (its row is left as it is); the tablestore ones.
func (s *Store) Create(ctx context.Context, sess *delivery.Session, ch delivery.Change) error {
	if err := s.index.AddMember(ctx, correlationKey(sess.TenantID, sess.CorrelationID), sess.DeliveryID, nil); err != nil {
		return err
	}
	if sess.Mode.Emails() {
		if err := s.invites.After(ctx, sess.DeliveryID, sess.CreatedAt); err != nil {
			return err
		}
		if at := delivery.NextReminder(sess); !at.IsZero() {
			if err := s.remind.Add(ctx, sess.DeliveryID, at); err != nil {
				return err
			}
		}
	}
	if err := s.expire.Add(ctx, sess.DeliveryID, sess.ExpiresAt); err != nil {
		return err
	}
	err := s.tab.Create(ctx, sess, ch)
	if apperr.KindOf(err) == apperr.KindConflict {
		return delivery.ErrExists // the audit rows' keys are unique: the session row is there
	}
	return err
}

// Load reads a session by one point read. Errors: ErrNotFound; the tablestore ones.
func (s *Store) Load(ctx context.Context, deliveryID string) (*delivery.Session, error) {
	return s.tab.Load(ctx, deliveryID)
}

// Apply writes the session row (if its ETag still matches) and the change's events in one
// transaction. A lost race is ErrConcurrent and nothing is written.
func (s *Store) Apply(ctx context.Context, sess *delivery.Session, ch delivery.Change) error {
	return s.tab.Apply(ctx, sess, ch)
}

// Step is a transition on a freshly loaded session.
type Step = delivery.Step

// The one Update shape of the stores (issue 23).
var _ kernel.Updater[*delivery.Session, Step] = (*Store)(nil)

// Update loads the session, runs step and applies its change (the kernel's Update: a lost race
// loads and runs step again, a bounded number of times, then ErrConcurrent). A step error is
// returned with the session and the change it made so far (which the caller may persist with
// Apply when a failure must be recorded) and nothing is written; an empty change writes nothing.
func (s *Store) Update(ctx context.Context, deliveryID string, step Step) (*delivery.Session, delivery.Change, error) {
	return s.tab.Update(ctx, deliveryID, func(sess *delivery.Session) (delivery.Change, []tablestore.Op, error) {
		ch, err := step(sess)
		return ch, nil, err
	})
}

// Events is the session's audit trail in time order.
func (s *Store) Events(ctx context.Context, deliveryID string) ([]AuditEvent, error) {
	return s.tab.Events(ctx, deliveryID)
}

// ListByCorrelation lists the tenant's sessions of a correlationId, oldest first. Errors: the
// tablestore ones.
func (s *Store) ListByCorrelation(ctx context.Context, tenantID, correlationID string) ([]*delivery.Session, error) {
	members, err := s.index.Members(ctx, correlationKey(tenantID, correlationID))
	if err != nil {
		return nil, err
	}
	var out []*delivery.Session
	for _, m := range members {
		sess, err := s.Load(ctx, m.String("member"))
		if errors.Is(err, ErrNotFound) {
			continue // a member row whose Create did not finish
		}
		if err != nil {
			return nil, err
		}
		if sess.TenantID == tenantID && sess.CorrelationID == correlationID {
			out = append(out, sess)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out, nil
}
