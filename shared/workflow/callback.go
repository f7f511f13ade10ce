package workflow

import (
	"time"

	"github.com/esign-svc/esign/shared/kernel"
)

// Audit event kinds of the terminal callback (DESIGN 10): each attempt, then its end. Their data
// carry the attempt number and the answer's status or a short code: never the URL or the body.
const (
	EvCallbackAttempted = "workflow.callback_attempted"
	EvCallbackDelivered = "workflow.callback_delivered"
	EvCallbackFailed    = "workflow.callback_failed"
)

// Ends of a callback attempt.
const (
	CallbackRetry     = ""          // a later attempt follows
	CallbackDelivered = "delivered" // the receiver accepted it
	CallbackFailed    = "failed"    // no attempt follows: a permanent answer or the retries spent
)

// CallbackAttempt is one POST of the terminal callback.
type CallbackAttempt struct {
	Attempt int    // 1 for the first
	Status  int    // the answer's status; 0 when there was none
	Code    string // why there was no answer (timeout, network, url_refused...), or why it ended
	End     string // CallbackRetry, CallbackDelivered or CallbackFailed
}

// Callback records a callback attempt of an ended workflow: workflow.callback_attempted {attempt,
// status or code}, then workflow.callback_delivered or workflow.callback_failed {attempt} when it
// is the last. The workflow itself is unchanged. Errors: ErrInvalidState before an end state.
func (w *Workflow) Callback(a CallbackAttempt, now time.Time) (kernel.Change, error) {
	return w.commit(func(x *Workflow, c *kernel.Change) error {
		if !x.State.Terminal() {
			return ErrInvalidState
		}
		data := map[string]any{"attempt": a.Attempt}
		if a.Status != 0 {
			data["status"] = a.Status
		} else if a.Code != "" {
			data["code"] = a.Code
		}
		c.Record(EvCallbackAttempted, kernel.NoSlot, now, data)
		switch a.End {
		case CallbackDelivered:
			c.Record(EvCallbackDelivered, kernel.NoSlot, now, map[string]any{"attempt": a.Attempt})
		case CallbackFailed:
			end := map[string]any{"attempt": a.Attempt}
			if a.Code != "" {
				end["code"] = a.Code
			}
			c.Record(EvCallbackFailed, kernel.NoSlot, now, end)
		}
		return nil
	})
}
