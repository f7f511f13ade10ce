package esign

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestRequeueSeal(t *testing.T) {
	t.Parallel()
	now := t0.Add(time.Hour)
	fresh := now.Add(-time.Minute)
	old := now.Add(-SealStuckAfter)
	tests := []struct {
		name        string
		state       SessionState
		sealError   string
		since       time.Time
		previous    int
		wantErr     error
		wantAttempt int
	}{
		{"failed seal is re-queued", SessionSealing, "the source document does not match its SHA-256 hash", fresh, 0, nil, 1},
		{"second re-queue counts on", SessionSealing, "sealing failed after retries", fresh, 2, nil, 3},
		{"stuck at the threshold", SessionSealing, "", old, 0, nil, 1},
		{"unknown sealing time counts as stuck", SessionSealing, "", time.Time{}, 0, nil, 1},
		{"running seal is not stuck", SessionSealing, "", fresh, 0, ErrSealNotStuck, 0},
		{"complete is refused", SessionComplete, "", old, 0, ErrAlreadyComplete, 0},
		{"in_progress is refused", SessionInProgress, "", old, 0, ErrNotSealing, 0},
		{"pending is refused", SessionPending, "", old, 0, ErrNotSealing, 0},
		{"cancelled is refused", SessionCancelled, "x", old, 0, ErrNotSealing, 0},
		{"expired is refused", SessionExpired, "", old, 0, ErrNotSealing, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, _ := sealingSession(t)
			s.State, s.SealError = tt.state, tt.sealError
			c, attempt, err := RequeueSeal(s, now, tt.since, tt.previous)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err %v, want %v", err, tt.wantErr)
				}
				if len(c.Events) != 0 || len(c.Effects) != 0 || s.SealError != tt.sealError || s.State != tt.state {
					t.Fatalf("refused re-queue changed something: %+v, session %+v", c, s)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if attempt != tt.wantAttempt || s.SealError != "" || s.State != SessionSealing {
				t.Fatalf("attempt %d (want %d), session %+v", attempt, tt.wantAttempt, s)
			}
			if diff := cmp.Diff([]string{EvSealRequeued}, kinds(c)); diff != "" {
				t.Fatalf("events (-want +got):\n%s", diff)
			}
			ev := c.Events[0]
			want := map[string]any{"attempt": tt.wantAttempt}
			if tt.sealError != "" {
				want["previousError"] = tt.sealError
			}
			if diff := cmp.Diff(want, ev.Data); diff != "" || ev.Slot != -1 || !ev.At.Equal(now) {
				t.Fatalf("event %+v, data (-want +got):\n%s", ev, diff)
			}
			if len(c.Effects) != 0 || len(c.Slots) != 0 {
				t.Fatalf("re-queue touched slots or effects: %+v", c)
			}
		})
	}
}
