package deliverystore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/delivery/deliverystore"
	"github.com/esign-svc/esign/shared/delivery/deliverystore/storetest"
)

func TestMain(m *testing.M) { azuritetest.Main(m) }

var now = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func create(t *testing.T, st *deliverystore.Store, tenant, corr string) *delivery.Session {
	t.Helper()
	s := &delivery.Session{DeliveryID: uuid.NewString(), TenantID: tenant, CorrelationID: corr, DocumentName: "a.pdf",
		PDFBlobPath: "documents/a.pdf", Mode: delivery.ModeBoth, RecipientHash: "h", RecipientEnc: "enc", RequireOTP: true,
		SharePoint: &delivery.Target{SiteURL: "https://c.sharepoint.com/sites/x", LibraryPath: "D", FolderPath: "f"},
		ExpiresAt:  now.Add(time.Hour)}
	ch := delivery.Start(s, now)
	ch.By(delivery.Actor{Kind: "initiator", ID: "oid"})
	if err := st.Create(context.Background(), s, ch); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestCreateLoadUpdateEvents(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	s := create(t, st, "t1", "c1")
	got, err := st.Load(ctx, s.DeliveryID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != delivery.StateSent || got.UploadState != delivery.UploadPending || got.SharePoint.FolderPath != "f" ||
		!got.ExpiresAt.Equal(s.ExpiresAt) || !got.RequireOTP || got.RecipientHash != "h" {
		t.Fatalf("loaded %+v", got)
	}
	_, _, err = st.Update(ctx, s.DeliveryID, func(s *delivery.Session) (delivery.Change, error) {
		return delivery.SendOTP(s, now.Add(time.Second), "codehash", "a***@e***", 0)
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.Update(ctx, s.DeliveryID, func(s *delivery.Session) (delivery.Change, error) { return delivery.Open(s, now.Add(2*time.Second)) }); err != nil {
		t.Fatal(err)
	}
	got, _ = st.Load(ctx, s.DeliveryID)
	if got.OTP.CodeHash != "codehash" || !got.OTP.ExpiresAt.Equal(now.Add(10*time.Minute+time.Second)) || got.ViewCount != 1 || got.State != delivery.StateOpened {
		t.Fatalf("after updates %+v", got)
	}
	evs, err := st.Events(ctx, s.DeliveryID)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range evs {
		kinds = append(kinds, e.Kind)
		if e.EmailHash != "h" {
			t.Errorf("event %s without the recipient hash", e.Kind)
		}
	}
	if fmt.Sprint(kinds) != fmt.Sprint([]string{delivery.EvCreated, delivery.EvOTPSent, delivery.EvOpened}) {
		t.Fatalf("events %v", kinds)
	}
}

func TestStaleETagIsConcurrent(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	s := create(t, st, "t1", "c1")
	a, _ := st.Load(ctx, s.DeliveryID)
	b, _ := st.Load(ctx, s.DeliveryID)
	ch, _ := delivery.Open(a, now)
	if err := st.Apply(ctx, a, ch); err != nil {
		t.Fatal(err)
	}
	ch, _ = delivery.Open(b, now)
	if err := st.Apply(ctx, b, ch); !errors.Is(err, deliverystore.ErrConcurrent) {
		t.Fatalf("stale write: %v", err)
	}
	evs, _ := st.Events(ctx, s.DeliveryID)
	if len(evs) != 2 {
		t.Fatalf("%d events: the lost write left an event", len(evs))
	}
	if _, err := st.Load(ctx, uuid.NewString()); !errors.Is(err, deliverystore.ErrNotFound) {
		t.Fatalf("missing: %v", err)
	}
}

func TestListByCorrelationIsPerTenant(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	a1 := create(t, st, "t1", "c1")
	a2 := create(t, st, "t1", "c1")
	create(t, st, "t1", "c10")
	create(t, st, "t2", "c1")
	got, err := st.ListByCorrelation(ctx, "t1", "c1")
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, s := range got {
		ids[s.DeliveryID] = true
	}
	if len(got) != 2 || !ids[a1.DeliveryID] || !ids[a2.DeliveryID] {
		t.Fatalf("listed %d", len(got))
	}
	if got, _ := st.ListByCorrelation(ctx, "t3", "c1"); len(got) != 0 {
		t.Fatalf("other tenant listed %d", len(got))
	}
}

// TestDeliveryStoredBefore: a delivery session's root written before it had a RowKey of its
// own ("session", shared by every delivery: Azurite scanned them all on each point operation,
// issue 26) is read, moved to session-<id> on that first read and updated there; a new one is
// written under its own key.
func TestDeliveryStoredBefore(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	old := &delivery.Session{DeliveryID: uuid.NewString(), TenantID: "t1", CorrelationID: "c-old", DocumentName: "a.pdf",
		PDFBlobPath: "documents/a.pdf", Mode: delivery.ModeSecureEmail, RecipientHash: "h", RecipientEnc: "enc",
		State: delivery.StateSent, ExpiresAt: now.Add(time.Hour)}
	if err := st.WriteOld(ctx, old); err != nil {
		t.Fatal(err)
	}
	if got, err := st.Load(ctx, old.DeliveryID); err != nil || got.CorrelationID != "c-old" || got.State != delivery.StateSent {
		t.Fatalf("a delivery stored before: %+v, %v", got, err)
	}
	if _, _, err := st.Update(ctx, old.DeliveryID, func(s *delivery.Session) (delivery.Change, error) { return delivery.Open(s, now) }); err != nil {
		t.Fatal(err)
	}
	if got, err := st.Load(ctx, old.DeliveryID); err != nil || got.State != delivery.StateOpened {
		t.Fatalf("updated: %+v, %v", got, err)
	}
	if keys, err := st.RootKeys(ctx, old.DeliveryID); err != nil || fmt.Sprint(keys) != "[session-"+old.DeliveryID+"]" {
		t.Fatalf("root rows %v, %v", keys, err)
	}
	s := create(t, st, "t1", "c-new")
	if keys, err := st.RootKeys(ctx, s.DeliveryID); err != nil || fmt.Sprint(keys) != "[session-"+s.DeliveryID+"]" {
		t.Fatalf("a new delivery's root rows %v, %v", keys, err)
	}
}
