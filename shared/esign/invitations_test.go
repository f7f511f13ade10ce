package esign

import (
	"reflect"
	"testing"
	"time"
)

// TestOwedInvitations: the invitations a session owes follow the slots' invitation, state and
// link, and the session's life; a link that resend-invite issued is owed as a reminder.
func TestOwedInvitations(t *testing.T) {
	t.Parallel()
	build := func() (*Session, []Slot) {
		s, slots := newSession(ModeSequential, Required, Required, Optional)
		s.TenantID = "tn"
		for i := range slots {
			slots[i].EmailEnc, slots[i].LinkJTI = "enc", "j"+string(rune('0'+i))
		}
		Start(s, slots, t0)
		return s, slots
	}
	now := t0.Add(time.Minute)
	want := func(slot int, reminder bool) NotifyMessage {
		return NotifyMessage{Kind: KindInvitation, GroupID: "g", TenantID: "tn", Slot: slot,
			LinkJTI: "j" + string(rune('0'+slot)), Reminder: reminder}
	}
	cases := []struct {
		name   string
		change func(s *Session, slots []Slot)
		at     time.Time
		want   []NotifyMessage
	}{
		{"sequential start owes the first signer", func(*Session, []Slot) {}, now, []NotifyMessage{want(0, false)}},
		{"a used link owes nothing", func(_ *Session, sl []Slot) { sl[0].LinkUsed = true }, now, nil},
		{"a resent link is owed as a reminder", func(_ *Session, sl []Slot) { sl[0].State = SlotViewed }, now, []NotifyMessage{want(0, true)}},
		{"the next invited signer is owed too", func(_ *Session, sl []Slot) { sl[0].State, sl[1].Invited = SlotSigned, true }, now,
			[]NotifyMessage{want(1, false)}},
		{"a declined slot owes nothing", func(_ *Session, sl []Slot) { sl[0].State = SlotDeclined }, now, nil},
		{"an erased address owes nothing", func(_ *Session, sl []Slot) { sl[0].EmailEnc = "" }, now, nil},
		{"a cancelled session owes nothing", func(s *Session, _ []Slot) { s.State = SessionCancelled }, now, nil},
		{"a session past its expiry owes nothing", func(*Session, []Slot) {}, t0.Add(time.Hour), nil},
	}
	for _, tc := range cases {
		s, slots := build()
		tc.change(s, slots)
		if got := OwedInvitations(s, slots, tc.at); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: owed %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
