package effects

import (
	"context"

	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/queues"
)

// SessionOutputs carries out the signing session use cases' effects (esign.SessionEffects) as
// the invocation's queue outputs.
type SessionOutputs struct{}

var _ esign.SessionEffects = SessionOutputs{}

// Emit is the package's Emit.
func (SessionOutputs) Emit(ctx context.Context, s *esign.Session, slots []esign.Slot, ch esign.Change, reminder bool) error {
	return Emit(ctx, s, slots, ch, reminder)
}

// Seal queues m on the seal queue.
func (SessionOutputs) Seal(ctx context.Context, m esign.SealMessage) error {
	return Send(ctx, queues.Seal, m)
}
