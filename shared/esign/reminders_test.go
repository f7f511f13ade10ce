package esign

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// remindedSession is a parallel session of two signers with reminders after 24 h, then every 12
// h, at most 2, live for a week.
func remindedSession() (*Session, []Slot) {
	s, slots := newSession(ModeParallel, Required, Required)
	s.ExpiresAt = t0.Add(7 * 24 * time.Hour)
	s.Reminders = &ReminderPolicy{FirstAfterHours: 24, EveryHours: 12, Max: 2}
	for i := range slots {
		slots[i].EmailEnc = "enc"
	}
	Start(s, slots, t0)
	return s, slots
}

func TestRemindFirstNextCapAndLinkOnlyForUnopened(t *testing.T) {
	t.Parallel()
	s, slots := remindedSession()
	if got := NextReminder(s, slots); !got.Equal(t0.Add(24 * time.Hour)) {
		t.Fatalf("first reminder at %v, want invitation + 24 h", got)
	}
	if _, _, err := Remind(s, slots, t0.Add(23*time.Hour)); !errors.Is(err, ErrNothingToRemind) {
		t.Fatalf("before the first: %v, want ErrNothingToRemind", err)
	}
	if _, err := Activate(s, slots, 1, t0.Add(time.Hour), nil); err != nil { // signer 1 opened the link
		t.Fatal(err)
	}
	at := t0.Add(24 * time.Hour)
	ch, done, err := Remind(s, slots, at)
	if err != nil || len(done) != 2 {
		t.Fatalf("first reminder: %v %v", done, err)
	}
	if k := kinds(ch); len(k) != 2 || k[0] != EvSlotReminded || k[1] != EvSlotReminded {
		t.Fatalf("events %v", k)
	}
	if ch.Events[0].Data["link"] != true || ch.Events[1].Data["link"] != false {
		t.Fatalf("link marks %v %v: only the unopened signer gets a link", ch.Events[0].Data, ch.Events[1].Data)
	}
	if len(ch.Effects) != 1 || ch.Effects[0].Kind != EffectInvite || ch.Effects[0].Slot != 0 {
		t.Fatalf("effects %v: an invitation for the unopened slot only", ch.Effects)
	}
	if m := ReminderMessage(s, &slots[0]); m.Kind != KindInvitation || !m.Reminder {
		t.Fatalf("unopened slot's reminder %+v", m)
	}
	if m := ReminderMessage(s, &slots[1]); m.Kind != ReminderNotice || m.LinkJTI != "" || m.Round != 1 {
		t.Fatalf("opened slot's reminder %+v", m)
	}
	if got := NextReminder(s, slots); !got.Equal(at.Add(12 * time.Hour)) {
		t.Fatalf("next reminder at %v, want +12 h", got)
	}
	if _, _, err := Remind(s, slots, at.Add(11*time.Hour)); !errors.Is(err, ErrNothingToRemind) {
		t.Fatalf("before the second: %v", err)
	}
	if _, done, err := Remind(s, slots, at.Add(12*time.Hour)); err != nil || len(done) != 2 {
		t.Fatalf("second reminder: %v %v", done, err)
	}
	// the cap: two each, then nothing more, ever
	if got := NextReminder(s, slots); !got.IsZero() {
		t.Fatalf("after the cap the next reminder is %v, want none", got)
	}
	if _, _, err := Remind(s, slots, at.Add(6*24*time.Hour)); !errors.Is(err, ErrNothingToRemind) {
		t.Fatalf("after the cap: %v", err)
	}
	if slots[0].Reminders != 2 || slots[1].Reminders != 2 {
		t.Fatalf("counts %d %d", slots[0].Reminders, slots[1].Reminders)
	}
}

func TestRemindNoneAfterSigningOrExpiry(t *testing.T) {
	t.Parallel()
	s, slots := remindedSession()
	mustSign(t, s, slots, 0, t0.Add(time.Hour))
	ch, done, err := Remind(s, slots, t0.Add(24*time.Hour))
	if err != nil || len(done) != 1 || done[0] != 1 {
		t.Fatalf("only the unsigned signer is reminded: %v %v %v", done, err, kinds(ch))
	}

	s, slots = remindedSession()
	s.ExpiresAt = t0.Add(30 * time.Hour) // the second reminder would fall after expiry
	if _, _, err := Remind(s, slots, t0.Add(24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got := NextReminder(s, slots); !got.IsZero() {
		t.Fatalf("a reminder past expiry is scheduled at %v", got)
	}
	if _, _, err := Remind(s, slots, t0.Add(36*time.Hour)); !errors.Is(err, ErrNothingToRemind) {
		t.Fatalf("after expiry: %v", err)
	}

	s, slots = remindedSession()
	s.Reminders = nil
	if got := NextReminder(s, slots); !got.IsZero() {
		t.Fatalf("a session without reminders is scheduled at %v", got)
	}
}

func TestSequentialReminderCountsFromTheSignersInvitation(t *testing.T) {
	t.Parallel()
	s, slots := newSession(ModeSequential, Required, Required)
	s.ExpiresAt = t0.Add(7 * 24 * time.Hour)
	s.Reminders = &ReminderPolicy{FirstAfterHours: 24, EveryHours: 12, Max: 1}
	slots[0].EmailEnc, slots[1].EmailEnc = "enc", "enc"
	Start(s, slots, t0)
	signed := t0.Add(20 * time.Hour)
	mustSign(t, s, slots, 0, signed)
	if got := NextReminder(s, slots); !got.Equal(signed.Add(24 * time.Hour)) {
		t.Fatalf("second signer's first reminder at %v, want their invitation + 24 h", got)
	}
}

func TestReminderPolicyCheck(t *testing.T) {
	t.Parallel()
	errs := (&ReminderPolicy{FirstAfterHours: 0, EveryHours: 0, Max: 11}).Check("reminders")
	var fields []string
	for _, e := range errs {
		fields = append(fields, e.Field)
	}
	if strings.Join(fields, ",") != "reminders.firstAfterHours,reminders.everyHours,reminders.max" {
		t.Fatalf("fields %v", fields)
	}
	if errs := (&ReminderPolicy{FirstAfterHours: 1, EveryHours: 1, Max: 10}).Check("reminders"); len(errs) != 0 {
		t.Fatalf("a valid block refused: %v", errs)
	}
	if errs := (*ReminderPolicy)(nil).Check("reminders"); len(errs) != 0 {
		t.Fatal("an absent block refused")
	}
}
