package esign

import (
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
)

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func newSession(mode SigningMode, conds ...Condition) (*Session, []Slot) {
	s := &Session{GroupID: "g", SigningMode: mode, State: SessionPending, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}
	slots := make([]Slot, len(conds))
	for i, c := range conds {
		slots[i] = Slot{Index: i, Condition: c, OTPChannel: OTPNone, Role: "r"}
	}
	return s, slots
}

func kinds(c Change) []string {
	var out []string
	for _, e := range c.Events {
		out = append(out, e.Kind)
	}
	return out
}

func effects(c Change) []Effect { return c.Effects }

func mustSign(t *testing.T, s *Session, slots []Slot, i int, at time.Time) Change {
	t.Helper()
	if _, err := Activate(s, slots, i, at, nil); err != nil {
		t.Fatalf("activate %d: %v", i, err)
	}
	if _, err := MarkViewed(s, slots, i, at, nil); err != nil {
		t.Fatalf("viewed %d: %v", i, err)
	}
	if _, err := Consent(s, slots, i, at, []string{"document_reviewed", "electronic_signature", "legally_binding"}); err != nil {
		t.Fatalf("consent %d: %v", i, err)
	}
	c, err := Sign(s, slots, i, at, SignInput{SignerName: "n"})
	if err != nil {
		t.Fatalf("sign %d: %v", i, err)
	}
	return c
}

func TestStartInvitesPerMode(t *testing.T) {
	t.Parallel()
	cases := []struct {
		mode SigningMode
		n    int
		want []int
	}{
		{ModeSingle, 1, []int{0}},
		{ModeParallel, 3, []int{0, 1, 2}},
		{ModeSequential, 3, []int{0}},
	}
	for _, tc := range cases {
		t.Run(string(tc.mode), func(t *testing.T) {
			conds := make([]Condition, tc.n)
			for i := range conds {
				conds[i] = Required
			}
			s, slots := newSession(tc.mode, conds...)
			c := Start(s, slots, t0)
			var got []int
			for _, e := range c.Effects {
				if e.Kind == EffectInvite {
					got = append(got, e.Slot)
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("invites %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("invites %v, want %v", got, tc.want)
				}
			}
			if kinds(c)[0] != EvSessionCreated {
				t.Errorf("first event %s", kinds(c)[0])
			}
			for _, sl := range slots {
				if sl.State != SlotPending || sl.Timeline[SlotPending] != t0 {
					t.Errorf("slot %d state %s timeline %v", sl.Index, sl.State, sl.Timeline)
				}
			}
		})
	}
}

func TestSequentialInvitesNextAndSealsAtEnd(t *testing.T) {
	t.Parallel()
	s, slots := newSession(ModeSequential, Required, Required, Required)
	Start(s, slots, t0)
	if _, err := Activate(s, slots, 1, t0, nil); !errorsIs(err, ErrSlotNotInvited) {
		t.Fatalf("slot 1 activated before its turn: %v", err)
	}
	c := mustSign(t, s, slots, 0, t0.Add(time.Minute))
	if !hasEffect(c, EffectInvite, 1) || hasEffect(c, EffectSeal, -1) {
		t.Fatalf("after slot 0: %v", effects(c))
	}
	if s.State != SessionInProgress {
		t.Fatalf("state %s", s.State)
	}
	mustSign(t, s, slots, 1, t0.Add(2*time.Minute))
	c = mustSign(t, s, slots, 2, t0.Add(3*time.Minute))
	if !hasEffect(c, EffectSeal, -1) || s.State != SessionSealing {
		t.Fatalf("after last: state %s effects %v", s.State, effects(c))
	}
	if _, err := Activate(s, slots, 0, t0.Add(4*time.Minute), nil); !errorsIs(err, ErrSessionClosed) {
		t.Fatalf("activation while sealing: %v", err)
	}
}

func TestOptionalSlotLeftUnsignedStillSeals(t *testing.T) {
	t.Parallel()
	s, slots := newSession(ModeParallel, Required, Optional)
	Start(s, slots, t0)
	c := mustSign(t, s, slots, 0, t0)
	if s.State != SessionSealing || !hasEffect(c, EffectSeal, -1) {
		t.Fatalf("state %s effects %v", s.State, effects(c))
	}
	if slots[1].State != SlotPending {
		t.Errorf("optional slot state %s", slots[1].State)
	}
}

func TestDecline(t *testing.T) {
	t.Parallel()
	t.Run("required ends the session", func(t *testing.T) {
		s, slots := newSession(ModeParallel, Required, Required)
		Start(s, slots, t0)
		Activate(s, slots, 1, t0, nil)
		c, err := Decline(s, slots, 1, t0, "no", nil)
		if err != nil || s.State != SessionCancelled || s.CancelReason != ReasonDeclined || !hasEffect(c, EffectDeclined, 1) {
			t.Fatalf("err %v state %s reason %s effects %v", err, s.State, s.CancelReason, effects(c))
		}
		if _, err := Activate(s, slots, 0, t0, nil); !errorsIs(err, ErrSessionCancelled) {
			t.Fatalf("after cancel: %v", err)
		}
	})
	t.Run("optional in sequential invites the next", func(t *testing.T) {
		s, slots := newSession(ModeSequential, Optional, Required)
		Start(s, slots, t0)
		Activate(s, slots, 0, t0, nil)
		c, err := Decline(s, slots, 0, t0, "", nil)
		if err != nil || s.State != SessionInProgress || !hasEffect(c, EffectInvite, 1) {
			t.Fatalf("err %v state %s effects %v", err, s.State, effects(c))
		}
	})
	t.Run("not before activation", func(t *testing.T) {
		s, slots := newSession(ModeSingle, Required)
		Start(s, slots, t0)
		if _, err := Decline(s, slots, 0, t0, "", nil); !errorsIs(err, ErrSlotWrongState) {
			t.Fatalf("err %v", err)
		}
	})
}

func TestExpiry(t *testing.T) {
	t.Parallel()
	s, slots := newSession(ModeParallel, Required, Required)
	Start(s, slots, t0)
	mustSign(t, s, slots, 0, t0)
	late := s.ExpiresAt
	if _, err := Activate(s, slots, 1, late, nil); apperr.KindOf(err) != apperr.KindGone {
		t.Fatalf("at expiry: %v", err)
	}
	if c := Expire(s, slots, late.Add(-time.Nanosecond)); len(c.Events) != 0 {
		t.Fatalf("expired early: %v", kinds(c))
	}
	c := Expire(s, slots, late)
	if s.State != SessionExpired || slots[0].State != SlotSigned || slots[1].State != SlotExpired {
		t.Fatalf("session %s slots %s %s", s.State, slots[0].State, slots[1].State)
	}
	if got := kinds(c); len(got) != 2 || got[0] != EvSlotExpired || got[1] != EvSessionExpired {
		t.Fatalf("events %v", got)
	}
	if c := Expire(s, slots, late.Add(time.Hour)); len(c.Events) != 0 {
		t.Fatal("expired twice")
	}
	if _, err := Reinvite(s, slots, 1, late); !errorsIs(err, ErrSessionExpired) {
		t.Fatalf("reinvite expired: %v", err)
	}
}

func TestCancelAndRevoke(t *testing.T) {
	t.Parallel()
	s, _ := newSession(ModeSingle, Required)
	c, err := Cancel(s, t0, ReasonRevoked, "oid")
	if err != nil || s.State != SessionCancelled || !hasEffect(c, EffectRevoked, -1) {
		t.Fatalf("revoke: %v %s", err, s.State)
	}
	if _, err := Cancel(s, t0, ReasonCancelled, "oid"); apperr.KindOf(err) != apperr.KindConflict {
		t.Fatalf("cancel twice: %v", err)
	}
	s2, _ := newSession(ModeSingle, Required)
	if _, err := Cancel(s2, s2.ExpiresAt, ReasonCancelled, "oid"); !errorsIs(err, ErrSessionExpired) {
		t.Fatalf("cancel expired: %v", err)
	}
}

func TestSignGates(t *testing.T) {
	t.Parallel()
	s, slots := newSession(ModeSingle, Required)
	slots[0].OTPChannel = OTPEmail
	Start(s, slots, t0)
	if _, err := Sign(s, slots, 0, t0, SignInput{}); !errorsIs(err, ErrSlotWrongState) {
		t.Fatalf("sign before activation: %v", err)
	}
	Activate(s, slots, 0, t0, nil)
	MarkViewed(s, slots, 0, t0, nil)
	if _, err := Sign(s, slots, 0, t0, SignInput{}); apperr.KindOf(err) != apperr.KindForbidden {
		t.Fatalf("sign without OTP: %v", err)
	}
	if _, err := Reinvite(s, slots, 0, t0); err != nil {
		t.Fatalf("reinvite viewed slot: %v", err)
	}
	if _, err := Sign(s, slots, 5, t0, SignInput{}); !errorsIs(err, ErrNoSuchSlot) {
		t.Fatalf("no such slot: %v", err)
	}
}

func hasEffect(c Change, k EffectKind, slot int) bool {
	for _, e := range c.Effects {
		if e.Kind == k && e.Slot == slot {
			return true
		}
	}
	return false
}

func errorsIs(err error, target *apperr.Error) bool {
	e, ok := apperr.As(err)
	return ok && e.Code == target.Code
}

func TestConsentGatesSigning(t *testing.T) {
	t.Parallel()
	s, slots := newSession(ModeSingle, Required)
	Start(s, slots, t0)
	Activate(s, slots, 0, t0, nil)
	if _, err := Consent(s, slots, 0, t0, []string{"document_reviewed"}); !errorsIs(err, ErrNotViewed) {
		t.Fatalf("consent before viewing: %v", err)
	}
	MarkViewed(s, slots, 0, t0, nil)
	if _, err := Consent(s, slots, 0, t0, []string{"nope"}); apperr.KindOf(err) != apperr.KindInvalid {
		t.Fatalf("unknown statement: %v", err)
	}
	c, err := Consent(s, slots, 0, t0, []string{"document_reviewed", "electronic_signature"})
	if err != nil || len(c.Events) != 2 || len(slots[0].Consents) != 2 || slots[0].Consents[1].Text != ConsentStatements[1].Text {
		t.Fatalf("consent: %v %+v", err, slots[0].Consents)
	}
	if _, err := Sign(s, slots, 0, t0, SignInput{}); apperr.KindOf(err) != apperr.KindConflict {
		t.Fatalf("sign with two of three consents: %v", err)
	}
	if c, _ := Consent(s, slots, 0, t0.Add(time.Second), []string{"document_reviewed", "legally_binding"}); len(c.Events) != 1 || slots[0].Consents[0].AcceptedAt != t0.Format(time.RFC3339Nano) {
		t.Fatalf("re-consent changed the first acceptance: %+v", slots[0].Consents)
	}
	if _, err := Sign(s, slots, 0, t0, SignInput{}); err != nil {
		t.Fatalf("sign after consent: %v", err)
	}
}
