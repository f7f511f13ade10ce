package delivery

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/kernel/kerneltest"
)

type inviteStore map[string]*Session

func (m inviteStore) Load(_ context.Context, id string) (*Session, error) {
	if s, ok := m[id]; ok {
		return s, nil
	}
	return nil, apperr.New(apperr.KindNotFound, "delivery_not_found", "no such delivery")
}

func TestInviteChecksRun(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	live := func(id string, mode Mode) *Session {
		return &Session{DeliveryID: id, TenantID: "t1", Mode: mode, ExpiresAt: now.Add(time.Hour)}
	}
	sent := live("sent", ModeSecureEmail)
	sent.SentAt = now.Add(-time.Minute)
	expired := live("expired", ModeBoth)
	expired.ExpiresAt = now.Add(-time.Minute)
	store := inviteStore{"owes": live("owes", ModeBoth), "busy": live("busy", ModeSecureEmail), "broken": live("broken", ModeSecureEmail),
		"sent": sent, "expired": expired, "library": live("library", ModeSharePoint)}
	checks := &kerneltest.Checks{}
	for _, id := range []string{"owes", "busy", "broken", "sent", "expired", "library", "gone"} {
		checks.Items = append(checks.Items, kernel.Due{ID: id, At: now})
	}
	var invited []string
	down := errors.New("provider down")
	r, err := (&InviteChecks{Schedule: checks, Store: store}).Run(context.Background(), now, 10, func(_ context.Context, m InviteMessage) error {
		invited = append(invited, m.DeliveryID)
		switch m.DeliveryID {
		case "busy":
			return ErrInviteInFlight // another worker sends it
		case "broken":
			return down
		}
		return nil
	})
	if !errors.Is(err, down) {
		t.Fatalf("Run error %v, want the broken delivery's", err)
	}
	if !slices.Equal(invited, []string{"owes", "busy", "broken"}) {
		t.Fatalf("invited %v", invited)
	}
	if r.Checked != 5 || r.Sent != 3 || !slices.Equal(r.Again, []string{"busy"}) {
		t.Fatalf("run %+v", r)
	}
	if !slices.Equal(checks.Forgot, []string{"owes", "sent", "expired", "library", "gone"}) {
		t.Fatalf("forgot %v", checks.Forgot)
	}
}
