package funchost

import (
	"context"
	"fmt"
	"strings"
	"syscall"
)

// RestartHandler kills an app's handler the way a crash does (SIGKILL to its process group:
// nothing is finished or flushed) and starts a new one with the same settings, returning once
// it answers GET /. Invocations running on the old handler fail, so their queue messages are
// retried as after any failure; new invocations go to the new handler. Fault tests use it.
// Errors: no app of that name; the new handler does not start (see Start).
func (h *Host) RestartHandler(ctx context.Context, appName string) error {
	var a *app
	for _, x := range h.apps {
		if strings.EqualFold(x.name, appName) {
			a = x
		}
	}
	if a == nil {
		return fmt.Errorf("funchost: no app %q", appName)
	}
	if old := a.proc.Swap(nil); old != nil { // invocations meanwhile fail: no handler
		_ = syscall.Kill(-old.cmd.Process.Pid, syscall.SIGKILL)
		<-old.done
		h.log.printf("[host] app %s: handler (pid %d) killed", a.name, old.cmd.Process.Pid)
	}
	p, err := startHandler(ctx, a, h.opts.Settings, h.log, h.opts.ReadyTimeout)
	if err != nil {
		return fmt.Errorf("funchost: %w", err)
	}
	a.proc.Store(p)
	h.watch(a, p)
	return nil
}
