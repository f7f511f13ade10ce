package esign

import (
	"context"
	"encoding/base64"
	"errors"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/otp/otpflow"
	"github.com/esign-svc/esign/shared/pii"
	"github.com/esign-svc/esign/shared/tokens"
)

// readStore is useCases' memStore with the read side's index and timeline; it counts the
// timeline reads.
type readStore struct {
	*memStore
	corr      map[string]string // tenant "/" correlationId -> groupId
	events    []Event
	timelines int
}

func (r *readStore) GroupByCorrelation(_ context.Context, tenant, correlationID string) (string, error) {
	if g, ok := r.corr[tenant+"/"+correlationID]; ok {
		return g, nil
	}
	return "", ErrSessionNotFound
}

func (r *readStore) Timeline(context.Context, string) ([]Event, error) {
	r.timelines++
	return r.events, nil
}

func reads(t *testing.T) (*SessionReads, *readStore) {
	t.Helper()
	_, st, _ := useCases(t)
	st.s.CorrelationID = "C1"
	rs := &readStore{memStore: st, corr: map[string]string{"t1/C1": "g"},
		events: []Event{{Kind: EvSessionCreated, Slot: -1, At: t0}, {Kind: EvSlotActivated, Slot: 1, At: t0.Add(time.Second)}}}
	c, err := pii.ParseCipher("e1:" + base64.StdEncoding.EncodeToString(make([]byte, 32)))
	if err != nil {
		t.Fatal(err)
	}
	return &SessionReads{Store: rs, Cipher: c, Now: func() time.Time { return t0.Add(time.Minute) }}, rs
}

func TestStatusIsTheTenantsOnly(t *testing.T) {
	t.Parallel()
	r, st := reads(t)
	ctx := context.Background()
	for name, read := range map[string]func() error{
		"another tenant's groupId":       func() error { _, err := r.Status(ctx, "t2", "g"); return err },
		"unknown groupId":                func() error { _, err := r.Status(ctx, "t1", "nope"); return err },
		"another tenant's correlationId": func() error { _, err := r.StatusByCorrelation(ctx, "t2", "C1"); return err },
		"unknown correlationId":          func() error { _, err := r.StatusByCorrelation(ctx, "t1", "C2"); return err },
	} {
		if err := read(); !errors.Is(err, ErrSessionNotFound) {
			t.Errorf("%s: %v, want session_not_found", name, err)
		}
	}
	if st.timelines != 0 {
		t.Fatalf("a refused status read the timeline %d times", st.timelines)
	}
	got, err := r.StatusByCorrelation(ctx, "t1", "C1")
	if err != nil || got.Session.GroupID != "g" || len(got.Slots) != 2 || len(got.Events) != 2 || got.Events[1].Slot != 1 {
		t.Fatalf("own status by correlationId: %v, %+v", err, got)
	}
}

func TestStatusDecryptsEachSlotsEmailAndShowsExpiry(t *testing.T) {
	t.Parallel()
	r, st := reads(t)
	ctx := context.Background()
	enc, err := r.Cipher.EncryptString("ann@example.com", pii.AAD("g", "slot", "0"))
	if err != nil {
		t.Fatal(err)
	}
	st.slots[0].EmailEnc = enc // slot 1 was erased: no address
	got, err := r.Status(ctx, "t1", "g")
	if err != nil {
		t.Fatal(err)
	}
	if got.Emails[0] != "ann@example.com" || got.Emails[1] != "" || got.State != SessionPending {
		t.Fatalf("emails %q, state %s", got.Emails, got.State)
	}
	r.Now = func() time.Time { return st.s.ExpiresAt.Add(time.Second) }
	if got, err = r.Status(ctx, "t1", "g"); err != nil || got.State != SessionExpired || got.Session.State != SessionPending {
		t.Fatalf("past expiry: %v, shown %s, stored %s; want expired shown, pending stored", err, got.State, got.Session.State)
	}
	st.s.State = SessionCancelled
	if got, _ = r.Status(ctx, "t1", "g"); got.State != SessionCancelled {
		t.Fatalf("an ended session past expiry shows %s, want its own state", got.State)
	}
	st.slots[1].EmailEnc = enc // bound to slot 0: it does not decrypt as slot 1's
	if _, err := r.Status(ctx, "t1", "g"); err == nil {
		t.Fatal("slot 0's ciphertext decrypted as slot 1's")
	}
}

func TestSignerChecksTheTokenOnTheLoadedSession(t *testing.T) {
	t.Parallel()
	r, st := reads(t)
	ctx := context.Background()
	cur := tokens.PortalAccess{GroupID: "g", SlotIndex: 1, SessionID: "ps-b", Generation: 1}
	st.slots[1].Generation = 1
	v, err := r.Signer(ctx, cur)
	if err != nil || v.Slot != &v.Slots[1] || v.Secondary || v.Session.GroupID != "g" {
		t.Fatalf("current token: %v, %+v", err, v)
	}
	earlier := cur
	earlier.Generation = 0
	if v, err = r.Signer(ctx, earlier); err != nil || !v.Secondary {
		t.Fatalf("earlier device: %v, secondary %v; want a view-only answer", err, v.Secondary)
	}
	for name, c := range map[string]tokens.PortalAccess{
		"session gone":     {GroupID: "other", SlotIndex: 1, SessionID: "ps-b", Generation: 1},
		"newer generation": {GroupID: "g", SlotIndex: 1, SessionID: "ps-b", Generation: 2},
		"other portal id":  {GroupID: "g", SlotIndex: 1, SessionID: "ps-a", Generation: 1},
		"no such slot":     {GroupID: "g", SlotIndex: 2, SessionID: "ps-b", Generation: 1},
	} {
		if _, err := r.Signer(ctx, c); !errors.Is(err, ErrAccessNotCurrent) {
			t.Errorf("%s: %v, want token_invalid", name, err)
		}
	}
	for state, kind := range map[SessionState]apperr.Kind{SessionCancelled: apperr.KindGone, SessionSealing: apperr.KindConflict} {
		st.s.State = state
		if _, err := r.Signer(ctx, cur); apperr.KindOf(err) != kind {
			t.Errorf("session %s: %v, want kind %v", state, err, kind)
		}
	}
	if len(st.changes) != 0 {
		t.Fatalf("a read stored %d changes", len(st.changes))
	}
}

// TestPortalActionOnAGoneSessionIsTokenInvalid: the portal's actions make one call, with no read
// in the route before it, and still answer a session that is gone as that read did (401
// token_invalid), not as session_not_found.
func TestPortalActionOnAGoneSessionIsTokenInvalid(t *testing.T) {
	t.Parallel()
	u, st, _ := useCases(t)
	gone := tokens.PortalAccess{GroupID: "erased", SlotIndex: 0, SessionID: "ps-a"}
	d := Device{IP: "198.51.100.7"}
	ctx := context.Background()
	if _, _, err := u.Viewed(ctx, gone, d); !errors.Is(err, ErrAccessNotCurrent) {
		t.Fatalf("viewed: %v, want token_invalid", err)
	}
	if _, _, err := u.Decline(ctx, gone, d, ""); !errors.Is(err, ErrAccessNotCurrent) {
		t.Fatalf("decline: %v, want token_invalid", err)
	}
	if _, err := u.RecordOTP(ctx, gone, d, "", otpflow.Code{}); !errors.Is(err, ErrAccessNotCurrent) {
		t.Fatalf("otp send: %v, want token_invalid", err)
	}
	if _, _, err := u.VerifyOTP(ctx, gone, d, otpflow.Code{}); !errors.Is(err, ErrAccessNotCurrent) {
		t.Fatalf("otp verify: %v, want token_invalid", err)
	}
	// A refused transfer writes no index row (the memory store has none to write: it would panic).
	if _, _, err := u.CreateTransfer(ctx, gone, d); !errors.Is(err, ErrAccessNotCurrent) {
		t.Fatalf("transfer: %v, want token_invalid", err)
	}
	st.slots[0].Generation = 1
	earlier := tokens.PortalAccess{GroupID: "g", SlotIndex: 0, SessionID: "ps-a", Generation: 0}
	if _, _, err := u.CreateTransfer(ctx, earlier, d); !errors.Is(err, ErrSecondary) {
		t.Fatalf("transfer from the earlier device: %v, want device_secondary", err)
	}
	if len(st.changes) != 0 {
		t.Fatalf("stored %d changes", len(st.changes))
	}
}
