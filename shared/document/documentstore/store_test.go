package documentstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/document"
	"github.com/esign-svc/esign/shared/document/documentstore/storetest"
	"github.com/esign-svc/esign/shared/kernel"
)

func TestMain(m *testing.M) { azuritetest.Main(m) }

// TestDocumentLifecycle stores a rendered document with document.rendered, refuses a second
// create under its correlationId, records what auto-trigger started once each, and reads the
// row and trail back as written.
func TestDocumentLifecycle(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	at := time.Date(2026, 11, 23, 7, 0, 0, 123456789, time.UTC)
	d := &document.Document{CorrelationID: "offer-1", TenantID: "t1", CreatedBy: "oid-1", DocumentID: "OFFER-1",
		DocType: "Offer letter", Title: "Offer for Ann", TemplatePath: "templates/offer.zip", TemplateName: "Offer letter",
		TemplateVersion: 3, PDFBlobPath: "documents/rendered/offer-1.pdf", PDFHash: "sha256:ab",
		ManifestPath: "documents/rendered/offer-1.pdf.manifest.json", Pages: 3, RequestHash: "rh", GeneratedBy: "crm",
		SourceSystem: "erp", CreatedAt: at}
	ch := document.Rendered(d)
	ch.By(kernel.Actor{Kind: "initiator", ID: "oid-1"})
	if err := st.Create(ctx, d, ch); err != nil {
		t.Fatal(err)
	}
	if err := st.Create(ctx, &document.Document{CorrelationID: "offer-1", TenantID: "t1", CreatedAt: at}, document.Rendered(d)); apperr.KindOf(err) != apperr.KindConflict {
		t.Fatalf("second create: %v", err)
	}
	// correlationIds are per tenant: another tenant's id reads as a missing one, and the other
	// tenant may use the same id without meeting the first (DESIGN 14).
	if _, err := st.Load(ctx, "t2", "offer-1"); apperr.KindOf(err) != apperr.KindNotFound {
		t.Fatalf("other tenant's load: %v, want not found", err)
	}
	other := &document.Document{CorrelationID: "offer-1", TenantID: "t2", CreatedBy: "oid-2", CreatedAt: at}
	if err := st.Create(ctx, other, document.Rendered(other)); err != nil {
		t.Fatalf("other tenant's create with the same correlationId: %v", err)
	}
	if o, err := st.Load(ctx, "t2", "offer-1"); err != nil || o.CreatedBy != "oid-2" || o.CorrelationID != "offer-1" {
		t.Fatalf("other tenant's document: %+v %v", o, err)
	}
	got, err := st.Load(ctx, "t1", "offer-1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(d, got, cmpIgnoreETag); diff != "" {
		t.Fatalf("loaded document differs (-want +got):\n%s", diff)
	}
	for i := 0; i < 2; i++ { // the second run records nothing
		if _, _, err := st.Update(ctx, document.ID("t1", "offer-1"), func(d *document.Document) (kernel.Change, error) {
			return document.StartESign(d, "g-1", at.Add(time.Second)), nil
		}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := st.Update(ctx, document.ID("t1", "offer-1"), func(d *document.Document) (kernel.Change, error) {
			return document.StartDelivery(d, []string{"d-1", "d-2"}, at.Add(2*time.Second)), nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	got, err = st.Load(ctx, "t1", "offer-1")
	if err != nil {
		t.Fatal(err)
	}
	if got.ESignGroupID != "g-1" || !cmp.Equal(got.DeliveryIDs, []string{"d-1", "d-2"}) {
		t.Fatalf("auto-trigger ids %q %v", got.ESignGroupID, got.DeliveryIDs)
	}
	evs, err := st.Events(ctx, "t1", "offer-1")
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range evs {
		kinds = append(kinds, e.Kind)
	}
	if want := []string{document.EvRendered, document.EvESignStarted, document.EvDeliveryStarted}; !cmp.Equal(kinds, want) {
		t.Fatalf("trail %v, want %v", kinds, want)
	}
	if evs[0].Data["templateVersion"] != float64(3) || evs[0].Data["pdfHash"] != "sha256:ab" || evs[0].ActorID != "oid-1" {
		t.Fatalf("document.rendered %+v", evs[0])
	}
	if _, err := st.Load(ctx, "t1", "never"); apperr.KindOf(err) != apperr.KindNotFound {
		t.Fatalf("missing document: %v", err)
	}
}

var cmpIgnoreETag = cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".ETag" }, cmp.Ignore())

// TestDocumentStoredBefore: a document row written before the root had a RowKey of its own
// ("document", shared by every document: Azurite scanned them all on each point operation,
// issue 26) is read as it was, moved to document-<id> on that first read, and updated there;
// a new document is written under its own key; another tenant's id stays missing.
func TestDocumentStoredBefore(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	at := time.Date(2026, 11, 23, 7, 0, 0, 0, time.UTC)
	old := &document.Document{CorrelationID: "offer-old", TenantID: "t1", CreatedBy: "oid-1", DocumentID: "OLD-1",
		Title: "Offer", PDFBlobPath: "documents/t1/offer-old.pdf", RequestHash: "rh", CreatedAt: at}
	if err := st.WriteOld(ctx, old); err != nil {
		t.Fatal(err)
	}
	got, err := st.Load(ctx, "t1", "offer-old")
	if err != nil || got.DocumentID != "OLD-1" || got.PDFBlobPath != old.PDFBlobPath {
		t.Fatalf("a document stored before: %+v, %v", got, err)
	}
	id := document.ID("t1", "offer-old")
	if _, _, err := st.Update(ctx, id, func(d *document.Document) (kernel.Change, error) {
		return document.StartESign(d, "g-1", at.Add(time.Second)), nil
	}); err != nil {
		t.Fatal(err)
	}
	if got, err = st.Load(ctx, "t1", "offer-old"); err != nil || got.ESignGroupID != "g-1" {
		t.Fatalf("updated: %+v, %v", got, err)
	}
	keys, err := st.RootKeys(ctx, "t1", "offer-old")
	if err != nil || len(keys) != 1 || keys[0] == "document" || !strings.HasPrefix(keys[0], "document-") {
		t.Fatalf("root rows %v, %v: want one, under document-<id>", keys, err)
	}
	if err := st.Create(ctx, old, document.Rendered(old)); apperr.KindOf(err) != apperr.KindConflict {
		t.Fatalf("a second create of the moved document: %v", err)
	}
	if _, err := st.Load(ctx, "t2", "offer-old"); apperr.KindOf(err) != apperr.KindNotFound {
		t.Fatalf("another tenant's load: %v", err)
	}
	d := &document.Document{CorrelationID: "offer-new", TenantID: "t1", CreatedAt: at}
	if err := st.Create(ctx, d, document.Rendered(d)); err != nil {
		t.Fatal(err)
	}
	if keys, err := st.RootKeys(ctx, "t1", "offer-new"); err != nil || len(keys) != 1 || !strings.HasPrefix(keys[0], "document-") {
		t.Fatalf("a new document's root rows %v, %v", keys, err)
	}
}
