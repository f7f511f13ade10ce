package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/esign-svc/esign/devtools/funchost"
	"github.com/esign-svc/esign/shared/azure/queuestore"
	"github.com/google/go-cmp/cmp"
)

func queueTrigger(queue string, withRelay bool) string {
	relay := ""
	if withRelay {
		relay = `,{"type":"queue","direction":"out","name":"relay","queueName":"%RELAY_QUEUE%","connection":"AzureWebJobsStorage"}`
	}
	return `{"bindings":[{"type":"queueTrigger","direction":"in","name":"msg","queueName":"` + queue + `","connection":"AzureWebJobsStorage"}` + relay + `]}`
}

func enqueue(t *testing.T, c *azqueue.QueueClient, v any) string {
	t.Helper()
	text, err := queuestore.EncodeMessage(v)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.EnqueueMessage(context.Background(), text, nil); err != nil {
		t.Fatal(err)
	}
	return text
}

// TestQueueTriggerDelivery checks the message as the handler receives it in both shapes, its
// deletion on success, and the queue output of a queue-triggered function.
func TestQueueTriggerDelivery(t *testing.T) {
	t.Parallel()
	for _, shape := range []struct {
		name  string
		shape funchost.RequestShape
	}{{"observed", funchost.ShapeObserved}, {"documented", funchost.ShapeDocumented}} {
		t.Run(shape.name, func(t *testing.T) {
			t.Parallel()
			in, relay := queueName("in"), queueName("relay")
			app := writeApp(t, fastQueues(), map[string]string{"Consume": queueTrigger("%IN_QUEUE%", true)})
			e := startHost(t, shape.shape, map[string]string{"IN_QUEUE": in, "RELAY_QUEUE": relay}, app)
			qc := queueClient(t, in)
			enqueue(t, qc, map[string]string{"groupId": "g1"})
			rec := e.waitRecords(t, "Consume", 1, 10*time.Second)[0]
			var req struct {
				Data     struct{ Msg json.RawMessage }
				Metadata map[string]json.RawMessage
			}
			if err := json.Unmarshal(rec.Request, &req); err != nil {
				t.Fatal(err)
			}
			// Documented: the message text as a JSON string. Observed: that, JSON-encoded again.
			var text string
			if err := json.Unmarshal(req.Data.Msg, &text); err != nil {
				t.Fatalf("Data.msg %s is not a JSON string", req.Data.Msg)
			}
			if shape.shape == funchost.ShapeObserved {
				if err := json.Unmarshal([]byte(text), &text); err != nil {
					t.Fatalf("observed Data.msg %s is not JSON-encoded twice", req.Data.Msg)
				}
			}
			if text != `{"groupId":"g1"}` {
				t.Errorf("message text %q", text)
			}
			wantCount, wantID := `1`, func(s string) bool { return len(s) > 2 && s[0] == '"' && s[1] != '\\' }
			if shape.shape == funchost.ShapeObserved {
				wantCount = `"1"`
				wantID = func(s string) bool { return len(s) > 4 && s[:3] == `"\"` }
			}
			if got := string(req.Metadata["DequeueCount"]); got != wantCount {
				t.Errorf("DequeueCount %s, want %s", got, wantCount)
			}
			for _, k := range []string{"Id", "PopReceipt", "InsertionTime", "ExpirationTime", "NextVisibleTime"} {
				if !wantID(string(req.Metadata[k])) {
					t.Errorf("Metadata.%s = %s in the %s shape", k, req.Metadata[k], shape.name)
				}
			}
			rc := queueClient(t, relay)
			eventually(t, 10*time.Second, func() bool { return approxCount(t, qc) == 0 && len(peekAll(t, rc)) == 1 },
				func() string { return "message not deleted or relay output not written" })
			b, err := queuestore.DecodeMessage(peekAll(t, rc)[0])
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(`{"got":`+string(req.Data.Msg)+`}`, string(b)); diff != "" {
				t.Errorf("relay output (-want +got):\n%s", diff)
			}
		})
	}
}

// TestQueueConcurrencyBound checks that at most batchSize+newBatchThreshold messages run at once.
func TestQueueConcurrencyBound(t *testing.T) {
	t.Parallel()
	in := queueName("slow")
	qs := fastQueues()
	qs["batchSize"], qs["newBatchThreshold"] = 2, 1
	app := writeApp(t, qs, map[string]string{"Slow": queueTrigger(in, false)})
	qc := queueClient(t, in)
	for i := range 10 {
		enqueue(t, qc, map[string]int{"i": i})
	}
	e := startHost(t, funchost.ShapeObserved, nil, app)
	recs := e.waitRecords(t, "Slow", 10, 20*time.Second)
	most := 0
	for _, r := range recs {
		most = max(most, r.Concurrent)
	}
	if most > 3 {
		t.Errorf("%d invocations ran at once, want at most batchSize+newBatchThreshold = 3", most)
	}
	if most < 2 {
		t.Errorf("at most %d invocation ran at once: a batch of 2 should run concurrently", most)
	}
}

// TestQueueRetryAndPoison checks that a failing message is retried with a rising DequeueCount
// and moves, body intact, to <queue>-poison after maxDequeueCount (5) failures.
func TestQueueRetryAndPoison(t *testing.T) {
	t.Parallel()
	in := queueName("fail")
	app := writeApp(t, fastQueues(), map[string]string{"Fail": queueTrigger(in, true)})
	relay := queueName("never")
	e := startHost(t, funchost.ShapeObserved, map[string]string{"RELAY_QUEUE": relay}, app)
	qc, pc := queueClient(t, in), queueClient(t, in+"-poison")
	text := enqueue(t, qc, map[string]string{"groupId": "poisoned"})
	eventually(t, 30*time.Second, func() bool { return len(peekAll(t, pc)) == 1 },
		func() string { return fmt.Sprintf("poison queue has %d messages", len(peekAll(t, pc))) })
	if got := peekAll(t, pc)[0]; got != text {
		t.Errorf("poison message %q, want the original %q", got, text)
	}
	if n := approxCount(t, qc); n != 0 {
		t.Errorf("%d messages left in %s", n, in)
	}
	recs := e.records(t, "Fail")
	var counts []string
	for _, r := range recs {
		var req struct{ Metadata struct{ DequeueCount string } }
		if err := json.Unmarshal(r.Request, &req); err != nil {
			t.Fatal(err)
		}
		counts = append(counts, req.Metadata.DequeueCount)
	}
	if diff := cmp.Diff([]string{"1", "2", "3", "4", "5"}, counts); diff != "" {
		t.Errorf("DequeueCount of the attempts (-want +got):\n%s", diff)
	}
	if n := len(peekAll(t, queueClient(t, relay))); n != 0 {
		t.Errorf("failed invocations wrote %d outputs", n)
	}
}

// TestQueuePastMaxGoesToPoison checks that a message whose DequeueCount is already above
// maxDequeueCount is moved to the poison queue without an invocation.
func TestQueuePastMaxGoesToPoison(t *testing.T) {
	t.Parallel()
	in := queueName("past")
	qs := fastQueues()
	qs["maxDequeueCount"] = 2
	app := writeApp(t, qs, map[string]string{"Consume": queueTrigger(in, false)})
	qc, pc := queueClient(t, in), queueClient(t, in+"-poison")
	text := enqueue(t, qc, map[string]string{"groupId": "old"})
	ctx := context.Background()
	for range 3 { // DequeueCount becomes 3 > 2; the host's dequeue makes it 4
		one := int32(1)
		resp, err := qc.DequeueMessages(ctx, &azqueue.DequeueMessagesOptions{VisibilityTimeout: &one})
		if err != nil || len(resp.Messages) != 1 {
			t.Fatalf("dequeue: %v (%d messages)", err, len(resp.Messages))
		}
		m, zero := resp.Messages[0], int32(0)
		if _, err := qc.UpdateMessage(ctx, *m.MessageID, *m.PopReceipt, *m.MessageText, &azqueue.UpdateMessageOptions{VisibilityTimeout: &zero}); err != nil {
			t.Fatal(err)
		}
	}
	e := startHost(t, funchost.ShapeObserved, nil, app)
	eventually(t, 10*time.Second, func() bool { return len(peekAll(t, pc)) == 1 },
		func() string { return "message did not reach the poison queue" })
	if got := peekAll(t, pc)[0]; got != text {
		t.Errorf("poison message %q, want %q", got, text)
	}
	if n := len(e.records(t, "Consume")); n != 0 {
		t.Errorf("function invoked %d times, want 0", n)
	}
	if n := approxCount(t, qc); n != 0 {
		t.Errorf("%d messages left in %s", n, in)
	}
}

// TestQueueOutputWakesListener checks the real host's shared queue watcher: a message a
// function of the app writes through its queue output wakes the app's listener of that queue,
// which otherwise waits out its back-off. Every listener here waits a minute after an empty
// poll, so the chain (an HTTP function's output to `in`, Consume relaying it to `tail`, Tail)
// can only run within the test's time through the wake-ups.
func TestQueueOutputWakesListener(t *testing.T) {
	t.Parallel()
	in, tail := queueName("wake"), queueName("tail")
	qs := fastQueues()
	qs["maxPollingInterval"] = "00:01:00"
	httpFn := `{"bindings":[{"type":"httpTrigger","direction":"in","name":"req","authLevel":"anonymous","methods":["post"],"route":"p/wake"},` +
		`{"type":"http","direction":"out","name":"res"},{"type":"queue","direction":"out","name":"out","queueName":"%IN_QUEUE%","connection":"AzureWebJobsStorage"}]}`
	relay := strings.Replace(queueTrigger("%IN_QUEUE%", true), "%RELAY_QUEUE%", "%TAIL_QUEUE%", 1)
	app := writeApp(t, qs, map[string]string{"HttpWake": httpFn, "Consume": relay, "Tail": queueTrigger("%TAIL_QUEUE%", false)})
	e, err := tryStartOpts(t, funchost.Options{Apps: []string{app}, MinPollingInterval: time.Minute},
		map[string]string{"IN_QUEUE": in, "TAIL_QUEUE": tail})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // the listeners' first polls (empty queues) are behind them
	resp, _ := do(t, "POST", e.h.URL()+"/api/p/wake", strings.NewReader(`{"k":"v"}`), map[string]string{"Content-Type": "application/json"})
	if resp.StatusCode != 201 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	e.waitRecords(t, "Tail", 1, 20*time.Second)
	if got := len(e.records(t, "Consume")); got != 1 {
		t.Errorf("Consume ran %d times, want 1", got)
	}
}
