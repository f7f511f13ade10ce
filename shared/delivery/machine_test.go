package delivery

import (
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/otp"
)

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func newSession(requireOTP bool) *Session {
	s := &Session{DeliveryID: "d1", Mode: ModeBoth, RequireOTP: requireOTP, ExpiresAt: t0.Add(time.Hour)}
	Start(s, t0)
	return s
}

func code(err error) string {
	if e, ok := apperr.As(err); ok {
		return e.Code
	}
	return ""
}

func TestTransitions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		otp       bool
		prep      func(s *Session)
		step      func(s *Session) (Change, error)
		wantErr   string
		wantState State
		wantEvent string
	}{
		{"open from sent", false, nil, func(s *Session) (Change, error) { return Open(s, t0) }, "", StateOpened, EvOpened},
		{"open keeps downloaded", false, func(s *Session) { s.State = StateDownloaded }, func(s *Session) (Change, error) { return Open(s, t0) }, "", StateDownloaded, EvOpened},
		{"download", false, nil, func(s *Session) (Change, error) { return Download(s, t0) }, "", StateDownloaded, EvDownloaded},
		{"download before OTP", true, nil, func(s *Session) (Change, error) { return Download(s, t0) }, "otp_required", StateSent, ""},
		{"sas before OTP", true, nil, func(s *Session) (Change, error) { return IssueSAS(s, t0, t0.Add(time.Minute), "sas") }, "otp_required", StateSent, ""},
		{"sas", false, nil, func(s *Session) (Change, error) { return IssueSAS(s, t0, t0.Add(time.Minute), "sas") }, "", StateSent, EvSASIssued},
		{"open expired", false, nil, func(s *Session) (Change, error) { return Open(s, t0.Add(time.Hour)) }, "delivery_expired", StateSent, ""},
		{"open revoked", false, func(s *Session) { Revoke(s, t0) }, func(s *Session) (Change, error) { return Open(s, t0) }, "delivery_revoked", StateRevoked, ""},
		{"revoke", false, nil, func(s *Session) (Change, error) { return Revoke(s, t0), nil }, "", StateRevoked, EvRevoked},
		{"revoke again", false, func(s *Session) { Revoke(s, t0) }, func(s *Session) (Change, error) { return Revoke(s, t0), nil }, "", StateRevoked, ""},
		{"invited", false, nil, func(s *Session) (Change, error) { return Invited(s, t0, "email") }, "", StateSent, EvInvited},
		{"invited after revoke", false, func(s *Session) { Revoke(s, t0) }, func(s *Session) (Change, error) { return Invited(s, t0, "email") }, "delivery_revoked", StateRevoked, ""},
		{"uploaded", false, nil, func(s *Session) (Change, error) { return Uploaded(s, t0, "https://x", "i1", "n"), nil }, "", StateSent, EvUploaded},
		{"upload failed", false, nil, func(s *Session) (Change, error) { return UploadFailedNow(s, t0, "graph_forbidden", "no", 1), nil }, "", StateSent, EvUploadFailed},
		{"otp send not required", false, nil, func(s *Session) (Change, error) { return SendOTP(s, t0, "h", "m", 0) }, "otp_not_required", StateSent, ""},
		{"otp send", true, nil, func(s *Session) (Change, error) { return SendOTP(s, t0, "h", "m", 0) }, "", StateSent, EvOTPSent},
		{"otp send twice", true, func(s *Session) { _, _ = SendOTP(s, t0, "h", "m", 0) }, func(s *Session) (Change, error) { return SendOTP(s, t0.Add(59*time.Second), "h", "m", 0) }, "otp_rate_limited", StateSent, ""},
		{"otp send after verify", true, func(s *Session) {
			_, _ = SendOTP(s, t0, "h", "m", 0)
			_, _, _ = VerifyOTP(s, t0, func(h string) bool { return h == "h" }, 0)
		}, func(s *Session) (Change, error) { return SendOTP(s, t0.Add(2*time.Minute), "h", "m", 0) }, "otp_already_verified", StateSent, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newSession(tc.otp)
			if tc.prep != nil {
				tc.prep(s)
			}
			ch, err := tc.step(s)
			if code(err) != tc.wantErr {
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
			if s.State != tc.wantState {
				t.Errorf("state %s, want %s", s.State, tc.wantState)
			}
			got := ""
			if len(ch.Events) > 0 {
				got = ch.Events[0].Kind
			}
			if got != tc.wantEvent {
				t.Errorf("event %q, want %q", got, tc.wantEvent)
			}
		})
	}
}

func TestOpenCountsAndStampsOnce(t *testing.T) {
	t.Parallel()
	s := newSession(false)
	_, _ = Open(s, t0)
	_, _ = Open(s, t0.Add(time.Minute))
	if s.ViewCount != 2 || !s.OpenedAt.Equal(t0) {
		t.Fatalf("viewCount %d openedAt %s", s.ViewCount, s.OpenedAt)
	}
	_, _ = Download(s, t0.Add(2*time.Minute))
	_, _ = Download(s, t0.Add(3*time.Minute))
	if !s.DownloadedAt.Equal(t0.Add(2*time.Minute)) || s.StateAt(t0) != StateDownloaded || s.StateAt(t0.Add(time.Hour)) != StateExpired {
		t.Fatalf("downloadedAt %s state %s", s.DownloadedAt, s.State)
	}
}

func TestVerifyOTPOutcomes(t *testing.T) {
	t.Parallel()
	s := newSession(true)
	if _, o, _ := VerifyOTP(s, t0, func(string) bool { return true }, 0); o != otp.Expired {
		t.Fatalf("before send: %v", o)
	}
	_, _ = SendOTP(s, t0, "good", "m", 0)
	for i := 1; i <= otp.MaxAttempts; i++ {
		ch, o, err := VerifyOTP(s, t0, func(h string) bool { return h == "bad" }, 0)
		if err != nil || (i < otp.MaxAttempts && o != otp.Wrong) || (i == otp.MaxAttempts && o != otp.LockedNow) {
			t.Fatalf("try %d: %v %v", i, o, err)
		}
		if i == otp.MaxAttempts && (len(ch.Events) != 2 || ch.Events[1].Kind != EvOTPLocked) {
			t.Fatalf("lock events %v", ch.Events)
		}
	}
	if _, o, _ := VerifyOTP(s, t0, func(h string) bool { return h == "good" }, 0); o != otp.Locked || code(o.Err(&s.OTP, 0)) != "otp_locked" {
		t.Fatalf("after max: %v", o)
	}
	if CheckDocument(s, t0) != ErrOTPRequired {
		t.Fatal("gate open without a pass")
	}
	_, _ = SendOTP(s, t0.Add(time.Minute), "good2", "m", 0)
	if _, o, _ := VerifyOTP(s, t0.Add(time.Minute+otp.TTL), func(h string) bool { return h == "good2" }, 0); o != otp.Expired {
		t.Fatalf("expired code: %v", o)
	}
	_, _ = SendOTP(s, t0.Add(time.Minute+otp.TTL), "good3", "m", 0)
	if ch, o, _ := VerifyOTP(s, t0.Add(time.Minute+otp.TTL), func(h string) bool { return h == "good3" }, 0); o != otp.Passed || ch.Events[0].Kind != EvOTPVerified {
		t.Fatalf("pass: %v", o)
	}
	if err := CheckDocument(s, t0); err != nil {
		t.Fatalf("gate after pass: %v", err)
	}
}

// TestExpireRecordsOnceForALiveSessionPastExpiry (issue 27): Expire records delivery.expired
// {previousState} and stores expired for a live session at or past its expiry (a downloaded one
// too), and changes nothing before its expiry, after a revoke, or a second time.
func TestExpireRecordsOnceForALiveSessionPastExpiry(t *testing.T) {
	t.Parallel()
	for _, from := range []State{StateSent, StateOpened, StateDownloaded} {
		s := newSession(false)
		s.State = from
		if c := Expire(s, s.ExpiresAt.Add(-time.Nanosecond)); len(c.Events) != 0 || s.State != from {
			t.Fatalf("%s before expiry: %d events, state %s", from, len(c.Events), s.State)
		}
		c := Expire(s, s.ExpiresAt)
		if len(c.Events) != 1 || c.Events[0].Kind != EvExpired || c.Events[0].Data["previousState"] != string(from) || s.State != StateExpired {
			t.Fatalf("%s at expiry: %+v, state %s", from, c.Events, s.State)
		}
		if c := Expire(s, s.ExpiresAt.Add(time.Hour)); len(c.Events) != 0 {
			t.Fatalf("%s expired twice: %+v", from, c.Events)
		}
		if CheckLive(s, s.ExpiresAt) != ErrExpired {
			t.Fatalf("%s: a stored expired session is live", from)
		}
	}
	s := newSession(false)
	Revoke(s, t0)
	if c := Expire(s, s.ExpiresAt.Add(time.Hour)); len(c.Events) != 0 || s.State != StateRevoked {
		t.Fatalf("after revoke: %+v, state %s", c.Events, s.State)
	}
	// a stored expired session may still be revoked (its end made explicit)
	s = newSession(false)
	Expire(s, s.ExpiresAt)
	if c := Revoke(s, s.ExpiresAt); len(c.Events) != 1 || s.State != StateRevoked {
		t.Fatalf("revoke after expire: %+v, state %s", c.Events, s.State)
	}
}
