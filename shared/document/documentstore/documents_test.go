package documentstore_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/document"
	"github.com/esign-svc/esign/shared/document/documentstore/storetest"
	"github.com/esign-svc/esign/shared/kernel"
)

// TestDocumentsUseCases: the document use cases (document.Documents) on this store: a create
// with document.rendered, what auto-trigger started recorded once each by the caller, and
// another tenant's correlationId not found (nothing written to either document).
func TestDocumentsUseCases(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	at := time.Date(2026, 11, 27, 2, 0, 0, 0, time.UTC)
	clock := at
	u := &document.Documents{Store: st, Now: func() time.Time { clock = clock.Add(time.Second); return clock }}
	who := kernel.Actor{Kind: "initiator", ID: "oid-1"}

	d := &document.Document{CorrelationID: "c-" + t.Name(), TenantID: "t1", CreatedBy: "oid-1", PDFHash: "sha256:ab", CreatedAt: at}
	if err := u.Create(ctx, d); err != nil {
		t.Fatal(err)
	}
	if err := u.Create(ctx, d); apperr.KindOf(err) != apperr.KindConflict {
		t.Fatalf("second create: %v", err)
	}
	if _, err := u.StartedESign(ctx, "t2", d.CorrelationID, "g-1", who); apperr.KindOf(err) != apperr.KindNotFound {
		t.Fatalf("another tenant's document: %v", err)
	}
	if _, err := u.StartedDelivery(ctx, "t2", d.CorrelationID, []string{"d-1"}, who); apperr.KindOf(err) != apperr.KindNotFound {
		t.Fatalf("another tenant's document: %v", err)
	}
	for i := 0; i < 2; i++ { // the second call records nothing
		got, err := u.StartedESign(ctx, "t1", d.CorrelationID, "g-1", who)
		if err != nil || got.ESignGroupID != "g-1" {
			t.Fatalf("esign started (%d): %+v %v", i, got, err)
		}
		got, err = u.StartedDelivery(ctx, "t1", d.CorrelationID, []string{"d-1", "d-2"}, who)
		if err != nil || !slices.Equal(got.DeliveryIDs, []string{"d-1", "d-2"}) {
			t.Fatalf("delivery started (%d): %+v %v", i, got, err)
		}
	}
	if got, err := u.Load(ctx, "t1", d.CorrelationID); err != nil || got.ESignGroupID != "g-1" || len(got.DeliveryIDs) != 2 {
		t.Fatalf("loaded %+v %v", got, err)
	}
	evs, err := st.Events(ctx, "t1", d.CorrelationID)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range evs {
		kinds = append(kinds, e.Kind+" by "+e.ActorID)
	}
	want := []string{document.EvRendered + " by ", document.EvESignStarted + " by oid-1", document.EvDeliveryStarted + " by oid-1"}
	if !slices.Equal(kinds, want) {
		t.Fatalf("events %q, want %q", kinds, want)
	}
	if !evs[1].At.After(at) {
		t.Fatalf("esign_started at %v: not the service's clock", evs[1].At)
	}
}
