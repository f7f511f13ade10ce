package esign

import (
	"github.com/esign-svc/esign/shared/otp"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
)

func otpSlot(t *testing.T, ch OTPChannel) (*Session, []Slot) {
	t.Helper()
	s, slots := newSession(ModeSingle, Required)
	slots[0].OTPChannel = ch
	Start(s, slots, t0)
	if _, err := Activate(s, slots, 0, t0, nil); err != nil {
		t.Fatal(err)
	}
	return s, slots
}

// verifiedSlot is otpSlot with e-mail OTP sent at t0 and passed a second later.
func verifiedSlot(t *testing.T) (*Session, []Slot) {
	t.Helper()
	s, slots := otpSlot(t, OTPEmail)
	if _, err := SendOTP(s, slots, 0, t0, "", false, "h1", "d", 0); err != nil {
		t.Fatal(err)
	}
	if _, out, err := VerifyOTP(s, slots, 0, t0.Add(time.Second), is("h1"), 0); err != nil || out != otp.Passed {
		t.Fatalf("verify: %v %v", err, out)
	}
	return s, slots
}

func is(code string) func(string) bool { return func(h string) bool { return h == code } }

func TestOTPSendVerifyAndGates(t *testing.T) {
	t.Parallel()
	s, slots := otpSlot(t, OTPEmail)
	if _, err := MarkViewed(s, slots, 0, t0, nil); !errorsIs(err, ErrOTPRequired) {
		t.Fatalf("viewed before OTP: %v", err)
	}
	c, err := SendOTP(s, slots, 0, t0, "", false, "h1", "s***@e***.test", 0)
	if err != nil || c.Events[0].Kind != EvSlotOTPSent || c.Events[0].Data["destination"] != "s***@e***.test" {
		t.Fatalf("send: %v %+v", err, c.Events)
	}
	if _, err := SendOTP(s, slots, 0, t0.Add(59*time.Second), "", false, "h2", "d", 0); apperr.KindOf(err) != apperr.KindRateLimited {
		t.Fatalf("second send within 60 s: %v", err)
	} else if e, _ := apperr.As(err); e.RetryAfter != time.Second {
		t.Fatalf("retry after %v", e.RetryAfter)
	}
	if _, out, _ := VerifyOTP(s, slots, 0, t0.Add(time.Second), is("wrong"), 0); out != otp.Wrong {
		t.Fatalf("wrong code outcome %v", out)
	}
	c, out, err := VerifyOTP(s, slots, 0, t0.Add(2*time.Second), is("h1"), 0)
	if err != nil || out != otp.Passed || slots[0].State != SlotOTPVerified || !slots[0].OTPVerified() || slots[0].OTP.CodeHash != "" {
		t.Fatalf("verify: %v %v %+v", err, out, slots[0].OTP)
	}
	if c.Events[0].Kind != EvSlotOTPVerified {
		t.Fatalf("events %v", kinds(c))
	}
	if _, err := MarkViewed(s, slots, 0, t0.Add(3*time.Second), nil); err != nil || slots[0].State != SlotViewed {
		t.Fatalf("viewed after OTP: %v %s", err, slots[0].State)
	}
	if _, ok := slots[0].Timeline[SlotOTPVerified]; !ok {
		t.Fatal("timeline lacks otp_verified")
	}
	if _, err := SendOTP(s, slots, 0, t0.Add(time.Hour/2), "", false, "h3", "d", 0); apperr.KindOf(err) != apperr.KindInvalid {
		t.Fatalf("send after verified: %v", err)
	}
}

// With OTP as without it, consent and signing follow the viewing of the document: a signer who
// passed OTP but never reported viewed is refused (409 not_viewed), and the signed slot's
// timeline holds viewed (spec 000: pending, activated, viewed, signed, + otp_verified).
func TestOTPSignerViewsBeforeConsentAndSigning(t *testing.T) {
	t.Parallel()
	s, slots := verifiedSlot(t)
	all := []string{"document_reviewed", "electronic_signature", "legally_binding"}
	if c, err := Consent(s, slots, 0, t0.Add(2*time.Second), all); !errorsIs(err, ErrNotViewed) || apperr.KindOf(err) != apperr.KindConflict || len(c.Events) != 0 {
		t.Fatalf("consent after OTP, before viewed: %v", err)
	}
	consented(&slots[0]) // even with the consents in place, no signature before viewed
	if _, err := Sign(s, slots, 0, t0.Add(2*time.Second), SignInput{SignerName: "n"}); !errorsIs(err, ErrNotViewed) {
		t.Fatalf("sign after OTP, before viewed: %v", err)
	}
	slots[0].Consents = nil
	if _, err := MarkViewed(s, slots, 0, t0.Add(3*time.Second), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := Consent(s, slots, 0, t0.Add(4*time.Second), all); err != nil {
		t.Fatalf("consent after viewed: %v", err)
	}
	if _, err := Sign(s, slots, 0, t0.Add(5*time.Second), SignInput{SignerName: "n"}); err != nil {
		t.Fatalf("sign after viewed: %v", err)
	}
	for _, st := range []SlotState{SlotPending, SlotActivated, SlotOTPVerified, SlotViewed, SlotSigned} {
		if _, ok := slots[0].Timeline[st]; !ok {
			t.Errorf("signed timeline lacks %s: %v", st, slots[0].Timeline)
		}
	}
}

func TestOTPExpiresAfterTenMinutes(t *testing.T) {
	t.Parallel()
	s, slots := otpSlot(t, OTPEmail)
	SendOTP(s, slots, 0, t0, "", false, "h1", "d", 0)
	if _, out, _ := VerifyOTP(s, slots, 0, t0.Add(otp.TTL), is("h1"), 0); out != otp.Expired {
		t.Fatalf("at expiry: %v", out)
	}
	if _, out, _ := VerifyOTP(s, slots, 0, t0.Add(otp.TTL-time.Nanosecond), is("h1"), 0); out != otp.Passed {
		t.Fatalf("just before expiry: %v", out)
	}
}

func TestOTPLockAfterFiveAndBlockAfterThreeLocks(t *testing.T) {
	t.Parallel()
	s, slots := otpSlot(t, OTPEmail)
	at := t0
	for lock := 1; lock <= otp.MaxLocks; lock++ {
		at = at.Add(otp.SendInterval)
		if _, err := SendOTP(s, slots, 0, at, "", false, "good", "d", 0); err != nil {
			t.Fatalf("send %d: %v", lock, err)
		}
		for try := 1; try <= otp.MaxAttempts; try++ {
			_, out, _ := VerifyOTP(s, slots, 0, at, is("bad"), 0)
			want := otp.Wrong
			if try == otp.MaxAttempts {
				want = otp.LockedNow
				if lock == otp.MaxLocks {
					want = otp.BlockedNow
				}
			}
			if out != want {
				t.Fatalf("lock %d try %d: outcome %v, want %v", lock, try, out, want)
			}
		}
		if lock < otp.MaxLocks {
			if _, out, _ := VerifyOTP(s, slots, 0, at, is("good"), 0); out != otp.Locked {
				t.Fatalf("the locked code still works: %v", out)
			}
		}
	}
	if _, err := SendOTP(s, slots, 0, at.Add(2*time.Minute), "", false, "x", "d", 0); !errorsIs(err, &apperr.Error{Code: "otp_blocked"}) {
		t.Fatalf("send while blocked: %v", err)
	}
	if _, err := Reinvite(s, slots, 0, at); err != nil {
		t.Fatal(err)
	}
	if _, err := SendOTP(s, slots, 0, at.Add(3*time.Minute), "", false, "x", "d", 0); err != nil {
		t.Fatalf("send after resend-invite: %v", err)
	}
}

func TestOTPChannels(t *testing.T) {
	t.Parallel()
	s, slots := otpSlot(t, OTPSignerChoice)
	if _, err := SendOTP(s, slots, 0, t0, "", true, "h", "d", 0); apperr.KindOf(err) != apperr.KindInvalid {
		t.Fatalf("signer-choice without a pick: %v", err)
	}
	if _, err := SendOTP(s, slots, 0, t0, OTPSMS, false, "h", "d", 0); apperr.KindOf(err) != apperr.KindInvalid {
		t.Fatalf("sms without phone: %v", err)
	}
	if _, err := SendOTP(s, slots, 0, t0, OTPSMS, true, "h", "d", 0); err != nil || slots[0].OTP.Channel != string(OTPSMS) {
		t.Fatalf("sms pick: %v", err)
	}
	s2, slots2 := otpSlot(t, OTPEmail)
	if _, err := SendOTP(s2, slots2, 0, t0, OTPSMS, true, "h", "d", 0); apperr.KindOf(err) != apperr.KindInvalid {
		t.Fatalf("sms on an email slot: %v", err)
	}
	s3, slots3 := otpSlot(t, OTPNone)
	if _, err := SendOTP(s3, slots3, 0, t0, "", false, "h", "d", 0); apperr.KindOf(err) != apperr.KindInvalid {
		t.Fatalf("OTP on a slot without: %v", err)
	}
	slots3[0].Generation = 1 // a device that took over by transfer: e-mail OTP now
	if _, err := SendOTP(s3, slots3, 0, t0, "", false, "h", "d", 0); err != nil || slots3[0].OTP.Channel != string(OTPEmail) {
		t.Fatalf("OTP after transfer: %v", err)
	}
}
