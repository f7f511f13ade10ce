package funchost

import (
	"context"
	"fmt"
	"time"
)

// startTimer fires the function on its schedule (UTC), and once at start when runOnStartup is
// set. A missed occurrence (the previous invocation still running) is skipped, not queued.
func (h *Host) startTimer(f *function) {
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		var last time.Time
		if f.trigger.RunOnStartup {
			last = time.Now().UTC()
			_ = h.fireTimer(h.ctx, f, last, false, "runOnStartup")
		}
		for {
			now := time.Now().UTC()
			next := f.schedule.next(now)
			if next.IsZero() {
				h.log.printf("[host] function %s: schedule %q never fires", f.name, f.schedule.expr)
				return
			}
			t := time.NewTimer(time.Until(next))
			select {
			case <-h.ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			_ = h.fireTimer(h.ctx, f, last, false, "timer")
			last = next
		}
	}()
}

// RunTimer invokes a timer-triggered function now and waits for the result; name is the
// function's folder name, or "app/Name" when several apps have a function of that name.
// Errors: no such function, not a timer trigger, or the invocation failed (non-2xx or non-JSON
// reply, unreachable handler, an output that could not be written).
func (h *Host) RunTimer(ctx context.Context, name string) error {
	f, err := h.lookup(name)
	if err != nil {
		return err
	}
	if f.kind != triggerTimer {
		return fmt.Errorf("funchost: function %s is not a timer trigger", f.name)
	}
	return h.fireTimer(ctx, f, time.Time{}, false, "RunTimer")
}

func (h *Host) fireTimer(ctx context.Context, f *function, last time.Time, pastDue bool, reason string) error {
	now := time.Now().UTC()
	const layout = "2006-01-02T15:04:05.0000000+00:00"
	status := map[string]any{"Next": f.schedule.next(now).Format(layout), "LastUpdated": now.Format(layout)}
	if last.IsZero() {
		status["Last"] = "0001-01-01T00:00:00"
	} else {
		status["Last"] = last.Format(layout)
	}
	data := map[string]any{f.trigger.Name: map[string]any{
		"Schedule": map[string]any{"AdjustForDST": true}, "ScheduleStatus": status, "IsPastDue": pastDue,
	}}
	_, err := h.invoke(ctx, f, newGUID(), data, map[string]any{}, reason)
	return err
}
