package sessionstore_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/esign/sessionstore"
	"github.com/esign-svc/esign/shared/esign/sessionstore/storetest"
	"github.com/esign-svc/esign/shared/tokens"
)

// TestChangeCommitsTheStepsExtras: the extras of a domain step are committed with its change
// (signature, callback id, a transfer stored and consumed), a replayed callback id or an
// oversized signature refuses the whole change, and CountEvents counts one kind.
func TestChangeCommitsTheStepsExtras(t *testing.T) {
	t.Parallel()
	ctx, st := context.Background(), storetest.New(t)
	now := time.Now().UTC()
	s, slots := newSession("t1", "C-change", now, 2)
	create(t, st, s, slots, now)
	step := func(f func(s *esign.Session, slots []esign.Slot) (esign.Change, error), x esign.Extras) esign.Step {
		return func(s *esign.Session, slots []esign.Slot) (esign.Change, esign.Extras, error) {
			ch, err := f(s, slots)
			return ch, x, err
		}
	}
	if _, _, err := st.Update(ctx, s.GroupID, step(func(s *esign.Session, sl []esign.Slot) (esign.Change, error) {
		return esign.Activate(s, sl, 0, now, nil)
	}, esign.Extras{})); err != nil {
		t.Fatal(err)
	}
	png := make([]byte, 70*1024) // two chunks
	_, _ = rand.Read(png)
	if _, _, err := st.Update(ctx, s.GroupID, step(func(s *esign.Session, sl []esign.Slot) (esign.Change, error) {
		return esign.MarkViewed(s, sl, 0, now, nil)
	}, esign.Extras{CallbackID: "cb-1", Signature: &esign.SignatureRecord{Slot: 0, PNG: png, Fields: `[]`, Consents: `[1]`}})); err != nil {
		t.Fatal(err)
	}
	got, err := st.Signature(ctx, s.GroupID, 0)
	if err != nil || !bytes.Equal(got.PNG, png) || got.Consents != `[1]` {
		t.Fatalf("signature extra: %v (%d bytes)", err, len(got.PNG))
	}

	activate1 := func(s *esign.Session, sl []esign.Slot) (esign.Change, error) {
		return esign.Activate(s, sl, 1, now, nil)
	}
	if _, _, err := st.Update(ctx, s.GroupID, step(activate1, esign.Extras{CallbackID: "cb-1"})); !errors.Is(err, sessionstore.ErrReplayed) {
		t.Fatalf("replayed callback id: %v", err)
	}
	big := &esign.SignatureRecord{Slot: 1, PNG: make([]byte, sessionstore.MaxSignaturePNG+1)}
	if _, _, err := st.Update(ctx, s.GroupID, step(activate1, esign.Extras{Signature: big})); apperr.KindOf(err) != apperr.KindTooLarge {
		t.Fatalf("oversized signature: %v", err)
	}
	if _, sl, _ := st.Load(ctx, s.GroupID); sl[1].State != esign.SlotPending {
		t.Fatalf("a refused change moved slot 1 to %s", sl[1].State)
	}

	_, hash, err := tokens.NewOpaque()
	if err != nil {
		t.Fatal(err)
	}
	var made esign.Transfer
	if _, _, err := st.Update(ctx, s.GroupID, func(s *esign.Session, sl []esign.Slot) (esign.Change, esign.Extras, error) {
		ch, tr, err := esign.CreateTransfer(s, sl, 0, now, hash)
		made = tr
		return ch, esign.Extras{NewTransfer: &tr}, err
	}); err != nil {
		t.Fatal(err)
	}
	stored, err := st.Transfer(ctx, s.GroupID, hash)
	if err != nil || stored.Slot != 0 || !stored.ExpiresAt.Equal(made.ExpiresAt) {
		t.Fatalf("stored transfer %+v: %v", stored, err)
	}
	if _, _, err := st.Update(ctx, s.GroupID, func(s *esign.Session, sl []esign.Slot) (esign.Change, esign.Extras, error) {
		ch, err := esign.RedeemTransfer(s, sl, stored, now, nil)
		return ch, esign.Extras{Redeemed: &stored}, err
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Transfer(ctx, s.GroupID, hash); !errors.Is(err, esign.ErrTransferInvalid) {
		t.Fatalf("redeemed transfer still readable: %v", err)
	}

	for kind, want := range map[string]int{esign.EvSlotActivated: 1, esign.EvSlotViewed: 1, esign.EvSealRequeued: 0} {
		if n, err := st.CountEvents(ctx, s.GroupID, kind); err != nil || n != want {
			t.Errorf("CountEvents(%s) = %d, %v; want %d", kind, n, err, want)
		}
	}
}
