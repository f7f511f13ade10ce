package dispatch

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/kernel"
)

// memBatches is an Updater over one batch in memory: it stores only what the step accepts.
type memBatches struct {
	BatchStore // the methods a transition does not call
	b          *Batch
	stored     int
}

func (m *memBatches) Update(_ context.Context, id string, step func(*Batch) (Change, error)) (*Batch, Change, error) {
	if m.b == nil || m.b.BatchID != id {
		return nil, Change{}, ErrBatchNotFound
	}
	cp := *m.b
	ch, err := step(&cp)
	if err != nil {
		return nil, Change{}, err
	}
	m.b, m.stored = &cp, m.stored+1
	return &cp, ch, nil
}

func TestBatchesCancelChecksTheTenantAndEmits(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	b, _ := batchIn(StatePendingApproval)
	b.TenantID = "t1"
	store := &memBatches{b: b}
	emitted := 0
	s := &Batches{Store: store, Now: func() time.Time { return now },
		Emit: func(context.Context, *Batch, Change) error { emitted++; return nil }}
	who := kernel.Actor{Kind: "initiator", ID: "u1"}

	if _, err := s.Cancel(context.Background(), "t2", "b1", who); !errors.Is(err, ErrBatchNotFound) {
		t.Fatalf("another tenant's batch: %v, want ErrBatchNotFound", err)
	}
	if store.stored != 0 || emitted != 0 || store.b.State != StatePendingApproval {
		t.Fatalf("another tenant's cancel stored %d, emitted %d, state %s", store.stored, emitted, store.b.State)
	}
	got, err := s.Cancel(context.Background(), "t1", "b1", who)
	if err != nil || got.State != StateCancelled || store.stored != 1 || emitted != 1 {
		t.Fatalf("cancel: %v state %v stored %d emitted %d", err, got, store.stored, emitted)
	}
	if _, err := s.Cancel(context.Background(), "t1", "b1", who); !errors.Is(err, ErrInvalidState) || emitted != 1 {
		t.Fatalf("second cancel: %v emitted %d, want ErrInvalidState and no emit", err, emitted)
	}
}
