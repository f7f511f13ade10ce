package dispatch

import (
	"context"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/kernel"
)

// ErrBatchNotFound is a batch that does not exist, or another tenant's (the same answer).
var ErrBatchNotFound = &apperr.Error{Kind: apperr.KindNotFound, Code: "batch_not_found", Detail: "no such batch"}

// Updater is the part of the batch store a transition needs: one load, the step, one store
// of the batch with its events under its ETag (batchstore.Store): the stores' one Update shape.
type Updater interface {
	kernel.Updater[*Batch, func(*Batch) (Change, error)]
}

// Batches is the batch use-case service: one method per transition after intake and per read
// of the routes and the jobs. Each transition loads the batch once, checks the tenant, runs the
// machine, stores the change with its events by the actor and emits its effects (the routes'
// transitions) or returns them (the processor's, usecase_jobs.go).
type Batches struct {
	Store BatchStore
	// Blobs reads a batch's receipts (blobstore.Store); the routes' reads need it.
	Blobs Blobs
	// Emit sends a stored change's effects (effects.EmitBatch); nil emits nothing.
	Emit func(ctx context.Context, b *Batch, ch Change) error
	// AllowSelfApproval is DISPATCH_ALLOW_SELF_APPROVAL.
	AllowSelfApproval bool
	Now               func() time.Time
}

// Decide records an approver's decision on a batch of the tenant.
func (s *Batches) Decide(ctx context.Context, tenant, batchID string, who kernel.Actor, decision Decision, comments string) (*Batch, error) {
	return s.step(ctx, tenant, batchID, who, func(b *Batch) (Change, error) {
		return Decide(b, decision, who.ID, comments, s.AllowSelfApproval, s.Now().UTC())
	})
}

// Cancel ends a batch of the tenant that has not started.
func (s *Batches) Cancel(ctx context.Context, tenant, batchID string, who kernel.Actor) (*Batch, error) {
	return s.step(ctx, tenant, batchID, who, func(b *Batch) (Change, error) {
		return Cancel(b, s.Now().UTC())
	})
}

func (s *Batches) step(ctx context.Context, tenant, batchID string, who kernel.Actor, move func(*Batch) (Change, error)) (*Batch, error) {
	b, ch, err := s.Store.Update(ctx, batchID, func(b *Batch) (Change, error) {
		if b.TenantID != tenant {
			return Change{}, ErrBatchNotFound
		}
		ch, err := move(b)
		ch.By(who)
		return ch, err
	})
	if err != nil {
		return nil, err
	}
	if s.Emit != nil {
		if err := s.Emit(ctx, b, ch); err != nil {
			return nil, err
		}
	}
	return b, nil
}
