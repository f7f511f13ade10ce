package funchost

import (
	"strings"
	"sync"
)

// queueWatcher wakes an app's queue listeners when one of its functions adds a message to their
// queue, as the real host's SharedQueueWatcher does (the WebJobs SDK's QueueListener registers
// with it, and its queue output binding and poison handling call Notify): a listener backing
// off after empty polls polls again at once instead of after up to maxPollingInterval. It is
// per app, as the real one is per host: a message another app writes (the dispatcher's
// `dispatch` message for the processor) waits for the next poll.
type queueWatcher struct {
	mu        sync.Mutex
	listeners map[string][]chan struct{}
}

func watchKey(a *app, conn, queue string) string {
	return a.name + "\x00" + conn + "\x00" + strings.ToLower(queue)
}

// register returns the channel on which the listener of queue (on conn) in app is woken.
func (w *queueWatcher) register(a *app, conn, queue string) <-chan struct{} {
	c := make(chan struct{}, 1)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.listeners == nil {
		w.listeners = map[string][]chan struct{}{}
	}
	k := watchKey(a, conn, queue)
	w.listeners[k] = append(w.listeners[k], c)
	return c
}

// notify wakes app's listeners of queue on conn; a listener already woken stays woken once.
func (w *queueWatcher) notify(a *app, conn, queue string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range w.listeners[watchKey(a, conn, queue)] {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}
