package apptest

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/funcproto"
)

// Invoke hands the job the message as sent, and gives back the reply's status and outputs: a
// single message and an array of them alike; a job's retryable error is a non-200.
func TestInvoke(t *testing.T) {
	var got []byte
	var count int
	job := func(ctx context.Context, m funcproto.QueueMessage) error {
		got, count = m.Body, m.DequeueCount
		if err := funcproto.AddOutput(ctx, "one", map[string]int{"n": 1}); err != nil {
			return err
		}
		for i := range 2 {
			if err := funcproto.AddOutput(ctx, "two", map[string]int{"n": i}); err != nil {
				return err
			}
		}
		return nil
	}
	r := InvokeJSON(t, job, map[string]string{"id": "a \"quoted\" id"})
	if r.Status != http.StatusOK || string(got) != `{"id":"a \"quoted\" id"}` || count != 1 {
		t.Fatalf("status %d, body %s, dequeue count %d", r.Status, got, count)
	}
	if len(r.Messages("one")) != 1 || len(r.Messages("two")) != 2 || r.Messages("none") != nil || r.Count() != 3 {
		t.Fatalf("outputs %s", r.Outputs)
	}
	var n struct{ N int }
	if err := json.Unmarshal(r.Messages("two")[1], &n); err != nil || n.N != 1 {
		t.Fatalf("second message %s", r.Messages("two")[1])
	}
	if r := Invoke(t, job, []byte("not json")); r.Status != http.StatusOK || string(got) != "not json" {
		t.Fatalf("text: status %d, body %q", r.Status, got)
	}
	down := func(context.Context, funcproto.QueueMessage) error {
		return apperr.New(apperr.KindUnavailable, "down", "down")
	}
	if r := Invoke(t, down, []byte(`{}`)); r.Status == http.StatusOK {
		t.Fatal("a retryable failure was acknowledged")
	}
}

// Serve hands a timer job its invocation and a queue job QueueData's message, and gives back
// the reply's outputs and logs.
func TestServe(t *testing.T) {
	ran := false
	timer := funcproto.TimerHandler(func(ctx context.Context, _ funcproto.TimerInfo) error {
		ran = true
		return funcproto.AddOutput(ctx, "out", map[string]int{"n": 1})
	})
	r := Serve(t, timer, map[string]any{"timer": map[string]any{"IsPastDue": false}})
	if r.Status != http.StatusOK || !ran || len(r.Messages("out")) != 1 {
		t.Fatalf("timer: status %d, ran %v, outputs %s", r.Status, ran, r.Outputs)
	}
	var got []byte
	queue := funcproto.QueueHandler(func(_ context.Context, m funcproto.QueueMessage) error {
		got = m.Body
		return nil
	})
	if r := Serve(t, queue, QueueData(t, map[string]string{"id": "a"})); r.Status != http.StatusOK || string(got) != `{"id":"a"}` {
		t.Fatalf("queue: status %d, body %s", r.Status, got)
	}
}
