package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

func open(t *testing.T) (*Store, *time.Time) {
	t.Helper()
	st, err := Open(context.Background(), filepath.Join(t.TempDir(), "a", "jobs.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	now := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	st.Now = func() time.Time { return now }
	return st, &now
}

func add(t *testing.T, st *Store, n, maxRetries int) string {
	t.Helper()
	recs := make([]json.RawMessage, n)
	for i := range recs {
		recs[i] = json.RawMessage(`{"i":1}`)
	}
	id, err := st.Add(context.Background(), NewJob{Profile: "erp", TemplatePath: "templates/x.zip", Request: json.RawMessage(`{}`), Records: recs, MaxRetries: maxRetries})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestLeaseTakeover: a claimed row is nobody else's until its lease passes; then another worker
// claims it (attempt 2), and the first worker's late outcome changes nothing.
func TestLeaseTakeover(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, now := open(t)
	id := add(t, st, 1, 3)
	first, ok, err := st.Claim(ctx, "", time.Minute)
	if err != nil || !ok || first.Attempt != 1 || first.JobID != id || string(first.Record) != `{"i":1}` {
		t.Fatalf("claim: %+v %v %v", first, ok, err)
	}
	if _, ok, _ := st.Claim(ctx, "", time.Minute); ok {
		t.Fatal("a leased row was claimed twice")
	}
	if due, _ := st.Due(ctx, id); !due {
		t.Fatal("a leased row is still due (a drain waits for it)")
	}
	*now = now.Add(61 * time.Second)
	second, ok, err := st.Claim(ctx, id, time.Minute)
	if err != nil || !ok || second.Attempt != 2 || second.ID != first.ID {
		t.Fatalf("takeover: %+v %v %v", second, ok, err)
	}
	if state, err := st.Fail(ctx, first, "late", 0); err != nil || state != "" {
		t.Fatalf("the first worker's late outcome: %q %v", state, err)
	}
	if state, err := st.Succeed(ctx, second, json.RawMessage(`{"ok":true}`)); err != nil || state != JobCompleted {
		t.Fatalf("succeed: %q %v", state, err)
	}
	rows, _ := st.Rows(ctx, id)
	if rows[0].State != RowDone || rows[0].Attempts != 2 || rows[0].LastError != "" {
		t.Fatalf("row %+v", rows[0])
	}
}

// TestDeadAndNotice: a row is dead after its own max retries; the job's state follows its rows;
// the notice is owed by the same transaction that finishes it when Notify wants it.
func TestDeadAndNotice(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, _ := open(t)
	st.Notify = func(state string) bool { return state != JobCompleted }
	id := add(t, st, 2, 2)
	for {
		r, ok, err := st.Claim(ctx, id, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		if r.Index == 0 {
			_, err = st.Fail(ctx, r, "400 record_invalid: dataSource.salary", 0)
		} else {
			_, err = st.Succeed(ctx, r, json.RawMessage(`{}`))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	j, err := st.Get(ctx, id)
	if err != nil || j.State != JobPartial || j.Dead != 1 || j.Done != 1 || j.NotifyState != NoticePending || j.FinishedAt == nil {
		t.Fatalf("job %+v %v", j, err)
	}
	n, ok, err := st.NextNotice(ctx)
	if err != nil || !ok || n.ID != id {
		t.Fatalf("next notice %v %v", ok, err)
	}
	if err := st.NoticeOutcome(ctx, id, errors.New("503"), false); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := st.NextNotice(ctx); ok {
		t.Fatal("a failed notice is tried again at once")
	}
	if err := st.NoticeOutcome(ctx, id, errors.New("410"), true); err != nil {
		t.Fatal(err)
	}
	if j, _ := st.Get(ctx, id); j.NotifyState != NoticeFailed || j.NotifyAttempts != 2 {
		t.Fatalf("after a permanent refusal: %+v", j)
	}
	if n, err := st.Retry(ctx, id); err != nil || n != 1 {
		t.Fatalf("retry %d %v", n, err)
	}
	if j, _ := st.Get(ctx, id); j.State != JobQueued || j.FinishedAt != nil || j.NotifyState != NoticeNone || j.Pending != 1 {
		t.Fatalf("after retry: %+v", j)
	}
	if _, err := st.Get(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown job: %v", err)
	}
}

// TestScheduled: a job for later is not claimed before its time.
func TestScheduled(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, now := open(t)
	id, err := st.Add(ctx, NewJob{Profile: "erp", Request: json.RawMessage(`{}`), Records: []json.RawMessage{json.RawMessage(`{}`)},
		MaxRetries: 1, RunAt: now.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := st.Claim(ctx, "", time.Minute); ok {
		t.Fatal("claimed before its time")
	}
	if j, _ := st.Get(ctx, id); j.State != JobScheduled {
		t.Fatalf("state %s", j.State)
	}
	*now = now.Add(time.Hour)
	if _, ok, _ := st.Claim(ctx, "", time.Minute); !ok {
		t.Fatal("not claimed at its time")
	}
	if j, _ := st.Get(ctx, id); j.State != JobQueued {
		t.Fatalf("state %s", j.State)
	}
}

// TestPurgeDueOncePerInterval: two handles of one store file (two worker processes) purge once
// per PurgeInterval between them; days 0 never purges nor takes the day's turn.
func TestPurgeDueOncePerInterval(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s", "jobs.db")
	now := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	var handles []*Store
	for range 2 {
		st, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		st.Now = func() time.Time { return now }
		handles = append(handles, st)
	}
	a, b := handles[0], handles[1]
	if _, ran, err := a.PurgeDue(ctx, 0); err != nil || ran {
		t.Fatalf("0 days: ran %v %v", ran, err)
	}
	if _, ran, err := b.PurgeDue(ctx, 90); err != nil || !ran {
		t.Fatalf("first: ran %v %v", ran, err)
	}
	now = now.Add(PurgeInterval - time.Second)
	if _, ran, err := a.PurgeDue(ctx, 90); err != nil || ran {
		t.Fatalf("within the interval, the other handle: ran %v %v", ran, err)
	}
	now = now.Add(time.Second)
	if _, ran, err := a.PurgeDue(ctx, 90); err != nil || !ran {
		t.Fatalf("after the interval: ran %v %v", ran, err)
	}
	if _, ran, err := b.PurgeDue(ctx, 90); err != nil || ran {
		t.Fatalf("again at once: ran %v %v", ran, err)
	}
}
