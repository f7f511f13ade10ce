package sessionstore_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/esign/sessionstore/storetest"
	"github.com/esign-svc/esign/shared/kernel/aggstore"
)

// TestInviteChecksFollowInvitingChanges: Create, Apply and Update put the session on the
// invitation-check schedule exactly when their change invites, due the check delay after it;
// changes that invite nobody add nothing, and a checked entry is forgotten.
func TestInviteChecksFollowInvitingChanges(t *testing.T) {
	t.Parallel()
	ctx, st := context.Background(), storetest.New(t)
	st.InviteChecks().SetAfter(3 * time.Minute)
	now := time.Now().UTC()
	s, slots := newSession("t1", "I1", now, 2)
	s.SigningMode = esign.ModeSequential
	for i := range slots {
		slots[i].LinkJTI = "j"
	}
	create(t, st, s, slots, now)
	due := func(at time.Time) []aggstore.Item {
		t.Helper()
		items, err := st.InviteChecks().Due(ctx, at, 100)
		if err != nil {
			t.Fatal(err)
		}
		return items
	}
	if got := due(now.Add(3*time.Minute - time.Nanosecond)); len(got) != 0 {
		t.Fatalf("due before its time: %v", got)
	}
	first := aggstore.Item{ID: s.GroupID, At: now.Add(3 * time.Minute)}
	if got := due(now.Add(3 * time.Minute)); !reflect.DeepEqual(got, []aggstore.Item{first}) {
		t.Fatalf("due after create %v, want %v", got, first)
	}

	// Activating invites nobody (Apply); resend-invite does (Update, as the dispatcher's routes).
	sess, sl, err := st.Load(ctx, s.GroupID)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := esign.Activate(sess, sl, 0, now.Add(time.Minute), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Apply(ctx, sess, sl, ch); err != nil {
		t.Fatal(err)
	}
	if got := due(now.Add(time.Hour)); len(got) != 1 {
		t.Fatalf("activation added a check: %v", got)
	}
	t2 := now.Add(2 * time.Minute)
	if _, _, err := st.Update(ctx, s.GroupID, func(s *esign.Session, slots []esign.Slot) (esign.Change, esign.Extras, error) {
		ch, err := esign.Reinvite(s, slots, 0, t2)
		return ch, esign.Extras{}, err
	}); err != nil {
		t.Fatal(err)
	}
	second := aggstore.Item{ID: s.GroupID, At: t2.Add(3 * time.Minute)}
	if got := due(now.Add(time.Hour)); !reflect.DeepEqual(got, []aggstore.Item{first, second}) {
		t.Fatalf("due after the resend %v, want %v and %v", got, first, second)
	}
	for _, it := range []aggstore.Item{first, second} {
		if err := st.InviteChecks().Forget(ctx, it); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.InviteChecks().Forget(ctx, first); err != nil {
		t.Fatalf("forgetting twice: %v", err)
	}
	if got := due(now.Add(time.Hour)); len(got) != 0 {
		t.Fatalf("forgotten checks still due: %v", got)
	}
}
