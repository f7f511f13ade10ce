package esign

import (
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/otp"
)

func TestTransferMovesSlotToNewDevice(t *testing.T) {
	t.Parallel()
	for _, ch := range []OTPChannel{OTPNone, OTPEmail, OTPSMS} {
		t.Run(string(ch), func(t *testing.T) {
			t.Parallel()
			s, slots := otpSlot(t, ch)
			if ch != OTPNone {
				if _, err := SendOTP(s, slots, 0, t0, "", true, "h1", "d", 0); err != nil {
					t.Fatal(err)
				}
				if _, out, _ := VerifyOTP(s, slots, 0, t0, is("h1"), 0); out != otp.Passed {
					t.Fatalf("verify %v", out)
				}
			}
			if slots[0].NeedsOTP() {
				t.Fatal("first device needs OTP after passing")
			}
			at := t0.Add(time.Minute)
			c, tr, err := CreateTransfer(s, slots, 0, at, "hash")
			if err != nil || len(c.Slots) != 0 || kinds(c)[0] != EvSlotTransferCreated {
				t.Fatalf("create: %v %+v", err, c)
			}
			if tr.Generation != 0 || !tr.ExpiresAt.Equal(at.Add(TransferTTL)) || tr.Hash != "hash" {
				t.Fatalf("transfer %+v", tr)
			}
			// A code the first device asked for just now does not hold up the new device.
			slots[0].OTP.SentAt = at
			c, err = RedeemTransfer(s, slots, tr, at.Add(TransferTTL-time.Nanosecond), map[string]any{"ip": "198.51.100.7"})
			if err != nil || kinds(c)[0] != EvSlotTransferRedeemed || c.Events[0].Data["generation"] != 1 || c.Events[0].Data["ip"] != "198.51.100.7" {
				t.Fatalf("redeem: %v %+v", err, c.Events)
			}
			sl := &slots[0]
			if sl.Generation != 1 || !sl.NeedsOTP() || sl.EffectiveOTPChannel() == OTPNone {
				t.Fatalf("new device: gen %d needs %v channel %s", sl.Generation, sl.NeedsOTP(), sl.EffectiveOTPChannel())
			}
			if ch == OTPNone && sl.EffectiveOTPChannel() != OTPEmail {
				t.Fatalf("a slot without OTP gets e-mail on the new device, got %s", sl.EffectiveOTPChannel())
			}
			if _, err := SendOTP(s, slots, 0, at.Add(TransferTTL), "", true, "h2", "d", 0); err != nil {
				t.Fatalf("new device's first send: %v", err)
			}
			if _, err := RedeemTransfer(s, slots, tr, at.Add(time.Second), nil); err != ErrTransferInvalid {
				t.Fatalf("a token of a superseded generation: %v", err)
			}
		})
	}
}

func TestTransferExpiresAfterTenMinutes(t *testing.T) {
	t.Parallel()
	s, slots := otpSlot(t, OTPEmail)
	_, tr, err := CreateTransfer(s, slots, 0, t0, "h")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := RedeemTransfer(s, slots, tr, t0.Add(TransferTTL), nil); err != ErrTransferInvalid {
		t.Fatalf("at TTL: %v", err)
	}
	if slots[0].Generation != 0 {
		t.Fatal("a refused redeem changed the slot")
	}
}

func TestTransferRefusedOnClosedSlotsAndSessions(t *testing.T) {
	t.Parallel()
	s, slots := newSession(ModeSingle, Required)
	Start(s, slots, t0)
	if _, _, err := CreateTransfer(s, slots, 0, t0, "h"); err != ErrSlotWrongState {
		t.Fatalf("pending slot: %v", err)
	}
	if _, err := Activate(s, slots, 0, t0, nil); err != nil {
		t.Fatal(err)
	}
	_, tr, err := CreateTransfer(s, slots, 0, t0, "h")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Decline(s, slots, 0, t0, "", nil); err != nil {
		t.Fatal(err)
	}
	_, err = RedeemTransfer(s, slots, tr, t0.Add(time.Second), nil)
	if k := apperr.KindOf(err); k != apperr.KindGone && k != apperr.KindConflict {
		t.Fatalf("after decline: %v", err)
	}
	s2, slots2 := otpSlot(t, OTPNone)
	_, tr2, err := CreateTransfer(s2, slots2, 0, s2.ExpiresAt.Add(-time.Minute), "h")
	if err != nil || !tr2.ExpiresAt.Equal(s2.ExpiresAt) {
		t.Fatalf("a transfer never outlives its session: %v %v", err, tr2.ExpiresAt)
	}
}
