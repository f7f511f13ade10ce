package sessionstore_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/esign/sessionstore/storetest"
	"github.com/esign-svc/esign/shared/kernel/aggstore"
)

// TestSessionChangesPublishEvents: a session's create and a signer's activation write the
// outbox rows of session.created and slot.activated in their transactions (DESIGN 17), with
// the tenant, the group id, the slot and the session's state, and nothing else.
func TestSessionChangesPublishEvents(t *testing.T) {
	t.Parallel()
	ctx, st := context.Background(), storetest.New(t)
	now := time.Now().UTC().Add(-time.Second)
	s, slots := newSession("t-events", "C-events", now, 2)
	create(t, st, s, slots, now)
	if _, _, err := st.Update(ctx, s.GroupID, func(s *esign.Session, sl []esign.Slot) (esign.Change, esign.Extras, error) {
		ch, err := esign.Activate(s, sl, 1, now, nil)
		return ch, esign.Extras{}, err
	}); err != nil {
		t.Fatal(err)
	}
	box, err := aggstore.OpenOutbox(azuritetest.Account(t), aggstore.TableOutbox)
	if err != nil {
		t.Fatal(err)
	}
	due, err := box.Due(ctx, time.Now(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, b := range due {
		for _, ev := range b.Events() {
			if ev.AggregateID != s.GroupID {
				continue // another test's session
			}
			if ev.TenantID != "t-events" || ev.Object != "session" || !strings.HasPrefix(ev.ID, "evt_") || ev.At.IsZero() {
				t.Fatalf("event %+v", ev)
			}
			if ev.Type == "slot.activated" && (ev.Slot != 1 || ev.State != string(esign.SessionInProgress)) {
				t.Fatalf("slot.activated %+v", ev)
			}
			types = append(types, ev.Type)
		}
	}
	slices.Sort(types)
	types = slices.Compact(types) // two batches (one per change) may each list the partition's rows
	if !slices.Equal(types, []string{"session.created", "slot.activated"}) {
		t.Fatalf("published %v", types)
	}
}
