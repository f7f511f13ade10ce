package delivery

import (
	"errors"
	"testing"
	"time"
)

// remindable is a delivery e-mailed at t0 with reminders after 2 h, then every 3 h, at most 2,
// expiring after 24 h.
func remindable() *Session {
	s := &Session{DeliveryID: "d1", Mode: ModeSecureEmail, ExpiresAt: t0.Add(24 * time.Hour),
		Reminders: &ReminderPolicy{FirstAfterHours: 2, EveryHours: 3, Max: 2}}
	Start(s, t0)
	s.SentAt = t0
	return s
}

func TestRemindRounds(t *testing.T) {
	t.Parallel()
	s := remindable()
	if got := NextReminder(s); !got.Equal(t0.Add(2 * time.Hour)) {
		t.Fatalf("first reminder at %v, want t0+2h", got)
	}
	if _, err := Remind(s, t0.Add(time.Hour), 1); !errors.Is(err, ErrNothingToRemind) {
		t.Fatalf("remind before due: %v", err)
	}
	ch, err := Remind(s, t0.Add(2*time.Hour), 1)
	if err != nil || len(ch.Events) != 1 || ch.Events[0].Kind != EvReminded || ch.Events[0].Data["reminder"] != 1 {
		t.Fatalf("first reminder: %+v, %v", ch, err)
	}
	if _, err := Remind(s, t0.Add(2*time.Hour), 1); !errors.Is(err, ErrNothingToRemind) {
		t.Fatalf("the same round twice: %v", err)
	}
	if got := NextReminder(s); !got.Equal(t0.Add(5 * time.Hour)) {
		t.Fatalf("next reminder at %v, want t0+5h", got)
	}
	if _, err := Remind(s, t0.Add(5*time.Hour), 2); err != nil || s.RemindCount != 2 {
		t.Fatalf("second reminder: %v (count %d)", err, s.RemindCount)
	}
	if got := NextReminder(s); !got.IsZero() {
		t.Fatalf("after max: next at %v", got)
	}
	if _, err := Remind(s, t0.Add(20*time.Hour), 3); !errors.Is(err, ErrNothingToRemind) {
		t.Fatalf("past max: %v", err)
	}
}

func TestNoReminder(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		edit func(s *Session)
		at   time.Time
		code string // "" ErrNothingToRemind
	}{
		{"opened", func(s *Session) { _, _ = Open(s, t0) }, t0.Add(3 * time.Hour), ""},
		{"downloaded", func(s *Session) { s.State = StateDownloaded }, t0.Add(3 * time.Hour), ""},
		{"revoked", func(s *Session) { Revoke(s, t0) }, t0.Add(3 * time.Hour), "delivery_revoked"},
		{"expired", nil, t0.Add(25 * time.Hour), "delivery_expired"},
		{"due at expiry", func(s *Session) { s.ExpiresAt = t0.Add(2 * time.Hour) }, t0.Add(2 * time.Hour), "delivery_expired"},
		{"due after expiry", func(s *Session) { s.ExpiresAt = t0.Add(90 * time.Minute) }, t0.Add(80 * time.Minute), ""},
		{"no block", func(s *Session) { s.Reminders = nil }, t0.Add(3 * time.Hour), ""},
		{"sharepoint", func(s *Session) { s.Mode = ModeSharePoint }, t0.Add(3 * time.Hour), ""},
		{"not invited yet", func(s *Session) { s.SentAt = time.Time{} }, t0.Add(3 * time.Hour), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := remindable()
			if tt.edit != nil {
				tt.edit(s)
			}
			ch, err := Remind(s, tt.at, 1)
			if tt.code == "" && !errors.Is(err, ErrNothingToRemind) || tt.code != "" && code(err) != tt.code {
				t.Fatalf("Remind = %v, want %q", err, tt.code)
			}
			if len(ch.Events) != 0 || s.RemindCount != 0 {
				t.Fatalf("recorded %+v", ch.Events)
			}
		})
	}
}
