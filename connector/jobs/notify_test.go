package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/event"
)

// TestNoticeRetriesOnTheEventsPolicy: a failed completion notice is tried again on the service's
// event delivery policy (event.Backoff after each attempt) and given up once event.RetryFor has
// passed since the job finished: one retry machine for events, callbacks and notices.
func TestNoticeRetriesOnTheEventsPolicy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, now := open(t)
	st.Notify = func(string) bool { return true }
	id := add(t, st, 1, 1)
	r, ok, err := st.Claim(ctx, id, time.Minute)
	if err != nil || !ok {
		t.Fatalf("claim %v %v", ok, err)
	}
	if _, err := st.Succeed(ctx, r, json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	finished := *now
	due := func() bool {
		t.Helper()
		_, ok, err := st.NextNotice(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	for attempt := 1; attempt <= 10; attempt++ {
		if !due() {
			t.Fatalf("attempt %d is not due at %s", attempt, now.Sub(finished))
		}
		if err := st.NoticeOutcome(ctx, id, errors.New("503"), false); err != nil {
			t.Fatal(err)
		}
		wait := event.Backoff(attempt)
		*now = now.Add(wait - time.Millisecond)
		if due() {
			t.Fatalf("after attempt %d the notice is due before %s", attempt, wait)
		}
		*now = now.Add(time.Millisecond)
	}
	*now = finished.Add(event.RetryFor)
	if err := st.NoticeOutcome(ctx, id, errors.New("503"), false); err != nil {
		t.Fatal(err)
	}
	j, err := st.Get(ctx, id)
	if err != nil || j.NotifyState != NoticeFailed || j.NotifyAttempts != 11 {
		t.Fatalf("after %s: %s with %d attempts (%v), want failed after 11", event.RetryFor, j.NotifyState, j.NotifyAttempts, err)
	}
}
