package esign

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/tokens"
)

// memStore is one session in memory with the store's contract: a step runs on a copy, and only
// a step without error is kept, with its extras.
type memStore struct {
	SessionStore // methods the tests do not reach panic
	s            *Session
	slots        []Slot
	changes      []Change
	extras       []Extras
}

func (m *memStore) copy() (*Session, []Slot) {
	s := *m.s
	return &s, append([]Slot(nil), m.slots...)
}

func (m *memStore) Load(_ context.Context, groupID string) (*Session, []Slot, error) {
	if groupID != m.s.GroupID {
		return nil, nil, ErrSessionNotFound
	}
	s, slots := m.copy()
	return s, slots, nil
}

func (m *memStore) Update(_ context.Context, groupID string, step Step) (Aggregate, Change, error) {
	if groupID != m.s.GroupID {
		return Aggregate{}, Change{}, ErrSessionNotFound
	}
	s, slots := m.copy()
	ch, x, err := step(s, slots)
	if err != nil {
		return Aggregate{}, ch, err
	}
	m.s, m.slots = s, slots
	m.changes, m.extras = append(m.changes, ch), append(m.extras, x)
	return Aggregate{Session: s, Slots: slots}, ch, nil
}

// emitted records the changes whose effects were carried out.
type emitted struct{ changes []Change }

func (e *emitted) Emit(_ context.Context, _ *Session, _ []Slot, ch Change, _ bool) error {
	e.changes = append(e.changes, ch)
	return nil
}
func (e *emitted) Seal(context.Context, SealMessage) error { return errors.New("not expected") }

func useCases(t *testing.T) (*Sessions, *memStore, *emitted) {
	t.Helper()
	s, slots := newSession(ModeParallel, Required, Required)
	s.TenantID = "t1"
	Start(s, slots, t0)
	for i := range slots {
		slots[i].SessionID = "ps-" + string(rune('a'+i))
	}
	st, fx := &memStore{s: s, slots: slots}, &emitted{}
	return &Sessions{Store: st, Effects: fx, Now: func() time.Time { return t0.Add(time.Minute) }}, st, fx
}

func TestEndChecksTheTenantAndEmits(t *testing.T) {
	t.Parallel()
	u, st, fx := useCases(t)
	who := Actor{Kind: "initiator", ID: "caller"}
	if _, err := u.End(context.Background(), "t2", "g", ReasonRevoked, who); !errors.Is(err, ErrSessionNotFound) {
		t.Fatalf("another tenant's session: %v, want session_not_found", err)
	}
	if len(st.changes) != 0 || len(fx.changes) != 0 || st.s.State != SessionPending {
		t.Fatalf("another tenant's end stored %d changes, emitted %d, state %s", len(st.changes), len(fx.changes), st.s.State)
	}
	s, err := u.End(context.Background(), "t1", "g", ReasonRevoked, who)
	if err != nil || s.State != SessionCancelled || s.CancelReason != ReasonRevoked {
		t.Fatalf("revoke: %v, %+v", err, s)
	}
	if len(fx.changes) != 1 || len(fx.changes[0].Events) == 0 || fx.changes[0].Events[0].Actor.ID != "caller" {
		t.Fatalf("revoke emitted %+v", fx.changes)
	}
}

func TestSubmitOfASignedSlotCommitsOnlyTheCallbackID(t *testing.T) {
	t.Parallel()
	u, st, fx := useCases(t)
	st.slots[0].State = SlotSigned
	c := tokens.PortalAccess{GroupID: "g", SlotIndex: 0, SessionID: "ps-a"}
	_, _, err := u.Submit(context.Background(), Submission{Claims: c, SessionID: "ps-a", CallbackID: "cb-2"})
	if !errors.Is(err, ErrAlreadySigned) {
		t.Fatalf("second submission: %v, want slot_already_signed", err)
	}
	if len(st.extras) != 1 || st.extras[0].CallbackID != "cb-2" || st.extras[0].Signature != nil || len(st.changes[0].Events) != 0 {
		t.Fatalf("stored %+v with %+v; want the callback id alone", st.extras, st.changes)
	}
	if len(fx.changes) != 0 {
		t.Fatalf("a refused submission emitted %+v", fx.changes)
	}
	// Another slot's sessionId in the body: 403, nothing stored.
	_, _, err = u.Submit(context.Background(), Submission{Claims: c, SessionID: "ps-b", CallbackID: "cb-3"})
	if !errors.Is(err, ErrWrongSlot) || len(st.extras) != 1 {
		t.Fatalf("wrong slot: %v, %d commits", err, len(st.extras))
	}
}

func TestSignerTransitionsCheckTheLoadedSlot(t *testing.T) {
	t.Parallel()
	u, st, _ := useCases(t)
	ctx, d := context.Background(), Device{IP: "198.51.100.7", UserAgent: "UA"}
	if _, err := Activate(st.s, st.slots, 0, t0, nil); err != nil {
		t.Fatal(err)
	}
	cur := tokens.PortalAccess{GroupID: "g", SlotIndex: 0, SessionID: "ps-a", Generation: 0}
	_, sl, err := u.Viewed(ctx, cur, d)
	if err != nil || sl.State != SlotViewed {
		t.Fatalf("viewed: %v, %+v", err, sl)
	}
	if got := st.changes[0].Events[0].Actor; got.ID != "ps-a" || got.IP != d.IP || got.Kind != "signer" {
		t.Fatalf("actor %+v", got)
	}
	st.slots[0].Generation = 1 // the slot moved to another device: the earlier one only views
	if _, _, err := u.Consent(ctx, cur, d, []string{"document_reviewed"}); !errors.Is(err, ErrSecondary) {
		t.Fatalf("consent from the earlier device: %v, want device_secondary", err)
	}
	for name, c := range map[string]tokens.PortalAccess{
		"newer generation": {GroupID: "g", SlotIndex: 0, SessionID: "ps-a", Generation: 2},
		"other portal id":  {GroupID: "g", SlotIndex: 0, SessionID: "ps-b", Generation: 1},
		"no such slot":     {GroupID: "g", SlotIndex: 5, SessionID: "ps-a", Generation: 1},
	} {
		if _, _, err := u.Viewed(ctx, c, d); !errors.Is(err, ErrAccessNotCurrent) {
			t.Errorf("%s: %v, want token_invalid", name, err)
		}
	}
	st.s.State = SessionCancelled
	if _, _, err := u.Viewed(ctx, tokens.PortalAccess{GroupID: "g", SessionID: "ps-a", Generation: 1}, d); apperr.KindOf(err) != apperr.KindGone {
		t.Fatalf("ended session: %v, want 410", err)
	}
	if len(st.changes) != 1 {
		t.Fatalf("refused steps stored %d changes", len(st.changes)-1)
	}
}
