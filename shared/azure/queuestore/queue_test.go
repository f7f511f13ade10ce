package queuestore

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
)

func TestMain(m *testing.M) { azuritetest.Main(m) }

func newQueue(t *testing.T) *Queue {
	t.Helper()
	q, err := New(azuritetest.Account(t), azuritetest.Name("q-"))
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Ensure(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := q.Ensure(context.Background()); err != nil {
		t.Fatalf("second Ensure: %v", err)
	}
	return q
}

func wantErr(t *testing.T, err error, kind apperr.Kind, code string) {
	t.Helper()
	e, ok := apperr.As(err)
	if !ok || e.Kind != kind || e.Code != code {
		t.Fatalf("err = %v, want kind %d code %s", err, kind, code)
	}
}

type job struct {
	GroupID string `json:"groupId"`
	Attempt int    `json:"attempt"`
}

func TestSendReceiveDelete(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	q := newQueue(t)
	id, err := q.Send(ctx, job{GroupID: "g-1", Attempt: 1})
	if err != nil || id == "" {
		t.Fatalf("Send: %q, %v", id, err)
	}
	if n, err := q.Count(ctx); err != nil || n != 1 {
		t.Fatalf("Count = %d, %v; want 1", n, err)
	}
	peeked, err := q.Peek(ctx, 32)
	if err != nil || len(peeked) != 1 || peeked[0].ID != id || peeked[0].PopReceipt != "" {
		t.Fatalf("Peek = %+v, %v", peeked, err)
	}
	msgs, err := q.Receive(ctx, 1, time.Minute)
	if err != nil || len(msgs) != 1 {
		t.Fatalf("Receive = %+v, %v", msgs, err)
	}
	var got job
	if err := msgs[0].Decode(&got); err != nil || got != (job{GroupID: "g-1", Attempt: 1}) {
		t.Errorf("decoded %+v, %v", got, err)
	}
	if msgs[0].DequeueCount != 1 || msgs[0].PopReceipt == "" || msgs[0].InsertedAt.IsZero() {
		t.Errorf("message = %+v", msgs[0])
	}
	if again, err := q.Receive(ctx, 1, time.Minute); err != nil || len(again) != 0 {
		t.Errorf("a received message is visible again at once: %+v, %v", again, err)
	}
	if err := q.Delete(ctx, msgs[0]); err != nil {
		t.Fatal(err)
	}
	wantErr(t, q.Delete(ctx, msgs[0]), apperr.KindNotFound, CodeMessageNotFound)
	if n, err := q.Count(ctx); err != nil || n != 0 {
		t.Errorf("Count after delete = %d, %v", n, err)
	}
}

func TestVisibilityDelay(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	q := newQueue(t)
	if _, err := q.SendWithVisibilityDelay(ctx, job{GroupID: "later"}, time.Hour); err != nil {
		t.Fatal(err)
	}
	if n, err := q.Count(ctx); err != nil || n != 1 {
		t.Fatalf("Count = %d, %v; want 1", n, err)
	}
	if msgs, err := q.Receive(ctx, 32, time.Second); err != nil || len(msgs) != 0 {
		t.Errorf("a delayed message was received: %+v, %v", msgs, err)
	}
	for _, d := range []time.Duration{-time.Second, MaxVisibilityDelay + time.Second} {
		if _, err := q.SendWithVisibilityDelay(ctx, job{}, d); err == nil {
			t.Errorf("delay %s accepted", d)
		}
	}
}

// TestWireFormat reads what Send wrote with a raw azqueue client: the text must be base64 of a
// JSON object (what the Functions host decodes with messageEncoding base64).
func TestWireFormat(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	acct := azuritetest.Account(t)
	q, err := New(acct, azuritetest.Name("wire-"))
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Send(ctx, map[string]any{"groupId": "g/ü", "n": 3}); err != nil {
		t.Fatal(err)
	}
	raw := acct.Queues().NewQueueClient(q.Name())
	resp, err := raw.PeekMessages(ctx, &azqueue.PeekMessagesOptions{NumberOfMessages: to.Ptr[int32](1)})
	if err != nil || len(resp.Messages) != 1 {
		t.Fatalf("raw peek: %+v, %v", resp, err)
	}
	b, err := base64.StdEncoding.DecodeString(*resp.Messages[0].MessageText)
	if err != nil {
		t.Fatalf("message text %q is not base64: %v", *resp.Messages[0].MessageText, err)
	}
	var obj map[string]any
	if err := json.Unmarshal(b, &obj); err != nil || obj["groupId"] != "g/ü" || obj["n"] != 3.0 {
		t.Errorf("decoded %s into %v, %v", b, obj, err)
	}
	// A message someone else wrote unencoded is reported, not misread.
	if _, err := raw.EnqueueMessage(ctx, "not base64 {", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Receive(ctx, 32, time.Second); err == nil || !strings.Contains(err.Error(), "not base64 JSON") {
		t.Errorf("Receive of a raw message: %v", err)
	}
}

func TestRefusedValues(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	q := newQueue(t)
	for _, v := range []any{"a string", 42, []int{1}, nil, true, func() {}} {
		if _, err := q.Send(ctx, v); err == nil {
			t.Errorf("Send(%T %v) accepted", v, v)
		}
	}
	_, err := q.Send(ctx, map[string]string{"pdf": strings.Repeat("x", 48<<10)})
	wantErr(t, err, apperr.KindTooLarge, CodeMessageTooLarge)
	if n, err := q.Count(ctx); err != nil || n != 0 {
		t.Errorf("refused sends wrote %d messages, %v", n, err)
	}
	for _, n := range []int{0, 33} {
		if _, err := q.Receive(ctx, n, time.Second); err == nil {
			t.Errorf("Receive(%d) accepted", n)
		}
		if _, err := q.Peek(ctx, n); err == nil {
			t.Errorf("Peek(%d) accepted", n)
		}
	}
}

func TestMissingQueue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	q, err := New(azuritetest.Account(t), azuritetest.Name("missing-"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = q.Send(ctx, job{})
	wantErr(t, err, apperr.KindNotFound, CodeQueueNotFound)
	_, err = q.Count(ctx)
	wantErr(t, err, apperr.KindNotFound, CodeQueueNotFound)
	_, err = q.Receive(ctx, 1, time.Second)
	wantErr(t, err, apperr.KindNotFound, CodeQueueNotFound)
	_, err = q.Peek(ctx, 1)
	wantErr(t, err, apperr.KindNotFound, CodeQueueNotFound)
}

func TestQueueNames(t *testing.T) {
	t.Parallel()
	acct := azuritetest.Account(t)
	for _, n := range []string{"seal", "seal-poison", "abc"} {
		if _, err := New(acct, n); err != nil {
			t.Errorf("New(%q): %v", n, err)
		}
	}
	for _, n := range []string{"", "ab", "Seal", "-seal", "seal-", "se--al", "se_al", strings.Repeat("a", 64)} {
		if _, err := New(acct, n); err == nil {
			t.Errorf("New(%q) accepted", n)
		}
	}
}
