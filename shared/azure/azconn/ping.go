package azconn

import (
	"context"
	"sync"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
)

// Service names used as Ping's keys.
const (
	ServiceBlob  = "blob"
	ServiceTable = "table"
	ServiceQueue = "queue"
)

// Ping checks each service with one cheap authenticated call (list at most one container,
// table, queue: allowed to the data-reader roles), concurrently. The map always has the three
// keys; a nil value means reachable and authorised. Bound the time with ctx: the SDKs retry.
func (a *Account) Ping(ctx context.Context) map[string]error {
	checks := map[string]func(context.Context) error{
		ServiceBlob: func(ctx context.Context) error {
			_, err := a.blob.NewListContainersPager(&azblob.ListContainersOptions{MaxResults: to.Ptr[int32](1)}).NextPage(ctx)
			return err
		},
		ServiceTable: func(ctx context.Context) error {
			_, err := a.tables.NewListTablesPager(&aztables.ListTablesOptions{Top: to.Ptr[int32](1)}).NextPage(ctx)
			return err
		},
		ServiceQueue: func(ctx context.Context) error {
			_, err := a.queues.NewListQueuesPager(&azqueue.ListQueuesOptions{MaxResults: to.Ptr[int32](1)}).NextPage(ctx)
			return err
		},
	}
	out := make(map[string]error, len(checks))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for name, check := range checks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := check(ctx)
			mu.Lock()
			out[name] = err
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}
