package esign

import (
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/otp"
)

// TestReinviteBeginsTheNextDeviceGeneration: a resend-invite makes the access tokens issued so
// far view-only and a cross-device token made before it useless, as a redeem does, without
// asking an OTP-less slot for a code; a redeem after it is a transfer again.
func TestReinviteBeginsTheNextDeviceGeneration(t *testing.T) {
	t.Parallel()
	s, slots := otpSlot(t, OTPNone)
	_, xfer, err := CreateTransfer(s, slots, 0, t0, "xfer-hash")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Reinvite(s, slots, 0, t0.Add(time.Second))
	sl := &slots[0]
	if err != nil || sl.Generation != 1 || sl.Transferred() || sl.EffectiveOTPChannel() != OTPNone || sl.NeedsOTP() {
		t.Fatalf("after resend: %v, generation %d, transferred %v, otp %s", err, sl.Generation, sl.Transferred(), sl.EffectiveOTPChannel())
	}
	if c.Events[0].Data["generation"] != 1 {
		t.Fatalf("slot.reinvited data %v", c.Events[0].Data)
	}
	if _, err := RedeemTransfer(s, slots, xfer, t0.Add(2*time.Second), nil); !errorsIs(err, ErrTransferInvalid) {
		t.Fatalf("a transfer made before the resend redeemed: %v", err)
	}
	_, xfer, err = CreateTransfer(s, slots, 0, t0.Add(3*time.Second), "xfer-hash-2")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := RedeemTransfer(s, slots, xfer, t0.Add(4*time.Second), nil); err != nil {
		t.Fatal(err)
	}
	if sl.Generation != 2 || !sl.Transferred() || sl.EffectiveOTPChannel() != OTPEmail {
		t.Fatalf("after a redeem: generation %d, transferred %v, otp %s", sl.Generation, sl.Transferred(), sl.EffectiveOTPChannel())
	}
	if _, err := Reinvite(s, slots, 0, t0.Add(5*time.Second)); err != nil || sl.Generation != 3 || sl.Transferred() {
		t.Fatalf("resend after a redeem: %v, generation %d, transferred %v", err, sl.Generation, sl.Transferred())
	}
}

// TestReinviteAsksForOTPAgain: the device that follows the new link passes the slot's OTP
// itself; the earlier device's verification does not carry over.
func TestReinviteAsksForOTPAgain(t *testing.T) {
	t.Parallel()
	s, slots := verifiedSlot(t)
	if _, err := Reinvite(s, slots, 0, t0.Add(2*time.Second)); err != nil {
		t.Fatal(err)
	}
	if !slots[0].NeedsOTP() {
		t.Fatal("the new link's device inherits the earlier device's OTP")
	}
	if _, err := SendOTP(s, slots, 0, t0.Add(2*time.Minute), "", false, "h2", "d", 0); err != nil {
		t.Fatalf("send on the new device: %v", err)
	}
	if _, out, err := VerifyOTP(s, slots, 0, t0.Add(3*time.Minute), is("h2"), 0); err != nil || out != otp.Passed || slots[0].NeedsOTP() {
		t.Fatalf("verify on the new device: %v %v", err, out)
	}
}
