package seal

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apptest"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/queues"
)

var timerData = map[string]any{"timer": map[string]any{
	"Schedule": map[string]any{"AdjustForDST": true}, "ScheduleStatus": map[string]any{}, "IsPastDue": false}}

func requeued(t *testing.T, r apptest.Reply) map[string]esign.SealMessage {
	t.Helper()
	out := map[string]esign.SealMessage{}
	for _, raw := range r.Messages(queues.Seal.Binding()) {
		var m esign.SealMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		out[m.GroupID] = m
	}
	return out
}

func TestReconcileRequeuesStuckSessions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	stuck := e.sealingSession(t, twoSigners()[:1], "")
	failed := e.sealingSession(t, twoSigners()[:1], "")
	fresh := e.sealingSession(t, twoSigners()[:1], "")

	// failed has a recorded seal failure: it waits for an admin re-queue.
	if r := apptest.Serve(t, funcproto.QueueHandler(e.job.HandlePoison), apptest.QueueData(t, esign.SealMessage{GroupID: failed.sess.GroupID, TenantID: failed.sess.TenantID})); r.Status != http.StatusOK {
		t.Fatalf("poison: %d %v", r.Status, r.Logs)
	}
	since, err := e.store.SealingSince(ctx, stuck.sess.GroupID)
	if err != nil || since.IsZero() {
		t.Fatalf("sealing since: %v %v", since, err)
	}
	freshSince, _ := e.store.SealingSince(ctx, fresh.sess.GroupID)

	// The clock stands 10 minutes after fresh went to sealing; the threshold lies between the
	// two sessions' ages.
	gap := freshSince.Sub(since)
	if gap <= 0 {
		t.Fatalf("fresh went to sealing at %v, not after stuck at %v", freshSince, since)
	}
	job := *e.job
	job.d.Now = func() time.Time { return freshSince.Add(10 * time.Minute) }
	job.d.StuckAfter = 10*time.Minute + gap/2
	r := apptest.Serve(t, funcproto.TimerHandler(job.Reconcile), timerData)
	if r.Status != http.StatusOK {
		t.Fatalf("reconcile: %d %v", r.Status, r.Logs)
	}
	got := requeued(t, r)
	m, ok := got[stuck.sess.GroupID]
	if !ok || m.TenantID != stuck.sess.TenantID || m.Attempt < 1 {
		t.Fatalf("stuck session not re-queued: %+v", got)
	}
	if _, ok := got[failed.sess.GroupID]; ok {
		t.Fatal("a session with seal.failed was re-queued")
	}
	if _, ok := got[fresh.sess.GroupID]; ok {
		t.Fatal("a session that just went to sealing was re-queued")
	}

	// The re-queued message seals the session; the next run finds nothing of it.
	if r := apptest.Serve(t, funcproto.QueueHandler(e.job.Handle), apptest.QueueData(t, m)); r.Status != http.StatusOK {
		t.Fatalf("seal: %d %v", r.Status, r.Logs)
	}
	r = apptest.Serve(t, funcproto.TimerHandler(job.Reconcile), timerData)
	if _, ok := requeued(t, r)[stuck.sess.GroupID]; ok {
		t.Fatal("a complete session was re-queued")
	}
}
