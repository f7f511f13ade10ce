package document

import (
	"context"
	"strings"
	"time"

	"github.com/esign-svc/esign/shared/kernel"
)

// Store is what the document use cases need of the store (documentstore.Store): one partition
// per (tenant, correlationId), so another tenant's document reads as a missing one.
type Store interface {
	// Create stores a new document with its change. Errors: apperr conflict when the
	// correlationId is stored already; the store's.
	Create(ctx context.Context, d *Document, ch kernel.Change) error
	// Load reads tenant's document. Errors: not found (also for another tenant's); the store's.
	Load(ctx context.Context, tenant, correlationID string) (*Document, error)
	// Update loads document id (ID: the tenant's correlationId), runs step and stores its
	// change with the audit events in one transaction on the document's ETag (a lost race runs
	// step again; kernel.Updater); a step error comes back with nothing written; an empty
	// change writes nothing.
	kernel.Updater[*Document, Step]
}

// Step is a transition on a freshly loaded document.
type Step func(d *Document) (kernel.Change, error)

// ID is the id Update takes of tenant's document correlationID: correlationIds are unique per
// tenant only, so the tenant is part of it (a tenant id holds no "/"; SplitID undoes it).
func ID(tenant, correlationID string) string { return tenant + "/" + correlationID }

// SplitID is the tenant and correlationId of a document id made by ID (ok false for another
// string).
func SplitID(id string) (tenant, correlationID string, ok bool) {
	tenant, correlationID, ok = strings.Cut(id, "/")
	return tenant, correlationID, ok && tenant != "" && correlationID != ""
}

// Documents is the rendered document's use-case service (issue 23): one method per
// transition. Each loads tenant's document once (another tenant's is not found, as an unknown
// one), runs the machine and stores the change with its audit events by the actor.
type Documents struct {
	Store Store
	Now   func() time.Time
}

// Create stores a new rendered document with document.rendered. Errors: apperr conflict when
// its correlationId is stored already (the caller decides whether it is the same render); the
// store's.
func (u *Documents) Create(ctx context.Context, d *Document) error {
	return u.Store.Create(ctx, d, Rendered(d))
}

// Load reads tenant's document of correlationID. Errors: not found; the store's.
func (u *Documents) Load(ctx context.Context, tenant, correlationID string) (*Document, error) {
	return u.Store.Load(ctx, tenant, correlationID)
}

// StartedESign records on tenant's document the signing session auto-trigger created (groupID)
// by who (document.esign_started; nothing when it is recorded already). Errors: not found;
// the store's.
func (u *Documents) StartedESign(ctx context.Context, tenant, correlationID, groupID string, who kernel.Actor) (*Document, error) {
	return u.step(ctx, tenant, correlationID, who, func(d *Document, now time.Time) kernel.Change {
		return StartESign(d, groupID, now)
	})
}

// StartedDelivery records on tenant's document the delivery sessions auto-trigger created by
// who (document.delivery_started; nothing when they are recorded already). Errors: not found;
// the store's.
func (u *Documents) StartedDelivery(ctx context.Context, tenant, correlationID string, deliveryIDs []string, who kernel.Actor) (*Document, error) {
	return u.step(ctx, tenant, correlationID, who, func(d *Document, now time.Time) kernel.Change {
		return StartDelivery(d, deliveryIDs, now)
	})
}

func (u *Documents) step(ctx context.Context, tenant, correlationID string, who kernel.Actor, move func(d *Document, now time.Time) kernel.Change) (*Document, error) {
	d, _, err := u.Store.Update(ctx, ID(tenant, correlationID), func(d *Document) (kernel.Change, error) {
		ch := move(d, u.Now().UTC())
		ch.By(who)
		return ch, nil
	})
	return d, err
}
