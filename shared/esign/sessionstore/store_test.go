package sessionstore_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/esign/sessionstore"
	"github.com/esign-svc/esign/shared/esign/sessionstore/storetest"
)

func TestMain(m *testing.M) { azuritetest.Main(m) }

func newSession(tenant, corr string, now time.Time, n int) (*esign.Session, []esign.Slot) {
	s := &esign.Session{GroupID: uuid.NewString(), TenantID: tenant, CorrelationID: corr, DocumentID: "D",
		DocType: "t", PDFBlobPath: "documents/a.pdf", PDFHash: "sha256:00", SigningMode: esign.ModeParallel,
		State: esign.SessionPending, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	slots := make([]esign.Slot, n)
	for i := range slots {
		slots[i] = esign.Slot{Index: i, SessionID: uuid.NewString(), Role: "r", EmailHash: fmt.Sprintf("h%d", i),
			Condition: esign.Required, OTPChannel: esign.OTPNone}
	}
	return s, slots
}

func create(t *testing.T, st *sessionstore.Store, s *esign.Session, slots []esign.Slot, now time.Time) {
	t.Helper()
	ch := esign.Start(s, slots, now)
	ch.By(esign.Actor{Kind: "initiator", ID: "oid"})
	if err := st.Create(context.Background(), s, slots, ch, now); err != nil {
		t.Fatal(err)
	}
}

func TestCreateLoadAndEvents(t *testing.T) {
	t.Parallel()
	ctx, st := context.Background(), storetest.New(t)
	now := time.Date(2026, 11, 22, 10, 0, 0, 123456789, time.UTC)
	s, slots := newSession("t1", "C1", now, 3)
	s.DocumentTitle = "Lease — Flat 4B"
	create(t, st, s, slots, now)

	got, gotSlots, err := st.Load(ctx, s.GroupID)
	if err != nil {
		t.Fatal(err)
	}
	if got.CorrelationID != "C1" || got.DocumentTitle != s.DocumentTitle || got.ExpiresAt != s.ExpiresAt || got.CreatedAt != now || len(gotSlots) != 3 || got.ETag == "" {
		t.Fatalf("loaded %+v, %d slots", got, len(gotSlots))
	}
	if gotSlots[2].Timeline[esign.SlotPending] != now || !gotSlots[2].Invited || gotSlots[2].ETag == "" {
		t.Fatalf("slot 2 %+v", gotSlots[2])
	}
	evs, err := st.Events(ctx, s.GroupID)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 4 || evs[0].Kind != esign.EvSessionCreated || evs[1].Kind != esign.EvSlotInvited || evs[1].EmailHash != "h0" || evs[0].At != now || evs[0].ActorID != "oid" {
		t.Fatalf("events %+v", evs)
	}
	if g, err := st.GroupByCorrelation(ctx, "t1", "C1"); err != nil || g != s.GroupID {
		t.Fatalf("by correlation %q %v", g, err)
	}
	if _, err := st.GroupByCorrelation(ctx, "other-tenant", "C1"); apperr.KindOf(err) != apperr.KindNotFound {
		t.Fatalf("other tenant sees it: %v", err)
	}
	// A slot is found through its access token (group and slot index), not an index row.
	if gotSlots[1].SessionID != slots[1].SessionID || gotSlots[1].Index != 1 {
		t.Fatalf("slot 1 sessionId %q index %d", gotSlots[1].SessionID, gotSlots[1].Index)
	}
	if _, _, err := st.Load(ctx, uuid.NewString()); apperr.KindOf(err) != apperr.KindNotFound {
		t.Fatalf("missing session: %v", err)
	}
}

func TestSecondLiveSessionForCorrelationIsRefused(t *testing.T) {
	t.Parallel()
	ctx, st := context.Background(), storetest.New(t)
	now := time.Now().UTC()
	first, slots := newSession("t1", "C2", now, 1)
	create(t, st, first, slots, now)

	second, slots2 := newSession("t1", "C2", now, 1)
	err := st.Create(ctx, second, slots2, esign.Start(second, slots2, now), now)
	e, ok := apperr.As(err)
	if !ok || e.Code != "session_exists" || e.Extra["groupId"] != first.GroupID {
		t.Fatalf("want session_exists naming %s, got %v", first.GroupID, err)
	}
	if _, _, err := st.Load(ctx, second.GroupID); apperr.KindOf(err) != apperr.KindNotFound {
		t.Fatalf("refused session was written: %v", err)
	}
	// Another tenant may use the same correlationId.
	other, slots3 := newSession("t2", "C2", now, 1)
	create(t, st, other, slots3, now)
	// Once the first is past expiry, a new one may take the correlationId.
	later := first.ExpiresAt
	third, slots4 := newSession("t1", "C2", later, 1)
	create(t, st, third, slots4, later)
	if g, _ := st.GroupByCorrelation(ctx, "t1", "C2"); g != third.GroupID {
		t.Fatalf("correlation points to %s, want %s", g, third.GroupID)
	}
}

func TestApplyIsAtomicAndExactlyOneRacerWins(t *testing.T) {
	t.Parallel()
	ctx, st := context.Background(), storetest.New(t)
	now := time.Now().UTC()
	s, slots := newSession("t1", "C3", now, 1)
	create(t, st, s, slots, now)

	// Both racers read the same version before either writes: exactly one write may land.
	type copyOf struct {
		sess  *esign.Session
		slots []esign.Slot
	}
	var copies [2]copyOf
	for r := range copies {
		sess, sl, err := st.Load(ctx, s.GroupID)
		if err != nil {
			t.Fatal(err)
		}
		copies[r] = copyOf{sess, sl}
	}
	var wg sync.WaitGroup
	results := make([]error, 2)
	start := make(chan struct{})
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			c := copies[r]
			ch, err := esign.Activate(c.sess, c.slots, 0, now.Add(time.Duration(r+1)*time.Second), nil)
			if err != nil {
				results[r] = err
				return
			}
			<-start
			results[r] = st.Apply(ctx, c.sess, c.slots, ch)
		}(r)
	}
	close(start)
	wg.Wait()
	wins := 0
	for _, err := range results {
		switch {
		case err == nil:
			wins++
		case !sessionstore.IsConcurrent(err):
			t.Fatalf("unexpected error %v", err)
		}
	}
	if wins != 1 {
		t.Fatalf("%d racers won: %v", wins, results)
	}
	evs, _ := st.Events(ctx, s.GroupID)
	activated := 0
	for _, e := range evs {
		if e.Kind == esign.EvSlotActivated {
			activated++
		}
	}
	if activated != 1 {
		t.Fatalf("%d activation events written, want 1", activated)
	}
}

func TestCallbackIDAcceptedOnceAndSignatureRoundTrip(t *testing.T) {
	t.Parallel()
	ctx, st := context.Background(), storetest.New(t)
	now := time.Now().UTC()
	s, slots := newSession("t1", "C4", now, 2)
	create(t, st, s, slots, now)
	sess, sl, _ := st.Load(ctx, s.GroupID)
	ch, _ := esign.Activate(sess, sl, 0, now, nil)
	if err := st.Apply(ctx, sess, sl, ch); err != nil {
		t.Fatal(err)
	}
	sess, sl, _ = st.Load(ctx, s.GroupID)
	ch, _ = esign.MarkViewed(sess, sl, 0, now, nil)
	c2, err := esign.Consent(sess, sl, 0, now, []string{"document_reviewed", "electronic_signature", "legally_binding"})
	if err != nil {
		t.Fatal(err)
	}
	ch.Events = append(ch.Events, c2.Events...)
	if err := st.Apply(ctx, sess, sl, ch); err != nil {
		t.Fatal(err)
	}

	png := make([]byte, 150*1024) // three chunks
	_, _ = rand.Read(png)
	sess, sl, _ = st.Load(ctx, s.GroupID)
	if len(sl[0].Consents) != 3 || sl[0].Consents[2].Text != esign.ConsentStatements[2].Text {
		t.Fatalf("consents did not round-trip: %+v", sl[0].Consents)
	}
	ch, err = esign.Sign(sess, sl, 0, now, esign.SignInput{SignerName: "A", IP: "198.51.100.7", UserAgent: "UA"})
	if err != nil {
		t.Fatal(err)
	}
	sigOp, err := sessionstore.SignatureOp(s.GroupID, 0, sessionstore.Signature{PNG: png, Fields: `[{"name":"x"}]`, Consents: `[]`})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Apply(ctx, sess, sl, ch, sigOp, sessionstore.CallbackOnce(s.GroupID, "cb-1")); err != nil {
		t.Fatal(err)
	}
	got, err := st.Signature(ctx, s.GroupID, 0)
	if err != nil || !bytes.Equal(got.PNG, png) || got.Fields != `[{"name":"x"}]` {
		t.Fatalf("signature round trip: %v (%d bytes)", err, len(got.PNG))
	}

	// The same callback id again, on an otherwise valid change of the other slot: refused whole.
	sess, sl, _ = st.Load(ctx, s.GroupID)
	ch, _ = esign.Activate(sess, sl, 1, now, nil)
	if err := st.Apply(ctx, sess, sl, ch, sessionstore.CallbackOnce(s.GroupID, "cb-1")); err != sessionstore.ErrReplayed {
		t.Fatalf("replayed callback id: %v", err)
	}
	_, sl, _ = st.Load(ctx, s.GroupID)
	if sl[1].State != esign.SlotPending {
		t.Fatalf("refused transaction changed slot 1 to %s", sl[1].State)
	}

	if _, err := sessionstore.SignatureOp(s.GroupID, 1, sessionstore.Signature{PNG: make([]byte, sessionstore.MaxSignaturePNG+1)}); apperr.KindOf(err) != apperr.KindTooLarge {
		t.Fatalf("oversized PNG: %v", err)
	}
	if err := st.DeleteSignature(ctx, s.GroupID, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Signature(ctx, s.GroupID, 0); apperr.KindOf(err) != apperr.KindNotFound {
		t.Fatalf("after purge: %v", err)
	}
}

func TestDueForExpiry(t *testing.T) {
	t.Parallel()
	ctx, st := context.Background(), storetest.New(t)
	now := time.Now().UTC()
	soon, sl1 := newSession("t1", "E1", now, 1)
	soon.ExpiresAt = now.Add(time.Minute)
	later, sl2 := newSession("t1", "E2", now, 1)
	later.ExpiresAt = now.Add(time.Hour)
	create(t, st, soon, sl1, now)
	create(t, st, later, sl2, now)

	due, err := st.DueForExpiry(ctx, now.Add(time.Minute), 100)
	if err != nil || len(due) != 1 || due[0] != soon.GroupID {
		t.Fatalf("due %v %v", due, err)
	}
	sess, slots, _ := st.Load(ctx, soon.GroupID)
	ch := esign.Expire(sess, slots, now.Add(time.Minute))
	if err := st.Apply(ctx, sess, slots, ch); err != nil {
		t.Fatal(err)
	}
	if due, _ := st.DueForExpiry(ctx, now.Add(2*time.Hour), 100); len(due) != 1 || due[0] != later.GroupID {
		t.Fatalf("after expiry, due %v", due)
	}
}
