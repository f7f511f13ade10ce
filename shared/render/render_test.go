package render

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"github.com/esign-svc/esign/shared/blobpath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/document"
	"github.com/esign-svc/esign/shared/document/documentstore"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/licence"
	"github.com/esign-svc/esign/shared/licence/licencetest"
	"github.com/esign-svc/esign/shared/licensing"
)

// The render use case against Azurite, for what the end-to-end tests do not reach: a crash
// between the blob writes and the document row, blobs of another request, concurrent renders,
// an auto-trigger resumed after a failure, and the request's own checks and defaults.

// TestRenderAdoptsTheBlobsOfACrashedRun: a first run writes the manifest and the PDF but not
// the document row; the retry adopts the PDF it wrote (its hash, not a new render's), creates
// the row and records document.rendered once.
func TestRenderAdoptsTheBlobsOfACrashedRun(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	req := f.request(t)
	f.failFirst(t, req, &failingDocs{Store: f.docs, failCreate: true})
	name := blobpath.TenantName(f.by.TenantID, RenderedPrefix, req.Options.CorrelationID, ".pdf")
	pdf, meta, err := f.blobs.ReadAll(ctx, ContainerDocuments, name, 10<<20)
	if err != nil || meta[metaRequestHash] == "" || meta[metaPDFHash] != "sha256:"+hexSum(pdf) || meta[metaPages] != "3" {
		t.Fatalf("the first run's PDF: metadata %v (%v)", meta, err)
	}
	// The fill is deterministic; the first run's PDF is made to differ from the retry's (a
	// comment after its end, its metadata to match) so that only adopting it gives its hash.
	pdf = append(pdf, "\n% the first run's\n"...)
	meta[metaPDFHash] = "sha256:" + hexSum(pdf)
	if _, err := f.blobs.Put(ctx, ContainerDocuments, name, bytes.NewReader(pdf), "application/pdf", meta); err != nil {
		t.Fatal(err)
	}
	if _, err := f.docs.Load(ctx, f.by.TenantID, req.Options.CorrelationID); apperr.KindOf(err) != apperr.KindNotFound {
		t.Fatalf("document row after the crash: %v", err)
	}
	res, err := f.r.Render(ctx, f.by, req)
	if err != nil {
		t.Fatal(err)
	}
	if want := "sha256:" + hexSum(pdf); res.Document.PDFHash != want || meta[metaPDFHash] != want || !res.Created {
		t.Fatalf("retry: pdfHash %s created %t, want the first run's %s (metadata %s) and created",
			res.Document.PDFHash, res.Created, want, meta[metaPDFHash])
	}
	after, _, err := f.blobs.ReadAll(ctx, ContainerDocuments, name, 10<<20)
	if err != nil || !bytes.Equal(after, pdf) {
		t.Fatalf("the PDF changed on the retry (%v)", err)
	}
	stored, err := f.docs.Load(ctx, f.by.TenantID, req.Options.CorrelationID)
	if err != nil || stored.PDFHash != res.Document.PDFHash || stored.Pages != 3 {
		t.Fatalf("stored document %+v (%v)", stored, err)
	}
	if kinds := f.events(t, req.Options.CorrelationID); count(kinds, document.EvRendered) != 1 || len(kinds) != 1 {
		t.Fatalf("trail %v, want one document.rendered", kinds)
	}
}

// TestRenderRefusesTheBlobsOfAnotherRequest: blobs under the correlationId written by a render
// of another record are 409 document_exists and stay as they were; no document row is made.
func TestRenderRefusesTheBlobsOfAnotherRequest(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	if err := f.blobs.EnsureContainer(ctx, ContainerDocuments); err != nil {
		t.Fatal(err)
	}
	for _, only := range []string{"pdf and manifest", "pdf"} {
		t.Run(only, func(t *testing.T) {
			req := f.request(t)
			name := blobpath.TenantName(f.by.TenantID, RenderedPrefix, req.Options.CorrelationID, ".pdf")
			theirs := map[string][]byte{name: []byte("%PDF-1.7 another render's")}
			if only != "pdf" {
				theirs[name+".manifest.json"] = []byte(`{"fields":[]}`)
			}
			for n, b := range theirs {
				if _, err := f.blobs.Put(ctx, ContainerDocuments, n, bytes.NewReader(b), "application/octet-stream",
					map[string]string{metaRequestHash: "another-request"}); err != nil {
					t.Fatal(err)
				}
			}
			_, err := f.r.Render(ctx, f.by, req)
			wantCode(t, err, apperr.KindConflict, "document_exists")
			for n, b := range theirs {
				got, meta, err := f.blobs.ReadAll(ctx, ContainerDocuments, n, 1<<20)
				if err != nil || !bytes.Equal(got, b) || meta[metaRequestHash] != "another-request" {
					t.Fatalf("%s was changed: %q %v (%v)", n, got, meta, err)
				}
			}
			if _, err := f.docs.Load(ctx, f.by.TenantID, req.Options.CorrelationID); apperr.KindOf(err) != apperr.KindNotFound {
				t.Fatalf("document row: %v", err)
			}
		})
	}
}

// TestRenderConcurrentSameRequest: two renders of one request at once make one document and
// one document.rendered; both answer its pdfHash, one of them as created.
func TestRenderConcurrentSameRequest(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	req := f.request(t)
	var wg sync.WaitGroup
	results := make([]Result, 2)
	errs := make([]error, 2)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = f.r.Render(context.Background(), f.by, req)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if a, b := results[0].Document.PDFHash, results[1].Document.PDFHash; a != b || a == "" {
		t.Fatalf("pdfHash %q and %q", a, b)
	}
	if results[0].Created == results[1].Created {
		t.Fatalf("created %t and %t, want exactly one", results[0].Created, results[1].Created)
	}
	stored, err := f.docs.Load(context.Background(), f.by.TenantID, req.Options.CorrelationID)
	if err != nil || stored.PDFHash != results[0].Document.PDFHash {
		t.Fatalf("stored %+v (%v)", stored, err)
	}
	if kinds := f.events(t, req.Options.CorrelationID); count(kinds, document.EvRendered) != 1 {
		t.Fatalf("trail %v, want one document.rendered", kinds)
	}
}

// TestRenderAutoTriggerResumed: a run whose signing session was made but whose document update
// failed is resumed by the retry: the same groupId, not new, document.esign_started once.
func TestRenderAutoTriggerResumed(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	req := f.request(t)
	req.TemplateSettings = json.RawMessage(`{"esign":{"enabled":true,"signers":` + signers + `}}`)
	f.failFirst(t, req, &failingDocs{Store: f.docs, failUpdate: true})
	gid, err := f.sessions.GroupByCorrelation(ctx, f.by.TenantID, req.Options.CorrelationID)
	if err != nil {
		t.Fatalf("the first run's session: %v", err)
	}
	for i := 0; i < 2; i++ {
		res, err := f.r.Render(ctx, f.by, req)
		if err != nil {
			t.Fatal(err)
		}
		if res.ESign == nil || res.ESign.Session.GroupID != gid || res.ESignNew || res.Created {
			t.Fatalf("retry %d: esign %+v new %t created %t, want group %s resumed", i, res.ESign, res.ESignNew, res.Created, gid)
		}
		if res.Document.ESignGroupID != gid || len(res.ESign.Links) != 2 {
			t.Fatalf("retry %d: document group %q, %d links", i, res.Document.ESignGroupID, len(res.ESign.Links))
		}
	}
	if kinds := f.events(t, req.Options.CorrelationID); count(kinds, document.EvESignStarted) != 1 || count(kinds, document.EvRendered) != 1 {
		t.Fatalf("trail %v, want document.rendered and document.esign_started once each", kinds)
	}
}

// TestRenderAutoTriggerSessionOfAnotherDocument: a session made under the correlationId on
// another PDF makes the render's auto-trigger 409 session_exists.
func TestRenderAutoTriggerSessionOfAnotherDocument(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	req := f.request(t)
	other := f.by.TenantID + "/rtest/" + uuid.NewString() + ".pdf"
	pdf := samplePackage(t)["template.pdf"]
	if err := f.blobs.EnsureContainer(ctx, ContainerDocuments); err != nil {
		t.Fatal(err)
	}
	if _, err := f.blobs.Put(ctx, ContainerDocuments, other, bytes.NewReader(pdf), "application/pdf", nil); err != nil {
		t.Fatal(err)
	}
	var sg []esign.SignerRequest
	if err := json.Unmarshal([]byte(signers), &sg); err != nil {
		t.Fatal(err)
	}
	minutes := 60
	if _, err := f.esign.Create(ctx, f.by.TenantID, f.by.Actor, esign.CreateRequest{CorrelationID: req.Options.CorrelationID,
		DocumentID: "DOC-1", DocType: "agreement", PDFBlobPath: ContainerDocuments + "/" + other, PDFHash: "sha256:" + hexSum(pdf), SigningMode: esign.ModeParallel,
		ExpiresInMinutes: &minutes, Signers: sg}); err != nil {
		t.Fatal(err)
	}
	req.TemplateSettings = json.RawMessage(`{"esign":{"enabled":true,"signers":` + signers + `}}`)
	_, err := f.r.Render(ctx, f.by, req)
	wantCode(t, err, apperr.KindConflict, "session_exists")
}

// TestRenderRefusals: the request's own checks name the field at fault by its full path, and
// nothing is written.
func TestRenderRefusals(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, c := range []struct {
		name, field string
		edit        func(*Request)
	}{
		{"esign signer e-mail", "templateSettings.esign.signers[0].email", func(r *Request) {
			r.TemplateSettings = json.RawMessage(`{"esign":{"enabled":true,"signers":[{"slotIndex":0,"role":"employee","email":"nobody"}]}}`)
		}},
		{"delivery recipient e-mail", "templateSettings.delivery.recipients[0].email", func(r *Request) {
			r.TemplateSettings = json.RawMessage(`{"delivery":{"enabled":true,"recipients":[{"email":"nobody"}]}}`)
		}},
		{"esign signer locale", "templateSettings.esign.signers[0].locale", func(r *Request) {
			r.TemplateSettings = json.RawMessage(`{"esign":{"enabled":true,"signers":[{"slotIndex":0,"role":"employee","email":"e@example.com","locale":"de_DE"}]}}`)
		}},
		{"esign reminders max", "templateSettings.esign.reminders.max", func(r *Request) {
			r.TemplateSettings = json.RawMessage(`{"esign":{"enabled":true,"signers":[{"slotIndex":0,"role":"employee","email":"e@example.com"}],` +
				`"reminders":{"firstAfterHours":24,"everyHours":24,"max":11}}}`)
		}},
		{"esign reminders unknown key", "templateSettings.esign.reminders.firstAfterDays", func(r *Request) {
			r.TemplateSettings = json.RawMessage(`{"esign":{"enabled":true,"reminders":{"firstAfterDays":1}}}`)
		}},
		{"delivery reminders everyHours", "templateSettings.delivery.reminders.everyHours", func(r *Request) {
			r.TemplateSettings = json.RawMessage(`{"delivery":{"enabled":true,"recipients":[{"email":"r@example.com"}],` +
				`"reminders":{"firstAfterHours":24,"everyHours":0,"max":3}}}`)
		}},
		{"delivery reminders unknown key", "templateSettings.delivery.reminders.firstAfterDays", func(r *Request) {
			r.TemplateSettings = json.RawMessage(`{"delivery":{"enabled":true,"reminders":{"firstAfterDays":1}}}`)
		}},
		{"delivery recipient locale", "templateSettings.delivery.recipients[0].locale", func(r *Request) {
			r.TemplateSettings = json.RawMessage(`{"delivery":{"enabled":true,"recipients":[{"email":"r@example.com","locale":"ja"}]}}`)
		}},
		{"delivery without recipients", "templateSettings.delivery.recipients", func(r *Request) {
			r.TemplateSettings = json.RawMessage(`{"delivery":{"enabled":true}}`)
		}},
		{"title with a control character", "options.title", func(r *Request) { r.Options.Title = "Offer\u0007" }},
		{"title too long", "options.title", func(r *Request) { r.Options.Title = strings.Repeat("t", maxTitle+1) }},
		{"documentId too long", "options.documentId", func(r *Request) { r.Options.DocumentID = strings.Repeat("d", maxOption+1) }},
		{"documentIdTemplate of a line break", "options.documentIdTemplate", func(r *Request) {
			r.Options.DocumentIDTemplate = "{{notes}}"
			r.DataSource = withNotes(t, r.DataSource, "two\nlines")
		}},
		{"documentIdTemplate too long", "options.documentIdTemplate", func(r *Request) {
			r.Options.DocumentIDTemplate = "{{notes}}"
			r.DataSource = withNotes(t, r.DataSource, strings.Repeat("Ω", 129))
		}},
		{"correlationId form", "options.correlationId", func(r *Request) { r.Options.CorrelationID = "-not an id" }},
		{"correlationId too long", "options.correlationId", func(r *Request) { r.Options.CorrelationID = strings.Repeat("c", 129) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := f.request(t)
			c.edit(&req)
			_, err := f.r.Render(context.Background(), f.by, req)
			wantInvalid(t, err, apperr.CodeInvalidRequest, c.field)
			if req.Options.CorrelationID != "" && esign.ValidCorrelationID(req.Options.CorrelationID) {
				if _, err := f.docs.Load(context.Background(), f.by.TenantID, req.Options.CorrelationID); apperr.KindOf(err) != apperr.KindNotFound {
					t.Fatalf("a document was stored: %v", err)
				}
			}
		})
	}
}

// TestRenderDocumentDefaults: documentId from options.documentIdTemplate over the package's,
// the title from the package's title template, docType the package's name.
func TestRenderDocumentDefaults(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var rec map[string]any
	req := f.request(t)
	if err := json.Unmarshal(req.DataSource, &rec); err != nil {
		t.Fatal(err)
	}
	name, start := rec["employeeName"].(string), rec["startDate"].(string)
	for _, c := range []struct {
		name                       string
		opts                       Options
		documentID, title, docType string
	}{
		{"package defaults", Options{}, "OFFER-" + name + "-" + start, "Offer for " + name, "Offer letter"},
		{"options template", Options{DocumentIDTemplate: "HR/{{position}}/{{currency}}"}, "HR/Engineer/EUR", "Offer for " + name, "Offer letter"},
		{"options given", Options{DocumentIDTemplate: "HR/{{position}}", DocumentID: "D-1", Title: "Letter", DocType: "offer"}, "D-1", "Letter", "offer"},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := f.request(t)
			c.opts.CorrelationID = req.Options.CorrelationID
			req.Options = c.opts
			res, err := f.r.Render(context.Background(), f.by, req)
			if err != nil {
				t.Fatal(err)
			}
			d := res.Document
			if d.DocumentID != c.documentID || d.Title != c.title || d.DocType != c.docType {
				t.Fatalf("documentId %q title %q docType %q, want %q %q %q", d.DocumentID, d.Title, d.DocType, c.documentID, c.title, c.docType)
			}
			stored, err := f.docs.Load(context.Background(), f.by.TenantID, req.Options.CorrelationID)
			if err != nil || stored.DocumentID != c.documentID || stored.Title != c.title || stored.DocType != c.docType {
				t.Fatalf("stored %+v (%v)", stored, err)
			}
		})
	}
}

// TestRenderRequestHashIgnoresKeyOrder: the same record with its keys in another order is the
// same render (created false, same document); another value is 409 document_exists.
func TestRenderRequestHashIgnoresKeyOrder(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	req := f.request(t)
	first, err := f.r.Render(ctx, f.by, req)
	if err != nil || !first.Created {
		t.Fatalf("first render: created %t (%v)", first.Created, err)
	}
	var rec map[string]json.RawMessage
	if err := json.Unmarshal(req.DataSource, &rec); err != nil {
		t.Fatal(err)
	}
	var reordered bytes.Buffer // keys in reverse order
	keys := make([]string, 0, len(rec))
	for k := range rec {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	slices.Reverse(keys)
	reordered.WriteString("{")
	for i, k := range keys {
		if i > 0 {
			reordered.WriteString(",\n ")
		}
		kb, _ := json.Marshal(k)
		reordered.Write(kb)
		reordered.WriteString(": ")
		reordered.Write(rec[k])
	}
	reordered.WriteString("}")
	if bytes.Equal(reordered.Bytes(), req.DataSource) {
		t.Fatal("the record was not reordered")
	}
	again := req
	again.DataSource = reordered.Bytes()
	second, err := f.r.Render(ctx, f.by, again)
	if err != nil || second.Created || second.Document.PDFHash != first.Document.PDFHash {
		t.Fatalf("reordered record: created %t hash %v (%v)", second.Created, second.Document, err)
	}
	rec["position"] = json.RawMessage(`"Manager"`)
	changed, _ := json.Marshal(rec)
	again.DataSource = changed
	_, err = f.r.Render(ctx, f.by, again)
	wantCode(t, err, apperr.KindConflict, "document_exists")
	if kinds := f.events(t, req.Options.CorrelationID); len(kinds) != 1 {
		t.Fatalf("trail %v, want document.rendered alone", kinds)
	}
}

func hexSum(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TestRenderAutoTriggerDeliveryResumed: a run whose delivery sessions were made but whose
// document update failed is resumed by the retry: the same deliveryIds (a replay, which queues
// nothing new), document.delivery_started once.
func TestRenderAutoTriggerDeliveryResumed(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	req := f.request(t)
	req.TemplateSettings = json.RawMessage(`{"delivery":{"enabled":true,"recipients":[{"email":"r1@example.test"},{"email":"r2@example.test"}]}}`)
	f.failFirst(t, req, &failingDocs{Store: f.docs, failUpdate: true})
	made, err := f.deliveries.ListByCorrelation(ctx, f.by.TenantID, req.Options.CorrelationID)
	if err != nil || len(made) != 2 {
		t.Fatalf("the first run's deliveries: %d (%v)", len(made), err)
	}
	for i := 0; i < 2; i++ {
		res, err := f.r.Render(ctx, f.by, req)
		if err != nil {
			t.Fatal(err)
		}
		if res.Delivery == nil || !res.Delivery.Replayed || len(res.Delivery.DeliveryIDs) != 2 ||
			!slices.Equal(res.Document.DeliveryIDs, res.Delivery.DeliveryIDs) || res.DeliveryMode != "secure-email" {
			t.Fatalf("retry %d: delivery %+v, document ids %v", i, res.Delivery, res.Document.DeliveryIDs)
		}
		for _, id := range res.Delivery.DeliveryIDs {
			if !slices.ContainsFunc(made, func(d *delivery.Session) bool { return d.DeliveryID == id }) {
				t.Fatalf("retry %d: delivery %s was not the first run's", i, id)
			}
		}
	}
	if kinds := f.events(t, req.Options.CorrelationID); count(kinds, document.EvDeliveryStarted) != 1 {
		t.Fatalf("trail %v, want document.delivery_started once", kinds)
	}
}

// TestRenderDeliveryDocumentName: the file name a recipient sees comes from the title (or
// options.fileNameTemplate) as a valid delivery documentName: a long title of two-byte
// characters is kept whole up to 196 characters (not cut inside a character), path separators
// and line breaks become a dash and a space.
func TestRenderDeliveryDocumentName(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	greek := "a" + strings.Repeat("Ω", 150)
	for _, c := range []struct {
		name string
		opts Options
		want string
	}{
		{"two-byte title", Options{Title: greek}, greek + ".pdf"},
		{"longer than a name", Options{Title: strings.Repeat("Ω", 250)}, strings.Repeat("Ω", 196) + ".pdf"},
		{"separators", Options{Title: `Offer 1/2 \ draft`}, "Offer 1-2 - draft.pdf"},
		{"file name template with a text field", Options{FileNameTemplate: "{{position}} {{notes}}"}, "Engineer Works remotely on Fridays. Second line.pdf"},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := f.request(t)
			var rec map[string]any
			if err := json.Unmarshal(req.DataSource, &rec); err != nil {
				t.Fatal(err)
			}
			rec["notes"] = "Works remotely on Fridays.\nSecond line"
			req.DataSource, _ = json.Marshal(rec)
			c.opts.CorrelationID = req.Options.CorrelationID
			req.Options = c.opts
			req.TemplateSettings = json.RawMessage(`{"delivery":{"enabled":true,"recipients":[{"email":"r1@example.test"}]}}`)
			res, err := f.r.Render(context.Background(), f.by, req)
			if err != nil {
				t.Fatal(err)
			}
			made, err := f.deliveries.ListByCorrelation(context.Background(), f.by.TenantID, req.Options.CorrelationID)
			if err != nil || len(made) != 1 || len(res.Delivery.DeliveryIDs) != 1 {
				t.Fatalf("%d deliveries (%v)", len(made), err)
			}
			if made[0].DocumentName != c.want {
				t.Fatalf("documentName %q, want %q", made[0].DocumentName, c.want)
			}
		})
	}
}

// TestRenderDeliveryReminders: templateSettings.delivery.reminders reaches the stored delivery
// (issue 27) and puts it on the deliveries' reminder schedule at its first reminder.
func TestRenderDeliveryReminders(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	req := f.request(t)
	req.TemplateSettings = json.RawMessage(`{"delivery":{"enabled":true,"recipients":[{"email":"r1@example.test"}],` +
		`"reminders":{"firstAfterHours":24,"everyHours":48,"max":3}}}`)
	if _, err := f.r.Render(ctx, f.by, req); err != nil {
		t.Fatal(err)
	}
	made, err := f.deliveries.ListByCorrelation(ctx, f.by.TenantID, req.Options.CorrelationID)
	if err != nil || len(made) != 1 {
		t.Fatalf("%d deliveries (%v)", len(made), err)
	}
	if r := made[0].Reminders; r == nil || *r != (delivery.ReminderPolicy{FirstAfterHours: 24, EveryHours: 48, Max: 3}) {
		t.Fatalf("reminders %+v", r)
	}
	due, err := f.deliveries.Reminders().Due(ctx, made[0].CreatedAt.Add(24*time.Hour), 100)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(due, func(d kernel.Due) bool { return d.ID == made[0].DeliveryID }) {
		t.Fatalf("not on the reminder schedule: %v", due)
	}
}

// TestRenderConcurrentAutoTrigger: two renders of one request with templateSettings.esign at
// once make one signing session; both answer its groupId, one as new; esign_started once.
func TestRenderConcurrentAutoTrigger(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	req := f.request(t)
	req.TemplateSettings = json.RawMessage(`{"esign":{"enabled":true,"signers":` + signers + `}}`)
	var wg sync.WaitGroup
	results := make([]Result, 2)
	errs := make([]error, 2)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = f.r.Render(context.Background(), f.by, req)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	a, b := results[0], results[1]
	if a.ESign.Session.GroupID != b.ESign.Session.GroupID || a.ESignNew == b.ESignNew {
		t.Fatalf("groups %s %s, new %t %t: want one session, made once", a.ESign.Session.GroupID, b.ESign.Session.GroupID, a.ESignNew, b.ESignNew)
	}
	if kinds := f.events(t, req.Options.CorrelationID); count(kinds, document.EvESignStarted) != 1 {
		t.Fatalf("trail %v, want document.esign_started once", kinds)
	}
}

// withNotes is record with its notes set to notes.
func withNotes(t *testing.T, record json.RawMessage, notes string) json.RawMessage {
	t.Helper()
	var rec map[string]any
	if err := json.Unmarshal(record, &rec); err != nil {
		t.Fatal(err)
	}
	rec["notes"] = notes
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRenderLicenceFeatures: the licence gates what the render makes and only that: a render
// that only renders needs neither esign nor delivery; an auto-triggered signing session needs
// esign, auto-triggered deliveries need delivery (403 licence_feature_missing naming it, nothing
// stored).
func TestRenderLicenceFeatures(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	const (
		es = `"esign":{"enabled":true,"signers":` + signers + `}`
		dl = `"delivery":{"enabled":true,"recipients":[{"email":"reader@example.test"}]}`
	)
	for _, c := range []struct {
		name     string
		features []licence.Feature
		settings string
		missing  licence.Feature // "" when the render is allowed
	}{
		{"render only, neither feature", []licence.Feature{licence.FeatureWorkflow}, ``, ""},
		{"esign without esign", []licence.Feature{licence.FeatureDelivery}, `{` + es + `}`, licence.FeatureEsign},
		{"esign with esign", []licence.Feature{licence.FeatureEsign}, `{` + es + `}`, ""},
		{"delivery without delivery", []licence.Feature{licence.FeatureEsign}, `{` + dl + `}`, licence.FeatureDelivery},
		{"delivery with delivery", []licence.Feature{licence.FeatureDelivery}, `{` + dl + `}`, ""},
		{"both with esign only", []licence.Feature{licence.FeatureEsign}, `{` + es + `,` + dl + `}`, licence.FeatureDelivery},
		{"both with delivery only", []licence.Feature{licence.FeatureDelivery}, `{` + es + `,` + dl + `}`, licence.FeatureEsign},
		{"both with both", []licence.Feature{licence.FeatureEsign, licence.FeatureDelivery}, `{` + es + `,` + dl + `}`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := f.request(t)
			if c.settings != "" {
				req.TemplateSettings = json.RawMessage(c.settings)
			}
			by := f.by
			by.Licence = licencetest.New(t, c.features...)
			res, err := f.r.Render(ctx, by, req)
			if c.missing == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if (res.ESign != nil) != strings.Contains(c.settings, `"esign"`) {
					t.Fatalf("esign %+v for settings %s", res.ESign, c.settings)
				}
				return
			}
			wantCode(t, err, apperr.KindForbidden, licence.CodeFeatureMissing)
			if e, _ := apperr.As(err); e.Extra["feature"] != string(c.missing) {
				t.Fatalf("names %v, want %s", e.Extra["feature"], c.missing)
			}
			if _, err := f.docs.Load(ctx, f.by.TenantID, req.Options.CorrelationID); apperr.KindOf(err) != apperr.KindNotFound {
				t.Fatalf("a document was stored: %v", err)
			}
		})
	}
}

// TestRenderAutoTriggerCarriesTheTitle: the session a render starts carries the document's
// title (options.title, else the package's title for the record) for its certificate; the
// docType stays the docType.
func TestRenderAutoTriggerCarriesTheTitle(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	for _, tc := range []struct{ name, title, want string }{
		{"options.title", "Offer — Zoë, Engineering", "Offer — Zoë, Engineering"},
		{"the package's title", "", "Offer for Zoë Ελένη"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := f.request(t)
			req.Options.Title = tc.title
			req.TemplateSettings = json.RawMessage(`{"esign":{"enabled":true,"signers":` + signers + `}}`)
			res, err := f.r.Render(ctx, f.by, req)
			if err != nil {
				t.Fatal(err)
			}
			if res.Document.Title != tc.want || res.ESign == nil {
				t.Fatalf("document title %q, esign %+v", res.Document.Title, res.ESign)
			}
			s, _, err := f.sessions.Load(ctx, res.ESign.Session.GroupID)
			if err != nil {
				t.Fatal(err)
			}
			if s.DocumentTitle != tc.want || s.Title() != tc.want || s.DocType != res.Document.DocType {
				t.Fatalf("session title %q (shown %q), docType %q; want %q and %q", s.DocumentTitle, s.Title(), s.DocType, tc.want, res.Document.DocType)
			}
		})
	}
}

// refusing is a licensing service that refuses one feature (licensing.Validator) and records
// what it was asked.
type refusing struct {
	feature licence.Feature
	asked   []string
}

func (v *refusing) Validate(_ context.Context, tenant string, f licence.Feature, corr string) error {
	v.asked = append(v.asked, tenant+"/"+string(f)+"/"+corr)
	if f == v.feature {
		return apperr.New(apperr.KindForbidden, licensing.CodeRefused, "refused")
	}
	return nil
}

// A render whose auto-trigger needs a feature the licensing service refuses is 403
// licence_refused before the document is stored; one that only renders does not ask it.
func TestRenderAsksTheLicensingService(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	v := &refusing{feature: licence.FeatureEsign}
	r := *f.r
	r.Licensing = v
	req := f.request(t)
	req.TemplateSettings = json.RawMessage(`{"esign":{"enabled":true,"signers":` + signers + `}}`)
	_, err := r.Render(ctx, f.by, req)
	wantCode(t, err, apperr.KindForbidden, licensing.CodeRefused)
	if _, err := f.docs.Load(ctx, f.by.TenantID, req.Options.CorrelationID); apperr.KindOf(err) != apperr.KindNotFound {
		t.Fatalf("a document was stored: %v", err)
	}
	if len(v.asked) != 1 || v.asked[0] != f.by.TenantID+"/esign/"+req.Options.CorrelationID {
		t.Fatalf("asked %v", v.asked)
	}
	v.asked = nil
	plain := f.request(t)
	if _, err := r.Render(ctx, f.by, plain); err != nil || len(v.asked) != 0 {
		t.Fatalf("render only: %v, asked %v", err, v.asked)
	}
}

// loadCounting counts the document reads of a render.
type loadCounting struct {
	*documentstore.Store
	loads atomic.Int64
}

func (d *loadCounting) Load(ctx context.Context, tenant, cid string) (*document.Document, error) {
	d.loads.Add(1)
	return d.Store.Load(ctx, tenant, cid)
}

// TestRenderWriteFirst: a renderer with WriteFirst (the batch record job's, issue 26) stores a
// new document without reading for an earlier run first, and a second run of the same render
// still finds the first's document (created false, its hash, one document.rendered).
func TestRenderWriteFirst(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	docs := &loadCounting{Store: f.docs}
	r := *f.r
	r.Store, r.WriteFirst = docs, true
	req := f.request(t)
	first, err := r.Render(ctx, f.by, req)
	if err != nil || !first.Created {
		t.Fatalf("first run: %+v %v", first, err)
	}
	if n := docs.loads.Load(); n != 0 {
		t.Fatalf("a new document was read %d times before it was written", n)
	}
	again, err := r.Render(ctx, f.by, req)
	if err != nil || again.Created || again.Document.PDFHash != first.Document.PDFHash {
		t.Fatalf("second run: %+v %v, want the first's document", again, err)
	}
	if kinds := f.events(t, req.Options.CorrelationID); count(kinds, document.EvRendered) != 1 {
		t.Fatalf("trail %v, want one document.rendered", kinds)
	}
}
