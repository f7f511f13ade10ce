package esign

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// sealingSession is a parallel session with a required, an optional declined and a required
// slot, the required ones signed: the session is sealing.
func sealingSession(t *testing.T) (*Session, []Slot) {
	t.Helper()
	s, slots := newSession(ModeParallel, Required, Optional, Required)
	Start(s, slots, t0)
	mustSign(t, s, slots, 0, t0.Add(time.Minute))
	if _, err := Activate(s, slots, 1, t0.Add(2*time.Minute), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := Decline(s, slots, 1, t0.Add(2*time.Minute), "", nil); err != nil {
		t.Fatal(err)
	}
	mustSign(t, s, slots, 2, t0.Add(3*time.Minute))
	if s.State != SessionSealing {
		t.Fatalf("fixture session is %s, want sealing", s.State)
	}
	return s, slots
}

func TestComplete(t *testing.T) {
	t.Parallel()
	now := t0.Add(10 * time.Minute)
	tests := []struct {
		name    string
		state   SessionState
		wantErr error
	}{
		{"sealing completes", SessionSealing, nil},
		{"complete is already done", SessionComplete, ErrAlreadyComplete},
		{"in_progress is refused", SessionInProgress, ErrNotSealing},
		{"pending is refused", SessionPending, ErrNotSealing},
		{"cancelled is refused", SessionCancelled, ErrNotSealing},
		{"expired is refused", SessionExpired, ErrNotSealing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, slots := sealingSession(t)
			s.State, s.SealError = tt.state, "earlier failure"
			before := *s
			c, err := Complete(s, slots, now, "signed/t/g/signed.pdf", "signed/t/g/certificate.pdf", "evidence/t/g/evidence.jsonl")
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err %v, want %v", err, tt.wantErr)
				}
				if len(c.Events) != 0 || len(c.Effects) != 0 || s.State != before.State || !s.CompletedAt.Equal(before.CompletedAt) {
					t.Fatalf("refused Complete changed something: %+v, session %+v", c, s)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.State != SessionComplete || !s.CompletedAt.Equal(now) || s.SealError != "" ||
				s.SignedPath != "signed/t/g/signed.pdf" || s.CertificatePath != "signed/t/g/certificate.pdf" || s.EvidencePath != "evidence/t/g/evidence.jsonl" {
				t.Fatalf("session after Complete: %+v", s)
			}
			if diff := cmp.Diff([]string{EvSessionCompleted}, kinds(c)); diff != "" {
				t.Fatalf("events (-want +got):\n%s", diff)
			}
			if c.Events[0].Slot != -1 || c.Events[0].Data["signedPath"] != "signed/t/g/signed.pdf" || c.Events[0].Data["evidencePath"] != "evidence/t/g/evidence.jsonl" {
				t.Fatalf("completed event %+v", c.Events[0])
			}
			want := []Effect{{Kind: EffectDocumentsReady, Slot: -1}, {Kind: EffectSignerCompleted, Slot: 0}, {Kind: EffectSignerCompleted, Slot: 2}}
			if diff := cmp.Diff(want, c.Effects); diff != "" {
				t.Fatalf("effects (-want +got):\n%s", diff)
			}
			if len(c.Slots) != 0 {
				t.Fatalf("Complete touched slots %v", c.Slots)
			}
		})
	}
}

func TestFailSeal(t *testing.T) {
	t.Parallel()
	now := t0.Add(10 * time.Minute)
	long := strings.Repeat("é", MaxSealErrorLen+50)
	tests := []struct {
		name       string
		state      SessionState
		reason     string
		wantReason string
		wantErr    error
	}{
		{"records the reason", SessionSealing, "source document hash mismatch", "source document hash mismatch", nil},
		{"empty reason gets a default", SessionSealing, "", "sealing failed", nil},
		{"long reason is cut by runes", SessionSealing, long, strings.Repeat("é", MaxSealErrorLen), nil},
		{"complete is already done", SessionComplete, "x", "", ErrAlreadyComplete},
		{"cancelled is refused", SessionCancelled, "x", "", ErrNotSealing},
		{"in_progress is refused", SessionInProgress, "x", "", ErrNotSealing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, _ := sealingSession(t)
			s.State = tt.state
			c, err := FailSeal(s, now, tt.reason)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || len(c.Events) != 0 || s.SealError != "" {
					t.Fatalf("err %v, change %+v, sealError %q", err, c, s.SealError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.State != SessionSealing || s.SealError != tt.wantReason || !s.CompletedAt.IsZero() {
				t.Fatalf("session after FailSeal: state %s sealError %q", s.State, s.SealError)
			}
			if diff := cmp.Diff([]string{EvSealFailed}, kinds(c)); diff != "" {
				t.Fatalf("events (-want +got):\n%s", diff)
			}
			if c.Events[0].Data["reason"] != tt.wantReason || !c.Events[0].At.Equal(now) {
				t.Fatalf("seal.failed event %+v", c.Events[0])
			}
			if diff := cmp.Diff([]Effect{{Kind: EffectSealFailure, Slot: -1}}, c.Effects); diff != "" {
				t.Fatalf("effects (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFailSealThenComplete(t *testing.T) {
	t.Parallel()
	s, slots := sealingSession(t)
	if _, err := FailSeal(s, t0.Add(5*time.Minute), "timestamp authority unavailable"); err != nil {
		t.Fatal(err)
	}
	if _, err := Complete(s, slots, t0.Add(9*time.Minute), "a", "b", "c"); err != nil {
		t.Fatalf("a re-queued seal after a failure must complete: %v", err)
	}
	if s.SealError != "" || s.State != SessionComplete {
		t.Fatalf("after retry: %+v", s)
	}
	if _, err := FailSeal(s, t0.Add(10*time.Minute), "late poison"); !errors.Is(err, ErrAlreadyComplete) {
		t.Fatalf("FailSeal after Complete: %v", err)
	}
}
