package funchost

import (
	"context"
	"fmt"
	"sync"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/queueerror"
)

// UserAgent leads the User-Agent of the host's own storage requests (its queue polling,
// deletes, releases and output bindings), so a counting proxy tells them from the apps'.
const UserAgent = "funchost"

// queueClients caches one service client per connection string and creates each queue the
// host touches once.
type queueClients struct {
	mu      sync.Mutex
	svc     map[string]*azqueue.ServiceClient
	created map[string]bool
}

func newQueueClients() *queueClients {
	return &queueClients{svc: map[string]*azqueue.ServiceClient{}, created: map[string]bool{}}
}

// get returns a client for queue name, creating the queue if it does not exist yet.
// Errors: a malformed connection string, or storage refusing the create.
func (q *queueClients) get(ctx context.Context, conn, name string) (*azqueue.QueueClient, error) {
	q.mu.Lock()
	svc, ok := q.svc[conn]
	if !ok {
		var err error
		svc, err = azqueue.NewServiceClientFromConnectionString(conn, &azqueue.ClientOptions{
			ClientOptions: policy.ClientOptions{Telemetry: policy.TelemetryOptions{ApplicationID: UserAgent}}})
		if err != nil {
			q.mu.Unlock()
			return nil, fmt.Errorf("storage connection: %w", err)
		}
		q.svc[conn] = svc
	}
	key := conn + "\x00" + name
	done := q.created[key]
	q.mu.Unlock()
	c := svc.NewQueueClient(name)
	if !done {
		if _, err := c.Create(ctx, nil); err != nil && !queueerror.HasCode(err, queueerror.QueueAlreadyExists) {
			return nil, fmt.Errorf("create queue %s: %w", name, err)
		}
		q.mu.Lock()
		q.created[key] = true
		q.mu.Unlock()
	}
	return c, nil
}

// createQueues creates every trigger, poison and output queue up front, so that storage
// problems show at start rather than at the first message.
func (h *Host) createQueues(ctx context.Context) error {
	for _, f := range h.fns {
		if f.kind == triggerQueue {
			for _, name := range []string{f.trigger.QueueName, f.trigger.QueueName + "-poison"} {
				if _, err := h.queues.get(ctx, f.queueConn, name); err != nil {
					return fmt.Errorf("function %s: %w", f.name, err)
				}
			}
		}
		for _, o := range f.outputs {
			if _, err := h.queues.get(ctx, o.conn, o.queue); err != nil {
				return fmt.Errorf("function %s: %w", f.name, err)
			}
		}
	}
	return nil
}
