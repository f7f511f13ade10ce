package funchost

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/esign-svc/esign/shared/azure/queuestore"
)

// leaseTime is how long a dequeued message stays invisible while its invocation runs (the real
// host uses ten minutes and renews it; this host does not renew, so invocations longer than
// this may be delivered twice).
const leaseTime = 10 * time.Minute

const minPollingInterval = 100 * time.Millisecond

// startQueueListener polls the function's queue as the real host does: it fetches up to
// batchSize messages, runs them concurrently, and fetches again once no more than
// newBatchThreshold are still running, so at most batchSize+newBatchThreshold run at once.
// After an empty poll it waits with a randomised exponential back-off from 100ms up to
// maxPollingInterval, cut short when a function of the same app adds a message to the queue
// (queueWatcher); after a non-empty one it polls again at once.
func (h *Host) startQueueListener(f *function) {
	qs := f.app.queues
	woken := h.watcher.register(f.app, f.queueConn, f.trigger.QueueName)
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		var mu sync.Mutex
		cond := sync.NewCond(&mu)
		running := 0
		var inflight sync.WaitGroup
		defer inflight.Wait()
		stop := context.AfterFunc(h.ctx, func() { mu.Lock(); cond.Broadcast(); mu.Unlock() })
		defer stop()
		wait := h.opts.MinPollingInterval
		for {
			mu.Lock()
			for running > qs.NewBatchThreshold && h.ctx.Err() == nil {
				cond.Wait()
			}
			mu.Unlock()
			if h.ctx.Err() != nil {
				return
			}
			if h.paused.Load() {
				select {
				case <-h.ctx.Done():
					return
				case <-time.After(minPollingInterval):
				}
				continue
			}
			msgs, err := h.dequeue(h.ctx, f, qs.BatchSize)
			if err != nil && h.ctx.Err() == nil {
				h.log.printf("[host] function %s: poll queue %s: %v", f.name, f.trigger.QueueName, err)
			}
			if len(msgs) == 0 {
				select {
				case <-h.ctx.Done():
					return
				case <-woken:
				case <-time.After(wait):
				}
				wait = nextWait(wait, max(qs.MaxPollingInterval, h.opts.MinPollingInterval))
				continue
			}
			wait = h.opts.MinPollingInterval
			mu.Lock()
			running += len(msgs)
			mu.Unlock()
			for _, m := range msgs {
				inflight.Add(1)
				go func() {
					defer inflight.Done()
					h.processMessage(f, m)
					mu.Lock()
					running--
					cond.Broadcast()
					mu.Unlock()
				}()
			}
		}
	}()
}

// nextWait doubles the wait with ±20% jitter, capped at max.
func nextWait(cur, max time.Duration) time.Duration {
	n := time.Duration(float64(cur) * (1.6 + 0.8*rand.Float64()))
	if n > max {
		n = max
	}
	return n
}

func (h *Host) dequeue(ctx context.Context, f *function, n int) ([]*azqueue.DequeuedMessage, error) {
	c, err := h.queues.get(ctx, f.queueConn, f.trigger.QueueName)
	if err != nil {
		return nil, err
	}
	num, vis := int32(n), int32(leaseTime/time.Second)
	resp, err := c.DequeueMessages(ctx, &azqueue.DequeueMessagesOptions{NumberOfMessages: &num, VisibilityTimeout: &vis})
	if err != nil {
		return nil, err
	}
	return resp.Messages, nil
}

// processMessage invokes the function for one message and settles it: deleted on success;
// on failure made visible again after visibilityTimeout, or moved to <queue>-poison (same
// body) once its DequeueCount has reached maxDequeueCount. A message that arrives with a
// DequeueCount already above maxDequeueCount goes to the poison queue without an invocation.
func (h *Host) processMessage(f *function, m *azqueue.DequeuedMessage) {
	ctx := context.WithoutCancel(h.ctx)
	qs := f.app.queues
	count := int64(0)
	if m.DequeueCount != nil {
		count = *m.DequeueCount
	}
	text := deref(m.MessageText)
	if count > int64(qs.MaxDequeueCount) {
		h.log.printf("[host] function %s: message %s has DequeueCount %d > maxDequeueCount %d: moving to %s-poison",
			f.name, deref(m.MessageID), count, qs.MaxDequeueCount, f.trigger.QueueName)
		h.poison(ctx, f, m)
		return
	}
	err := h.invokeQueue(ctx, f, m, text, count)
	if err == nil {
		h.settle(ctx, f, m, "delete", func(c *azqueue.QueueClient) error {
			_, err := c.DeleteMessage(ctx, deref(m.MessageID), deref(m.PopReceipt), nil)
			return err
		})
		return
	}
	if count >= int64(qs.MaxDequeueCount) {
		h.log.printf("[host] function %s: message %s failed %d times: moving to %s-poison",
			f.name, deref(m.MessageID), count, f.trigger.QueueName)
		h.poison(ctx, f, m)
		return
	}
	h.settle(ctx, f, m, "release", func(c *azqueue.QueueClient) error {
		vis := int32(qs.VisibilityTimeout / time.Second)
		_, err := c.UpdateMessage(ctx, deref(m.MessageID), deref(m.PopReceipt), text, &azqueue.UpdateMessageOptions{VisibilityTimeout: &vis})
		return err
	})
}

func (h *Host) invokeQueue(ctx context.Context, f *function, m *azqueue.DequeuedMessage, text string, count int64) error {
	payload := []byte(text)
	if f.app.queues.Base64 {
		b, err := queuestore.DecodeMessage(text)
		if err != nil {
			// The real host fails the message the same way; it ends in the poison queue.
			h.log.printf("[host] function %s: message %s: %v", f.name, deref(m.MessageID), err)
			return err
		}
		payload = b
	}
	data, meta := h.queueRequestData(f, m, string(payload), count)
	_, err := h.invoke(ctx, f, newGUID(), data, meta, fmt.Sprintf("queue %s, message %s, DequeueCount %d", f.trigger.QueueName, deref(m.MessageID), count))
	return err
}

// queueRequestData builds Data and Metadata for a queue trigger in the configured shape.
func (h *Host) queueRequestData(f *function, m *azqueue.DequeuedMessage, text string, count int64) (map[string]any, map[string]any) {
	ts := func(t *time.Time) string {
		if t == nil {
			return ""
		}
		return t.UTC().Format("2006-01-02T15:04:05+00:00")
	}
	if h.opts.Shape == ShapeDocumented {
		return map[string]any{f.trigger.Name: text}, map[string]any{
			"DequeueCount": count, "ExpirationTime": ts(m.ExpirationTime), "Id": deref(m.MessageID),
			"InsertionTime": ts(m.InsertionTime), "NextVisibleTime": ts(m.TimeNextVisible), "PopReceipt": deref(m.PopReceipt),
		}
	}
	quoted := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	return map[string]any{f.trigger.Name: quoted(text)}, map[string]any{
		"DequeueCount": strconv.FormatInt(count, 10), "ExpirationTime": quoted(ts(m.ExpirationTime)), "Id": quoted(deref(m.MessageID)),
		"InsertionTime": quoted(ts(m.InsertionTime)), "NextVisibleTime": quoted(ts(m.TimeNextVisible)), "PopReceipt": quoted(deref(m.PopReceipt)),
	}
}

// poison copies the message body unchanged to <queue>-poison, then deletes the original.
func (h *Host) poison(ctx context.Context, f *function, m *azqueue.DequeuedMessage) {
	pq, err := h.queues.get(ctx, f.queueConn, f.trigger.QueueName+"-poison")
	if err == nil {
		_, err = pq.EnqueueMessage(ctx, deref(m.MessageText), nil)
	}
	if err == nil {
		h.watcher.notify(f.app, f.queueConn, f.trigger.QueueName+"-poison")
	}
	if err != nil {
		h.log.printf("[host] function %s: move message %s to poison queue: %v (it will be retried)", f.name, deref(m.MessageID), err)
		return
	}
	h.settle(ctx, f, m, "delete", func(c *azqueue.QueueClient) error {
		_, err := c.DeleteMessage(ctx, deref(m.MessageID), deref(m.PopReceipt), nil)
		return err
	})
}

func (h *Host) settle(ctx context.Context, f *function, m *azqueue.DequeuedMessage, what string, op func(*azqueue.QueueClient) error) {
	c, err := h.queues.get(ctx, f.queueConn, f.trigger.QueueName)
	if err == nil {
		err = op(c)
	}
	if err != nil {
		h.log.printf("[host] function %s: %s message %s: %v", f.name, what, deref(m.MessageID), err)
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
