// Package queuestore is the queue adapter: one Queue per queue name, sending JSON objects
// through EncodeMessage (base64, as the Functions host's messageEncoding base64 expects) and
// small receive/peek/count helpers that tests and the local host use.
//
// Errors are *apperr.Error values: KindNotFound with code queue_not_found when the queue does
// not exist, KindTooLarge with code queue_message_too_large for a message over 64 KiB encoded,
// KindNotFound with code message_not_found when deleting a message whose pop receipt is no
// longer valid; anything else is KindInternal with the SDK error as cause.
package queuestore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/queueerror"
	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/azure/azconn"
)

// Codes of the domain errors.
const (
	CodeQueueNotFound   = "queue_not_found"
	CodeMessageNotFound = "message_not_found"
	CodeMessageTooLarge = "queue_message_too_large"
)

// MaxMessageBytes is the service's limit on a message as sent (after base64).
const MaxMessageBytes = 64 << 10

// MaxVisibilityDelay is the longest SendWithVisibilityDelay delay the service allows.
const MaxVisibilityDelay = 7 * 24 * time.Hour

// Queue is one storage queue. It is safe for concurrent use.
type Queue struct {
	name   string
	client *azqueue.QueueClient
}

// New makes a Queue for name (3-63 lowercase letters, digits and single hyphens). No I/O.
func New(acct *azconn.Account, name string) (*Queue, error) {
	if !validQueueName(name) {
		return nil, fmt.Errorf("queuestore: queue name %q must be 3-63 lowercase letters, digits and single hyphens", name)
	}
	return &Queue{name: name, client: acct.Queues().NewQueueClient(name)}, nil
}

// Name is the queue's name.
func (q *Queue) Name() string { return q.name }

// Ensure creates the queue if it does not exist.
func (q *Queue) Ensure(ctx context.Context) error {
	_, err := q.client.Create(ctx, nil)
	if err == nil || queueerror.HasCode(err, queueerror.QueueAlreadyExists) {
		return nil
	}
	return q.translate(err, "create")
}

// Send enqueues v, which must marshal to a JSON object, and returns the message id. Errors:
// queue_not_found, queue_message_too_large, and an internal error for a non-object value.
func (q *Queue) Send(ctx context.Context, v any) (string, error) {
	return q.SendWithVisibilityDelay(ctx, v, 0)
}

// SendWithVisibilityDelay is Send with the message hidden for delay (0 to 7 days, whole
// seconds) before consumers can see it.
func (q *Queue) SendWithVisibilityDelay(ctx context.Context, v any, delay time.Duration) (string, error) {
	if delay < 0 || delay > MaxVisibilityDelay {
		return "", fmt.Errorf("queuestore: visibility delay %s is outside [0, %s]", delay, MaxVisibilityDelay)
	}
	text, err := EncodeMessage(v)
	if err != nil {
		return "", err
	}
	if len(text) > MaxMessageBytes {
		return "", apperr.New(apperr.KindTooLarge, CodeMessageTooLarge, "the queue message is %d bytes encoded; the limit is %d", len(text), MaxMessageBytes)
	}
	opts := &azqueue.EnqueueMessageOptions{}
	if delay > 0 {
		opts.VisibilityTimeout = to.Ptr(int32((delay + time.Second - 1) / time.Second))
	}
	resp, err := q.client.EnqueueMessage(ctx, text, opts)
	if err != nil {
		return "", q.translate(err, "send")
	}
	if len(resp.Messages) > 0 && resp.Messages[0].MessageID != nil {
		return *resp.Messages[0].MessageID, nil
	}
	return "", nil
}

// Message is a received or peeked message, decoded from base64. Body is the JSON the sender
// passed to Send; PopReceipt is empty for peeked messages.
type Message struct {
	ID           string
	PopReceipt   string
	DequeueCount int64
	InsertedAt   time.Time
	Body         json.RawMessage
}

// Decode unmarshals the body into v.
func (m Message) Decode(v any) error { return json.Unmarshal(m.Body, v) }

// Receive takes up to max (1-32) visible messages and hides them for visibility (at least 1 s);
// Delete them once handled. Errors: queue_not_found; a message that is not base64 JSON is an
// internal error naming its id.
func (q *Queue) Receive(ctx context.Context, max int, visibility time.Duration) ([]Message, error) {
	if max < 1 || max > 32 {
		return nil, fmt.Errorf("queuestore: Receive max %d is outside 1-32", max)
	}
	secs := int32(visibility / time.Second)
	if secs < 1 {
		secs = 1
	}
	resp, err := q.client.DequeueMessages(ctx, &azqueue.DequeueMessagesOptions{NumberOfMessages: to.Ptr(int32(max)), VisibilityTimeout: to.Ptr(secs)})
	if err != nil {
		return nil, q.translate(err, "receive")
	}
	out := make([]Message, 0, len(resp.Messages))
	for _, m := range resp.Messages {
		msg, err := decoded(deref(m.MessageID), deref(m.MessageText))
		if err != nil {
			return nil, err
		}
		msg.PopReceipt, msg.DequeueCount, msg.InsertedAt = deref(m.PopReceipt), deref(m.DequeueCount), deref(m.InsertionTime)
		out = append(out, msg)
	}
	return out, nil
}

// Peek reads up to max (1-32) visible messages without hiding them.
func (q *Queue) Peek(ctx context.Context, max int) ([]Message, error) {
	if max < 1 || max > 32 {
		return nil, fmt.Errorf("queuestore: Peek max %d is outside 1-32", max)
	}
	resp, err := q.client.PeekMessages(ctx, &azqueue.PeekMessagesOptions{NumberOfMessages: to.Ptr(int32(max))})
	if err != nil {
		return nil, q.translate(err, "peek")
	}
	out := make([]Message, 0, len(resp.Messages))
	for _, m := range resp.Messages {
		msg, err := decoded(deref(m.MessageID), deref(m.MessageText))
		if err != nil {
			return nil, err
		}
		msg.DequeueCount, msg.InsertedAt = deref(m.DequeueCount), deref(m.InsertionTime)
		out = append(out, msg)
	}
	return out, nil
}

// Delete removes a received message. Errors: message_not_found when the message is gone or its
// pop receipt is stale (another consumer received it since), queue_not_found.
func (q *Queue) Delete(ctx context.Context, m Message) error {
	_, err := q.client.DeleteMessage(ctx, m.ID, m.PopReceipt, nil)
	if err != nil && queueerror.HasCode(err, queueerror.MessageNotFound, queueerror.PopReceiptMismatch) {
		return apperr.Wrap(err, apperr.KindNotFound, CodeMessageNotFound, "the queue message is gone or was received again")
	}
	return q.translate(err, "delete")
}

// Count is the approximate number of messages in the queue (visible or not).
func (q *Queue) Count(ctx context.Context) (int, error) {
	resp, err := q.client.GetProperties(ctx, nil)
	if err != nil {
		return 0, q.translate(err, "count")
	}
	return int(deref(resp.ApproximateMessagesCount)), nil
}

func decoded(id, text string) (Message, error) {
	b, err := DecodeMessage(text)
	if err != nil || !json.Valid(b) {
		return Message{}, fmt.Errorf("queuestore: message %s is not base64 JSON", id)
	}
	return Message{ID: id, Body: b}, nil
}

func (q *Queue) translate(err error, op string) error {
	if err == nil {
		return nil
	}
	var re *azcore.ResponseError
	if queueerror.HasCode(err, queueerror.QueueNotFound) || (errors.As(err, &re) && re.StatusCode == http.StatusNotFound) {
		return apperr.Wrap(err, apperr.KindNotFound, CodeQueueNotFound, "queue %s does not exist", q.name)
	}
	return apperr.Wrap(err, apperr.KindInternal, azconn.CodeStorageError, "queue %s: %s", q.name, op)
}

func validQueueName(s string) bool {
	if len(s) < 3 || len(s) > 63 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '-' && s[i-1] == '-' {
			return false
		}
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
