package sessionstore_test

import (
	"context"
	"encoding/base64"
	"errors"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/esign/sessionstore/storetest"
	"github.com/esign-svc/esign/shared/pii"
)

// TestStatusReadsOnTheStore: the read side (esign.SessionReads) on the real store answers the
// tenant's session with its audit timeline in the domain's terms, and another tenant's as an
// unknown one.
func TestStatusReadsOnTheStore(t *testing.T) {
	t.Parallel()
	ctx, st := context.Background(), storetest.New(t)
	now := time.Date(2026, 11, 22, 10, 0, 0, 123456789, time.UTC)
	s, slots := newSession("t1", "C-status", now, 2)
	cipher, err := pii.ParseCipher("e1:" + base64.StdEncoding.EncodeToString(make([]byte, 32)))
	if err != nil {
		t.Fatal(err)
	}
	if slots[1].EmailEnc, err = cipher.EncryptString("bob@example.com", pii.AAD(s.GroupID, "slot", "1")); err != nil {
		t.Fatal(err)
	}
	create(t, st, s, slots, now)
	later := now.Add(time.Minute)
	if _, _, err := st.Update(ctx, s.GroupID, func(s *esign.Session, slots []esign.Slot) (esign.Change, esign.Extras, error) {
		ch, err := esign.Activate(s, slots, 1, later, nil)
		return ch, esign.Extras{}, err
	}); err != nil {
		t.Fatal(err)
	}

	rows, err := st.Events(ctx, s.GroupID)
	if err != nil {
		t.Fatal(err)
	}
	tl, err := st.Timeline(ctx, s.GroupID)
	if err != nil || len(tl) != len(rows) || len(tl) < 4 {
		t.Fatalf("timeline %d events (%v), audit rows %d", len(tl), err, len(rows))
	}
	for i, e := range tl {
		if e.Kind != rows[i].Kind || e.Slot != rows[i].Slot || !e.At.Equal(rows[i].At) || e.Data != nil || e.Actor.ID != "" {
			t.Errorf("timeline[%d] = %+v, audit row %+v; want its kind, slot and time alone", i, e, rows[i])
		}
	}
	activated := 0
	for _, e := range tl {
		if e.Kind == esign.EvSlotActivated && e.Slot == 1 && e.At.Equal(later) {
			activated++
		}
	}
	if activated != 1 {
		t.Fatalf("timeline %+v holds slot 1's activation at %s %d times, want once", tl, later, activated)
	}

	r := &esign.SessionReads{Store: st, Cipher: cipher, Now: func() time.Time { return later }}
	got, err := r.StatusByCorrelation(ctx, "t1", "C-status")
	if err != nil || got.Session.GroupID != s.GroupID || got.State != esign.SessionInProgress || len(got.Events) != len(tl) {
		t.Fatalf("own status: %v, %+v", err, got)
	}
	if got.Emails[0] != "" || got.Emails[1] != "bob@example.com" {
		t.Fatalf("emails %q", got.Emails)
	}
	if _, err := r.Status(ctx, "t2", s.GroupID); !errors.Is(err, esign.ErrSessionNotFound) {
		t.Fatalf("another tenant's status: %v, want session_not_found", err)
	}
	if _, err := r.StatusByCorrelation(ctx, "t2", "C-status"); !errors.Is(err, esign.ErrSessionNotFound) {
		t.Fatalf("another tenant's correlationId: %v, want session_not_found", err)
	}
}
