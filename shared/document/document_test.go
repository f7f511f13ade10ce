package document

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/kernel"
)

// TestRenderedEvent: document.rendered carries the template, the hash and the sources.
func TestRenderedEvent(t *testing.T) {
	at := time.Date(2026, 11, 23, 7, 0, 0, 0, time.UTC)
	d := &Document{CorrelationID: "c-1", TemplatePath: "templates/offer.zip", TemplateName: "Offer letter", TemplateVersion: 2,
		PDFBlobPath: "documents/rendered/c-1.pdf", PDFHash: "sha256:ab", Pages: 3, DocumentID: "D-1", GeneratedBy: "crm",
		SourceSystem: "erp", CreatedAt: at}
	ch := Rendered(d)
	if len(ch.Events) != 1 || len(ch.Effects) != 0 {
		t.Fatalf("change %+v", ch)
	}
	ev := ch.Events[0]
	if ev.Kind != EvRendered || !ev.At.Equal(at) || ev.Slot != kernel.NoSlot {
		t.Fatalf("event %+v", ev)
	}
	for k, want := range map[string]any{"templatePath": "templates/offer.zip", "templateName": "Offer letter",
		"templateVersion": 2, "pdfBlobPath": "documents/rendered/c-1.pdf", "pdfHash": "sha256:ab", "pages": 3,
		"documentId": "D-1", "generatedBy": "crm", "sourceSystem": "erp"} {
		if ev.Data[k] != want {
			t.Errorf("data[%s] = %v, want %v", k, ev.Data[k], want)
		}
	}
}

// TestStartESignOnce: the signing session is recorded once; the same groupId again is an
// empty change.
func TestStartESignOnce(t *testing.T) {
	at := time.Date(2026, 11, 23, 7, 0, 0, 0, time.UTC)
	d := &Document{CorrelationID: "c-1"}
	ch := StartESign(d, "g-1", at)
	if d.ESignGroupID != "g-1" || len(ch.Events) != 1 || ch.Events[0].Kind != EvESignStarted || ch.Events[0].Data["groupId"] != "g-1" {
		t.Fatalf("first: %q %+v", d.ESignGroupID, ch)
	}
	if ch := StartESign(d, "g-1", at.Add(time.Second)); len(ch.Events) != 0 || d.ESignGroupID != "g-1" {
		t.Fatalf("again: %q %+v", d.ESignGroupID, ch)
	}
}

// TestStartDeliveryOnce: the delivery sessions are recorded once, as a copy of the ids; none
// records nothing; a second list is an empty change and leaves the first.
func TestStartDeliveryOnce(t *testing.T) {
	at := time.Date(2026, 11, 23, 7, 0, 0, 0, time.UTC)
	d := &Document{CorrelationID: "c-1"}
	if ch := StartDelivery(d, nil, at); len(ch.Events) != 0 || d.DeliveryIDs != nil {
		t.Fatalf("no ids: %v %+v", d.DeliveryIDs, ch)
	}
	ids := []string{"d-1", "d-2"}
	ch := StartDelivery(d, ids, at)
	if len(ch.Events) != 1 || ch.Events[0].Kind != EvDeliveryStarted || !slices.Equal(d.DeliveryIDs, ids) {
		t.Fatalf("first: %v %+v", d.DeliveryIDs, ch)
	}
	ids[0] = "changed"
	if d.DeliveryIDs[0] != "d-1" {
		t.Fatalf("the document shares the caller's slice: %v", d.DeliveryIDs)
	}
	for _, again := range [][]string{{"d-1", "d-2"}, {"d-3"}} {
		if ch := StartDelivery(d, again, at.Add(time.Second)); len(ch.Events) != 0 || !slices.Equal(d.DeliveryIDs, []string{"d-1", "d-2"}) {
			t.Fatalf("again %v: %v %+v", again, d.DeliveryIDs, ch)
		}
	}
}

// TestErrExists is a 409 document_exists naming the correlationId.
func TestErrExists(t *testing.T) {
	e, ok := apperr.As(ErrExists("c-9"))
	if !ok || e.Kind != apperr.KindConflict || e.Code != "document_exists" || !strings.Contains(e.Detail, "c-9") {
		t.Fatalf("%#v", e)
	}
}
