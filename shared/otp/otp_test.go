package otp

import (
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
)

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func is(h string) func(string) bool { return func(s string) bool { return s == h } }

func TestNewCodeIsSixDigits(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for i := 0; i < 200; i++ {
		c, err := NewCode()
		if err != nil || len(c) != Digits || c[0] < '0' || c[0] > '9' {
			t.Fatalf("code %q %v", c, err)
		}
		for _, r := range c {
			if r < '0' || r > '9' {
				t.Fatalf("code %q", c)
			}
		}
		seen[c] = true
	}
	if len(seen) < 190 {
		t.Fatalf("only %d distinct codes of 200", len(seen))
	}
}

func TestSendRateAndTTL(t *testing.T) {
	t.Parallel()
	var s State
	if err := s.CheckSend(t0, 0, 0); err != nil {
		t.Fatal(err)
	}
	s.Record(t0, "email", "a***@b***.test", "h")
	err := s.CheckSend(t0.Add(59*time.Second), 0, 0)
	if e, _ := apperr.As(err); e == nil || e.Kind != apperr.KindRateLimited || e.RetryAfter != time.Second {
		t.Fatalf("within 60 s: %v", err)
	}
	if err := s.CheckSend(t0.Add(SendInterval), 0, 0); err != nil {
		t.Fatalf("at 60 s: %v", err)
	}
	if o, _ := s.Verify(t0.Add(TTL), 0, 0, is("h")); o != Expired {
		t.Fatalf("at TTL: %v", o)
	}
	if o, _ := s.Verify(t0.Add(TTL-time.Nanosecond), 0, 0, is("h")); o != Passed || !s.Verified(0) || s.Verified(1) {
		t.Fatalf("before TTL: %v", o)
	}
	if _, err := s.Verify(t0, 0, 0, is("h")); err != ErrAlreadyVerified {
		t.Fatalf("again: %v", err)
	}
	if err := s.CheckSend(t0.Add(time.Hour), 0, 0); err != ErrAlreadyVerified {
		t.Fatalf("send after pass: %v", err)
	}
	if err := s.CheckSend(t0.Add(time.Hour), 1, 0); err != nil {
		t.Fatalf("a new device generation needs its own pass: %v", err)
	}
}

func TestLockAndBlock(t *testing.T) {
	t.Parallel()
	var s State
	at := t0
	for lock := 1; lock <= MaxLocks; lock++ {
		at = at.Add(SendInterval)
		if err := s.CheckSend(at, 0, 0); err != nil {
			t.Fatalf("send %d: %v", lock, err)
		}
		s.Record(at, "email", "d", "good")
		for try := 1; try <= MaxAttempts; try++ {
			o, err := s.Verify(at, 0, 0, is("bad"))
			want := Wrong
			if try == MaxAttempts {
				want = LockedNow
				if lock == MaxLocks {
					want = BlockedNow
				}
			}
			if err != nil || o != want {
				t.Fatalf("lock %d try %d: %v %v, want %v", lock, try, o, err, want)
			}
		}
		if lock < MaxLocks {
			if o, _ := s.Verify(at, 0, 0, is("good")); o != Locked {
				t.Fatalf("the locked code: %v", o)
			}
		}
	}
	blockedAt := at
	wantBlocked := func(err error, now time.Time) {
		t.Helper()
		e, _ := apperr.As(err)
		if e == nil || e.Kind != apperr.KindInvalid || e.Code != CodeBlocked || e.RetryAfter != blockedAt.Add(DefaultBlock).Sub(now) ||
			e.Extra["blockedUntil"] != blockedAt.Add(DefaultBlock).Format(time.RFC3339) {
			t.Fatalf("at %s: %v, want 400 otp_blocked until %s", now, err, blockedAt.Add(DefaultBlock))
		}
	}
	almost := blockedAt.Add(DefaultBlock - time.Second)
	wantBlocked(s.CheckSend(almost, 0, 0), almost)
	_, err := s.Verify(almost, 0, 0, is("good"))
	wantBlocked(err, almost)
	if !s.Blocked || s.Locks != MaxLocks {
		t.Fatalf("a refused call changed the block: %+v", s)
	}
	if err := s.CheckSend(blockedAt.Add(DefaultBlock), 0, 0); err != nil || s.Blocked || s.Locks != 0 {
		t.Fatalf("the block did not lift after %s: %v %+v", DefaultBlock, err, s)
	}
}

func TestBlockTimeAndReset(t *testing.T) {
	t.Parallel()
	block := func() State {
		s := State{Locks: MaxLocks - 1}
		s.Record(t0, "email", "d", "good")
		for try := 1; try <= MaxAttempts; try++ {
			if o, err := s.Verify(t0, 0, 5*time.Minute, is("bad")); err != nil || (try == MaxAttempts) != (o == BlockedNow) {
				t.Fatalf("try %d: %v %v", try, o, err)
			}
		}
		return s
	}
	s := block()
	if e, _ := apperr.As(BlockedNow.Err(&s, 5*time.Minute)); e == nil || e.Kind != apperr.KindInvalid || e.Code != CodeBlocked ||
		e.Extra["blockedUntil"] != t0.Add(5*time.Minute).Format(time.RFC3339) {
		t.Fatalf("the blocking verify's answer: %v", e)
	}
	if _, err := s.Verify(t0.Add(5*time.Minute-time.Nanosecond), 0, 5*time.Minute, is("good")); err == nil {
		t.Fatal("verify within the configured block time was let through")
	}
	s.Record(t0, "email", "d", "good") // a code from before the block is no way in once it lifts
	if o, err := s.Verify(t0.Add(5*time.Minute), 0, 5*time.Minute, is("good")); err != nil || o != Expired || s.Blocked {
		t.Fatalf("after the configured block time: %v %v %+v", o, err, s)
	}
	s = block()
	s.Reset() // the requester's resend
	if err := s.CheckSend(t0.Add(SendInterval), 0, 5*time.Minute); err != nil || s.Blocked || !s.BlockedAt.IsZero() {
		t.Fatalf("after the requester's resend: %v %+v", err, s)
	}
	r := block().Stored().State() // the block and its time survive storage
	if _, err := r.Verify(t0.Add(time.Minute), 0, 5*time.Minute, is("good")); err == nil || !r.BlockedAt.Equal(t0) {
		t.Fatalf("stored block: %v %+v", err, r)
	}
}
