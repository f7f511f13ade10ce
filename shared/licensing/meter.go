package licensing

import (
	"context"
	"time"

	"github.com/esign-svc/esign/shared/funcproto"
)

// Meter queues usage records on the licence-usage queue through the invocation's output binding
// Binding ("usage", declared in the function's function.json), so a record leaves exactly when
// the change it meters is stored (the host writes outputs only with the function's success).
// The zero Meter, a deployment without LICENSING_URL, queues nothing: no one is there to tell.
type Meter struct {
	On  bool
	Now func() time.Time // the records' "at"; default time.Now
}

// Add queues the record of kind for tenantID's object named by parts (NewUsage) when the meter
// is on. Errors: funcproto.AddOutput's (outside an invocation, an undeclared binding).
func (m Meter) Add(ctx context.Context, kind Kind, tenantID string, parts ...string) error {
	if !m.On {
		return nil
	}
	now := time.Now
	if m.Now != nil {
		now = m.Now
	}
	return funcproto.AddOutput(ctx, Binding, NewUsage(kind, tenantID, now(), parts...))
}
