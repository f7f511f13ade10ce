package workflow

import (
	"errors"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/otp"
)

// TestReviewerLive: a reviewer token names one approver's turn; it is dead once that approver
// decided (stage moves on), was escalated past, the round restarted, or the workflow ended.
func TestReviewerLive(t *testing.T) {
	t.Parallel()
	flow, _, _, _ := schemas(t)
	w := start{state: StatePendingApproval, spend: 10}.build(flow)
	first := ReviewerID(1, 1, 0)
	if !w.ReviewerLive(first) || w.CurrentReviewer() != "r1.s1.a0" {
		t.Fatalf("stage 1 approver 0: current %q", w.CurrentReviewer())
	}
	if _, err := w.Escalate(flow, t0); err != nil {
		t.Fatal(err)
	}
	second := ReviewerID(1, 1, 1)
	if w.ReviewerLive(first) || !w.ReviewerLive(second) {
		t.Fatalf("after escalate: first live %v, second live %v", w.ReviewerLive(first), w.ReviewerLive(second))
	}
	if _, err := w.Approve(Approver{Index: 1}, "", t0); err != nil {
		t.Fatal(err)
	}
	legal := ReviewerID(1, 2, 0)
	if w.ReviewerLive(second) || !w.ReviewerLive(legal) {
		t.Fatalf("after stage 1 approve: second live %v, legal live %v", w.ReviewerLive(second), w.ReviewerLive(legal))
	}
	if _, err := w.Reject(Approver{Index: 0}, "no", t0); err != nil {
		t.Fatal(err)
	}
	if w.ReviewerLive(legal) || w.CurrentReviewer() != "" {
		t.Fatalf("after reject: legal live %v, current %q", w.ReviewerLive(legal), w.CurrentReviewer())
	}
}

// TestResendInviteOncePerMinute: an e-mail asked by a transition starts the 60 s; a resend
// within them is 429 with Retry-After, after them it asks the current approver's e-mail again.
func TestResendInviteOncePerMinute(t *testing.T) {
	t.Parallel()
	flow, _, _, _ := schemas(t)
	w := start{state: StatePendingApproval, spend: 10}.build(flow)
	if _, err := w.Escalate(flow, t0); err != nil {
		t.Fatal(err)
	}
	_, err := w.ResendInvite(t0.Add(59 * time.Second))
	if e, ok := apperr.As(err); !ok || e.Code != "invite_rate_limited" || e.RetryAfter != time.Second {
		t.Fatalf("within 60 s: %v", err)
	}
	ch, err := w.ResendInvite(t0.Add(60 * time.Second))
	if err != nil || len(ch.Effects) != 1 || ch.Effects[0].Kind != EffectNotifyApprovers {
		t.Fatalf("after 60 s: %v %+v", err, ch.Effects)
	}
	// without approval stages no approver is named: nothing to resend, nothing audited
	_, _, open, _ := schemas(t)
	w = start{state: StatePendingApproval, spend: 10}.build(open)
	if ch, err := w.ResendInvite(t0); !errors.Is(err, ErrInvalidState) || !ch.Empty() {
		t.Fatalf("without stages: %v %+v", err, ch)
	}
}

// TestParticipantOTP: the gate holds until the code is verified; a send within 60 s is 429; a
// wrong code is stored as an attempt; the right one opens the gate; no OTP without requireOtp.
func TestParticipantOTP(t *testing.T) {
	t.Parallel()
	codeOf := func(err error) string {
		if e, ok := apperr.As(err); ok {
			return e.Code
		}
		return ""
	}
	flow, _, _, _ := schemas(t)
	w := start{state: StateInProgress}.build(flow)
	if _, err := w.SendOTP("h", "a***@x.test", t0, 0); codeOf(err) != "otp_not_required" {
		t.Fatalf("without requireOtp: %v", err)
	}
	w.Setup.RequireOTP = true
	if err := w.OTPGate(); codeOf(err) != "otp_required" {
		t.Fatalf("gate before the code: %v", err)
	}
	if _, err := w.SendOTP("h", "a***@x.test", t0, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := w.SendOTP("h2", "a***@x.test", t0.Add(30*time.Second), 0); codeOf(err) != "otp_rate_limited" {
		t.Fatalf("second send within 60 s: %v", err)
	}
	is := func(want string) func(string) bool { return func(h string) bool { return h == want } }
	ch, out, err := w.VerifyOTP(is("wrong"), t0.Add(time.Minute), 0)
	if err != nil || out.String() != "wrong_code" || len(ch.Events) != 1 || w.OTP.Attempts != 1 {
		t.Fatalf("wrong code: %v %v %+v", err, out, w.OTP)
	}
	if _, out, err := w.VerifyOTP(is("h"), t0.Add(time.Minute), 0); err != nil || out.String() != "passed" {
		t.Fatalf("right code: %v %v", err, out)
	}
	if err := w.OTPGate(); err != nil {
		t.Fatalf("gate after the code: %v", err)
	}
}

// TestParticipantOTPBlock: three locked codes block the participant's OTP with 400 otp_blocked;
// the participant's own resend-invite does not lift it (issue 21: it used to), the block holds
// until otp.DefaultBlock has run (injected times) and lifts then.
func TestParticipantOTPBlock(t *testing.T) {
	t.Parallel()
	codeOf := func(err error) string {
		if e, ok := apperr.As(err); ok && e.Kind == apperr.KindInvalid {
			return e.Code
		}
		return ""
	}
	flow, _, _, _ := schemas(t)
	// 0 is the default block time; a configured one (OTP_BLOCK_MINUTES) is what holds
	for _, tc := range []struct{ given, holds time.Duration }{{0, otp.DefaultBlock}, {5 * time.Minute, 5 * time.Minute}} {
		participantOTPBlock(t, flow, codeOf, tc.given, tc.holds)
	}
}

func participantOTPBlock(t *testing.T, flow *Schema, codeOf func(error) string, block, holds time.Duration) {
	t.Helper()
	w := start{state: StateInProgress}.build(flow)
	w.Setup.RequireOTP = true
	at := t0
	for lock := 1; lock <= otp.MaxLocks; lock++ {
		at = at.Add(otp.SendInterval)
		if _, err := w.SendOTP("h", "a***@x.test", at, block); err != nil {
			t.Fatalf("send %d: %v", lock, err)
		}
		for try := 1; try <= otp.MaxAttempts; try++ {
			if _, _, err := w.VerifyOTP(func(string) bool { return false }, at, block); err != nil {
				t.Fatalf("lock %d try %d: %v", lock, try, err)
			}
		}
	}
	blockedAt := at
	if !w.OTP.Blocked {
		t.Fatalf("not blocked after %d locked codes: %+v", otp.MaxLocks, w.OTP)
	}
	if _, err := w.ResendInvite(at.Add(otp.SendInterval)); err != nil {
		t.Fatalf("resend-invite: %v", err)
	}
	almost := blockedAt.Add(holds - time.Second)
	if _, err := w.SendOTP("h2", "a***@x.test", almost, block); codeOf(err) != "otp_blocked" {
		t.Fatalf("send after the participant's own resend-invite, before the block time: %v", err)
	}
	if _, _, err := w.VerifyOTP(func(string) bool { return true }, almost, block); codeOf(err) != "otp_blocked" {
		t.Fatalf("verify within the block time: %v", err)
	}
	if _, err := w.SendOTP("h2", "a***@x.test", blockedAt.Add(holds), block); err != nil || w.OTP.Blocked {
		t.Fatalf("send once the block ran its time: %v %+v", err, w.OTP)
	}
	if _, out, err := w.VerifyOTP(func(h string) bool { return h == "h2" }, blockedAt.Add(holds), block); err != nil || out != otp.Passed {
		t.Fatalf("the new code after the block: %v %v", out, err)
	}
}

// TestParticipantLink: the participant's resend-invite makes a new link generation and the
// older token is refused 401 link_replaced; once the workflow has ended every participant token
// is 410 workflow_ended.
func TestParticipantLink(t *testing.T) {
	t.Parallel()
	flow, _, _, _ := schemas(t)
	w := start{state: StateInProgress}.build(flow)
	if err := w.ParticipantLink(0); err != nil {
		t.Fatalf("the first link: %v", err)
	}
	ch, err := w.ResendInvite(t0.Add(ResendInterval))
	if err != nil || len(ch.Effects) != 1 || ch.Effects[0].Kind != EffectInviteParticipant {
		t.Fatalf("resend: %v %+v", err, ch.Effects)
	}
	if err := w.ParticipantLink(0); err != ErrLinkReplaced {
		t.Fatalf("the replaced link: %v", err)
	}
	if err := w.ParticipantLink(w.LinkGen); err != nil || w.LinkGen != 1 {
		t.Fatalf("the new link %d: %v", w.LinkGen, err)
	}
	for _, s := range []State{StateComplete, StateRejected, StateCancelled} {
		x := *w
		x.State = s
		if err := x.ParticipantLink(x.LinkGen); err != ErrLinkEnded {
			t.Fatalf("%s: %v", s, err)
		}
	}
}
