package dispatchjob

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pdfcpu/pdfcpu/pkg/api"

	"github.com/esign-svc/esign/shared/apptest"
	"github.com/esign-svc/esign/shared/azure/blobstore"
	"github.com/esign-svc/esign/shared/dispatch"
	"github.com/esign-svc/esign/shared/document"
	"github.com/esign-svc/esign/shared/licence"
	"github.com/esign-svc/esign/shared/licence/licencetest"
	"github.com/esign-svc/esign/shared/licensing"
	"github.com/esign-svc/esign/shared/pii"
	"github.com/esign-svc/esign/shared/queues"
	"github.com/esign-svc/esign/shared/template"
)

// records is every record of the batch in index order.
func (e *env) records(t *testing.T, batchID string) []dispatch.Record {
	t.Helper()
	p, err := e.Batches().Records(context.Background(), batchID, "", "", 100)
	if err != nil {
		t.Fatal(err)
	}
	return p.Records
}

func (e *env) eventCount(t *testing.T, batchID, kind string) int {
	t.Helper()
	evs, err := e.Batches().Events(context.Background(), batchID)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ev := range evs {
		if ev.Kind == kind {
			n++
		}
	}
	return n
}

// TestBatchCompletes runs a READY batch with secure-email delivery through the jobs: one PDF
// per record under its fileNameTemplate name, each hashing to its pdfHash, with a document row
// naming the batch; one delivery session per recipientEmail entry, found by the record's
// correlationId, names aligned; then completed, the submitter e-mailed once. Redelivered
// record, finish and notice messages change nothing and add no output.
func TestBatchCompletes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	recs := []map[string]any{e.offer(0), e.offer(1), e.offer(2)}
	recs[0]["recipientEmail"], recs[0]["recipientName"] = "a@x.test; b@x.test", "Ann;Bob"
	recs[1]["recipientEmail"] = "c@x.test"
	recs[2]["recipientEmail"], recs[2]["recipientName"] = "d@x.test;e@x.test", ";Eve"
	s := dispatch.Settings{Mode: dispatch.ModeIndividual, FileNameTemplate: "Offer {{employeeName}} {BATCHID}-{BATCHID_1}",
		DeliveryMode: dispatch.DeliverySecureEmail, ExpiresInHours: 48, GeneratedBy: "tests"}
	b := e.batch(t, recs, s, false, func(b *dispatch.Batch, _ []dispatch.Record) {
		b.SubmitterEmailEnc = must(e.Cipher.EncryptString("sub@x.test", dispatch.SubmitterAAD(b.BatchID)))
	})
	finishes, invites := e.run(t, b)
	if len(finishes) != 1 || invites != 5 {
		t.Fatalf("%d finishes, %d invitations", len(finishes), invites)
	}
	got := must(e.Batches().Load(ctx, b.BatchID))
	if got.State != dispatch.StateCompleted || got.ProcessedCount != 3 || got.ErrorCount != 0 {
		t.Fatalf("batch %s processed %d errors %d", got.State, got.ProcessedCount, got.ErrorCount)
	}
	names := []string{"Offer Person 0 0-1.pdf", "Offer Person 1 1-2.pdf", "Offer Person 2 2-3.pdf"}
	wantNames := [][]string{{"Ann", "Bob"}, {""}, {"", "Eve"}}
	manifest := "" // the batch's one field manifest (issue 26)
	for i, r := range e.records(t, b.BatchID) {
		if r.State != dispatch.RecordDone || r.CorrelationID != b.CorrelationID+"-"+string(rune('1'+i)) {
			t.Fatalf("record %d: %s %q %s", i, r.State, r.CorrelationID, r.Error)
		}
		if want := "documents/" + b.TenantID + "/dispatch/" + b.BatchID + "/" + names[i]; r.PDFBlobPath != want {
			t.Fatalf("record %d path %s, want %s", i, r.PDFBlobPath, want)
		}
		sum := sha256.Sum256(e.Read(r.PDFBlobPath))
		if r.PDFHash != "sha256:"+hex.EncodeToString(sum[:]) {
			t.Fatalf("record %d: pdfHash %s does not match its blob", i, r.PDFHash)
		}
		d := must(e.Documents().Load(ctx, b.TenantID, r.CorrelationID))
		if d.ReferenceID != b.BatchID || d.PDFBlobPath != r.PDFBlobPath || d.GeneratedBy != "tests" {
			t.Fatalf("document %+v", d)
		}
		if manifest == "" {
			manifest = d.ManifestPath
		}
		if d.ManifestPath != manifest || !strings.HasPrefix(d.ManifestPath, "documents/"+b.TenantID+"/dispatch/"+b.BatchID+"/manifest-") {
			t.Fatalf("record %d: manifest %s, want the batch folder's one (%s)", i, d.ManifestPath, manifest)
		}
		sessions := must(e.Deliveries().ListByCorrelation(ctx, tenant, r.CorrelationID))
		if len(sessions) != len(wantNames[i]) || len(r.DeliveryIDs) != len(sessions) {
			t.Fatalf("record %d: %d sessions, %d ids", i, len(sessions), len(r.DeliveryIDs))
		}
		for _, s := range sessions {
			j := -1
			for k, id := range r.DeliveryIDs {
				if id == s.DeliveryID {
					j = k
				}
			}
			if j < 0 || s.RecipientName != wantNames[i][j] || s.ExpiresAt.Sub(s.CreatedAt).Hours() != 48 {
				t.Fatalf("record %d session %d: name %q expires %v", i, j, s.RecipientName, s.ExpiresAt.Sub(s.CreatedAt))
			}
		}
	}
	rows := must(e.Outbox().List(ctx))
	if len(rows) != 1 || rows[0].Recipient != "sub@x.test" || !strings.Contains(rows[0].Text, "Outcome: completed") {
		t.Fatalf("outbox %+v", rows)
	}
	// Redeliveries: a record, the finish, the notice.
	if r := deliver(t, e.job.HandleRecord, dispatch.RecordMessage{BatchID: b.BatchID, TenantID: tenant, Index: 1}); r.Count() != 0 {
		t.Fatalf("redelivered record: %v", r.Outputs)
	}
	if r := deliver(t, e.job.HandleFinish, dispatch.BatchMessage{BatchID: b.BatchID, TenantID: tenant}); r.Count() != 0 {
		t.Fatalf("redelivered finish: %v", r.Outputs)
	}
	deliver(t, e.job.HandleNotify, dispatch.NotifyMessage{BatchID: b.BatchID, TenantID: tenant, Kind: dispatch.NoticeFinished})
	after := must(e.Batches().Load(ctx, b.BatchID))
	if after.ProcessedCount != 3 || after.ETag != got.ETag || len(must(e.Outbox().List(ctx))) != 1 {
		t.Fatalf("redeliveries changed the batch (%d processed) or sent again", after.ProcessedCount)
	}
	if e.eventCount(t, b.BatchID, dispatch.EvNoticeSent) != 1 || e.eventCount(t, b.BatchID, dispatch.EvCompleted) != 1 {
		t.Fatal("notice or completion not audited once")
	}
}

// TestRedeliveredRecordWhileProcessing delivers a record message twice before the batch ends:
// the second changes no counter and adds no output. The fan-out names the two records in one
// message (issue 26: it used to send one message per record); a message of one record, as
// queued before, is still served.
func TestRedeliveredRecordWhileProcessing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	b := e.batch(t, []map[string]any{e.offer(0), e.offer(1)}, dispatch.Settings{Mode: dispatch.ModeIndividual}, false, nil)
	r := deliver(t, e.job.HandleDispatch, dispatch.BatchMessage{BatchID: b.BatchID, TenantID: tenant})
	if out := r.Messages(queues.DispatchRecord.Binding()); len(out) != 1 || !strings.Contains(string(out[0]), `"indexes":[0,1]`) {
		t.Fatalf("record messages %s", out)
	}
	msg := dispatch.RecordMessage{BatchID: b.BatchID, TenantID: tenant, Index: 0}
	deliver(t, e.job.HandleRecord, msg)
	before := must(e.Batches().Load(ctx, b.BatchID))
	if r := deliver(t, e.job.HandleRecord, msg); r.Count() != 0 {
		t.Fatalf("outputs %v", r.Outputs)
	}
	again := must(e.Batches().Load(ctx, b.BatchID))
	if before.ProcessedCount != 1 || again.ProcessedCount != 1 || again.ETag != before.ETag {
		t.Fatalf("processed %d then %d", before.ProcessedCount, again.ProcessedCount)
	}
	// A redelivered dispatch message of the processing batch fans out only the pending record.
	r = deliver(t, e.job.HandleDispatch, dispatch.BatchMessage{BatchID: b.BatchID, TenantID: tenant})
	if out := r.Messages(queues.DispatchRecord.Binding()); len(out) != 1 || !strings.Contains(string(out[0]), `"indexes":[1]`) {
		t.Fatalf("fan-out again: %s", out)
	}
}

// TestFailedRecordsPartiallyFail: a record whose data does not decrypt and one the host gave
// up on (the poison handler) fail with their reasons while the others complete; the combined
// PDF (well-formed by qpdf) holds the done records' pages in index order.
func TestFailedRecordsPartiallyFail(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	recs := []map[string]any{e.offer(0), e.offer(1), e.offer(2), e.offer(3)}
	b := e.batch(t, recs, dispatch.Settings{Mode: dispatch.ModeCombined}, false, func(b *dispatch.Batch, rs []dispatch.Record) {
		rs[1].DataEnc = must(e.Cipher.Encrypt([]byte(`{}`), pii.AAD("another", "record", "1")))
	})
	// Record 3's message was poisoned before the fan-out reached it.
	deliver(t, e.job.HandleDispatch, dispatch.BatchMessage{BatchID: b.BatchID, TenantID: tenant})
	if r := deliver(t, e.job.HandleRecordPoison, dispatch.RecordMessage{BatchID: b.BatchID, TenantID: tenant, Index: 3}); r.Count() != 0 {
		t.Fatalf("poison outputs %v", r.Outputs)
	}
	finishes, _ := e.run(t, b)
	if len(finishes) != 1 {
		t.Fatalf("%d finishes", len(finishes))
	}
	got := must(e.Batches().Load(ctx, b.BatchID))
	if got.State != dispatch.StatePartiallyFailed || got.ProcessedCount != 4 || got.ErrorCount != 2 {
		t.Fatalf("batch %s processed %d errors %d", got.State, got.ProcessedCount, got.ErrorCount)
	}
	rs := e.records(t, b.BatchID)
	if rs[1].Error != ReasonUnreadable || rs[3].Error != ReasonRetriesExhausted || rs[0].State != dispatch.RecordDone || rs[2].State != dispatch.RecordDone {
		t.Fatalf("records %+v", rs)
	}
	if got.CombinedPath != "documents/"+b.TenantID+"/dispatch/"+b.BatchID+"/combined.pdf" {
		t.Fatalf("combined path %q", got.CombinedPath)
	}
	combined := e.Read(got.CombinedPath)
	pages := 0
	for _, i := range []int{0, 2} {
		n, err := api.PageCount(bytes.NewReader(e.Read(rs[i].PDFBlobPath)), nil)
		if err != nil {
			t.Fatal(err)
		}
		pages += n
	}
	if n, err := api.PageCount(bytes.NewReader(combined), nil); err != nil || n != pages {
		t.Fatalf("combined has %d pages, want %d (%v)", n, pages, err)
	}
	if out, err := exec.Command("qpdf", "--check", writeTemp(t, combined)).CombinedOutput(); err != nil {
		t.Fatalf("qpdf --check: %v\n%s", err, out)
	}
	text := pdfText(t, combined)
	if i0, i2 := strings.Index(text, "Person 0"), strings.Index(text, "Person 2"); i0 < 0 || i2 < i0 || strings.Contains(text, "Person 1") {
		t.Fatalf("combined text order: %d %d", i0, i2)
	}
	if e.eventCount(t, b.BatchID, dispatch.EvNoticeSkipped) != 1 {
		t.Fatal("the submitter's notice without an address was not recorded as skipped")
	}
}

func writeTemp(t *testing.T, pdf []byte) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "c.pdf")
	if err := os.WriteFile(f, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

func pdfText(t *testing.T, pdf []byte) string {
	t.Helper()
	out, err := exec.Command("pdftotext", writeTemp(t, pdf), "-").Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	return string(out)
}

// TestZipBundle bundles the records' PDFs into bundles/<batchId>.zip, in index order, each entry
// equal to its PDF and named by the fileNameTemplate as written (no "_<n>" appended, the
// letters kept); the record the intake found second of an equal name is "<name> (2).pdf"; the
// records are fanned out and listed in pages of two.
func TestZipBundle(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.job.Page = 2 // two fan-out pages, two listing pages
	recs := []map[string]any{e.offer(0), e.offer(1), e.offer(2)}
	recs[0]["employeeName"], recs[1]["employeeName"], recs[2]["employeeName"] = "Zoë Ærø", "Jürgen Groß", "Zoë Ærø"
	b := e.batch(t, recs, dispatch.Settings{Mode: dispatch.ModeIndividual, ZipBundle: true, FileNameTemplate: "Angebot {{employeeName}}"}, false,
		func(_ *dispatch.Batch, rs []dispatch.Record) { rs[2].NameSeq = 2 })
	e.run(t, b)
	got := must(e.Batches().Load(context.Background(), b.BatchID))
	if got.State != dispatch.StateCompleted || got.BundlePath != "bundles/"+b.TenantID+"/"+b.BatchID+".zip" {
		t.Fatalf("%s %q %+v", got.State, got.BundlePath, e.records(t, b.BatchID))
	}
	raw := e.Read(got.BundlePath)
	zr, err := zip.NewReader(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		t.Fatal(err)
	}
	rs := e.records(t, b.BatchID)
	if len(zr.File) != len(rs) {
		t.Fatalf("%d entries", len(zr.File))
	}
	for i, f := range zr.File {
		if want := []string{"Angebot Zoë Ærø.pdf", "Angebot Jürgen Groß.pdf", "Angebot Zoë Ærø (2).pdf"}[i]; f.Name != want || !strings.HasSuffix(rs[i].PDFBlobPath, "/"+want) {
			t.Fatalf("entry %d %s, record %s", i, f.Name, rs[i].PDFBlobPath)
		}
		rc, _ := f.Open()
		body, _ := io.ReadAll(rc)
		rc.Close()
		if !bytes.Equal(body, e.Read(rs[i].PDFBlobPath)) {
			t.Fatalf("entry %d differs from its PDF", i)
		}
	}
}

// TestApproversNotice e-mails a pending batch's summary to its approvers once, or to the
// deployment's approvers when the batch names none; nothing in the logs names an address.
func TestApproversNotice(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	e.job.Approvers = []string{"ops@x.test"}
	named := e.batch(t, []map[string]any{e.offer(0)}, dispatch.Settings{Mode: dispatch.ModeIndividual}, true, func(b *dispatch.Batch, _ []dispatch.Record) {
		list := must(json.Marshal([]string{"ap1@x.test", "ap2@x.test"}))
		b.ApproversEnc = must(e.Cipher.Encrypt(list, dispatch.ApproversAAD(b.BatchID)))
	})
	unnamed := e.batch(t, []map[string]any{e.offer(1)}, dispatch.Settings{Mode: dispatch.ModeIndividual}, true, nil)
	for _, b := range []*dispatch.Batch{named, unnamed, named} {
		r := deliver(t, e.job.HandleNotify, dispatch.NotifyMessage{BatchID: b.BatchID, TenantID: tenant, Kind: dispatch.NoticeApprovers})
		if strings.Contains(strings.Join(r.Logs, "\n"), "@") {
			t.Fatalf("logs name an address: %v", r.Logs)
		}
	}
	var to []string
	for _, row := range must(e.Outbox().List(ctx)) {
		if row.Kind != KindApprovers || !strings.Contains(row.Text, "pending approval") && !strings.Contains(row.Text, "waits for a decision") {
			t.Fatalf("row %+v", row)
		}
		to = append(to, row.Recipient)
	}
	if strings.Join(to, ",") != "ap1@x.test,ap2@x.test,ops@x.test" {
		t.Fatalf("sent to %v", to)
	}
	// A dispatch message of a batch waiting for approval starts nothing.
	if r := deliver(t, e.job.HandleDispatch, dispatch.BatchMessage{BatchID: named.BatchID, TenantID: tenant}); r.Count() != 0 {
		t.Fatalf("outputs %v", r.Outputs)
	}
	if got := must(e.Batches().Load(ctx, named.BatchID)); got.State != dispatch.StatePendingApproval {
		t.Fatalf("state %s", got.State)
	}
}

// TestFinishPoisonEndsTheBatch gives a combined batch's finish to the poison handler, as the
// host does after the finish kept failing: the batch ends (completed: every record was
// processed) without the combined PDF, batch.artifact_failed recorded once, the submitter's
// notice queued; the poison message delivered again changes nothing.
func TestFinishPoisonEndsTheBatch(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	b := e.batch(t, []map[string]any{e.offer(0), e.offer(1)}, dispatch.Settings{Mode: dispatch.ModeCombined}, false, nil)
	r := deliver(t, e.job.HandleDispatch, dispatch.BatchMessage{BatchID: b.BatchID, TenantID: b.TenantID})
	var finish []json.RawMessage
	for _, m := range r.Messages(queues.DispatchRecord.Binding()) {
		finish = append(finish, deliver(t, e.job.HandleRecord, m).Messages(queues.DispatchFinish.Binding())...)
	}
	if len(finish) != 1 {
		t.Fatalf("%d finish messages", len(finish))
	}
	p := deliver(t, e.job.HandleFinishPoison, finish[0])
	got := must(e.Batches().Load(context.Background(), b.BatchID))
	if got.State != dispatch.StateCompleted || got.CombinedPath != "" || len(p.Messages(queues.DispatchNotify.Binding())) != 1 {
		t.Fatalf("%s combined %q notices %d", got.State, got.CombinedPath, len(p.Messages(queues.DispatchNotify.Binding())))
	}
	if n := e.eventCount(t, b.BatchID, EvArtifactFailed); n != 1 {
		t.Fatalf("%d %s events", n, EvArtifactFailed)
	}
	again := deliver(t, e.job.HandleFinishPoison, finish[0])
	if again.Count() != 0 || e.eventCount(t, b.BatchID, EvArtifactFailed) != 1 {
		t.Fatal("the poison message delivered again wrote or queued something")
	}
}

// TestRecordsTheLicenceNoLongerAllows: a batch accepted with secure-email delivery whose licence
// lost delivery (or dispatch) before its records ran: every record fails with
// licence_refused: licence_feature_missing, nothing is rendered or delivered, the batch ends partially-failed.
func TestRecordsTheLicenceNoLongerAllows(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		has  []licence.Feature
	}{
		{"without delivery", []licence.Feature{licence.FeatureDispatch, licence.FeatureEsign}},
		{"without dispatch", []licence.Feature{licence.FeatureDelivery}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.job.Licence = licencetest.New(t, c.has...)
			recs := []map[string]any{e.offer(0), e.offer(1)}
			for _, r := range recs {
				r["recipientEmail"] = "a@x.test"
			}
			b := e.batch(t, recs, dispatch.Settings{Mode: dispatch.ModeIndividual, DeliveryMode: dispatch.DeliverySecureEmail, ExpiresInHours: 48}, false, nil)
			_, invites := e.run(t, b)
			if invites != 0 {
				t.Fatalf("%d invitations", invites)
			}
			got := must(e.Batches().Load(context.Background(), b.BatchID))
			if got.State != dispatch.StatePartiallyFailed || got.ErrorCount != 2 {
				t.Fatalf("batch %s errors %d", got.State, got.ErrorCount)
			}
			for _, r := range e.records(t, b.BatchID) {
				if r.Error != "licence_refused: "+licence.CodeFeatureMissing || r.PDFBlobPath != "" {
					t.Fatalf("record %+v", r)
				}
			}
		})
	}
}

// seenRecords is a Producer that keeps a copy of every record it is given.
type seenRecords struct {
	Producer
	mu   sync.Mutex
	seen []map[string]any
}

func (s *seenRecords) Produce(ctx context.Context, pkg *template.Package, record map[string]any, d *document.Document) (*document.Document, bool, error) {
	s.mu.Lock()
	s.seen = append(s.seen, maps.Clone(record))
	s.mu.Unlock()
	return s.Producer.Produce(ctx, pkg, record, d)
}

// TestDeclaredRecipientsArePrintedAndDelivered: a template that declares recipientName as a
// field gets it in the record it renders (printed), and the record's recipientEmail and
// recipientName are still its delivery's recipient; the undeclared recipientEmail stays out of
// the rendered record.
func TestDeclaredRecipientsArePrintedAndDelivered(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	yaml := bytes.Replace(apptest.SampleFile(t, "template.yaml"), []byte("fields:\n"), []byte("fields:\n  - key: recipientName\n    type: string\n    label: Recipient\n"), 1)
	e.pkg = e.PackageZip(map[string][]byte{"template.yaml": yaml})
	seen := &seenRecords{Producer: e.job.Producer}
	e.job.Producer = seen
	rec := e.offer(0)
	rec["recipientEmail"], rec["recipientName"] = "ann@x.test", "Ann Example"
	b := e.batch(t, []map[string]any{rec}, dispatch.Settings{Mode: dispatch.ModeIndividual, DeliveryMode: dispatch.DeliverySecureEmail, ExpiresInHours: 24}, false, nil)
	if _, invites := e.run(t, b); invites != 1 {
		t.Fatalf("%d invitations", invites)
	}
	if len(seen.seen) != 1 || seen.seen[0]["recipientName"] != "Ann Example" || seen.seen[0]["recipientEmail"] != nil {
		t.Fatalf("rendered records %v", seen.seen)
	}
	r := e.records(t, b.BatchID)[0]
	sessions := must(e.Deliveries().ListByCorrelation(ctx, tenant, r.CorrelationID))
	if r.State != dispatch.RecordDone || len(sessions) != 1 || sessions[0].RecipientName != "Ann Example" {
		t.Fatalf("record %s %q, sessions %+v", r.State, r.Error, sessions)
	}
}

// TestRecordGroupsFromEightWorkersTwice: a batch of 4 groups and 5 records fans out one record
// message per group of its Group() records (25 now; 10 for a batch stored before, whose counter
// shards count groups of 10); each message is handled twice from 8 workers at once; every
// record is counted once, and the batch finishes completed once, from the one finish message
// the records asked for (issue 26).
func TestRecordGroupsFromEightWorkersTwice(t *testing.T) {
	t.Parallel()
	for _, group := range []int{dispatch.RecordsPerMessage, dispatch.LegacyRecordsPerMessage} {
		t.Run(strconv.Itoa(group), func(t *testing.T) {
			t.Parallel()
			recordGroupsTwice(t, group)
		})
	}
}

func recordGroupsTwice(t *testing.T, group int) {
	e := newEnv(t)
	ctx := context.Background()
	n := 4*group + 5
	recs := make([]map[string]any, n)
	for i := range recs {
		recs[i] = e.offer(i)
	}
	b := e.batch(t, recs, dispatch.Settings{Mode: dispatch.ModeIndividual}, false, func(b *dispatch.Batch, _ []dispatch.Record) {
		if group != dispatch.RecordsPerMessage {
			b.RecordsPerMessage = group
		}
	})
	r := deliver(t, e.job.HandleDispatch, dispatch.BatchMessage{BatchID: b.BatchID, TenantID: tenant})
	msgs := r.Messages(queues.DispatchRecord.Binding())
	last := fmt.Sprintf(`"indexes":[%d,%d,%d,%d,%d]`, n-5, n-4, n-3, n-2, n-1)
	if len(msgs) != 5 || !strings.Contains(string(msgs[4]), last) {
		t.Fatalf("record messages %s", msgs)
	}
	work := make(chan json.RawMessage)
	var mu sync.Mutex
	var finishMsgs []json.RawMessage
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for m := range work {
				r := deliver(t, e.job.HandleRecord, m)
				mu.Lock()
				finishMsgs = append(finishMsgs, r.Messages(queues.DispatchFinish.Binding())...)
				mu.Unlock()
			}
		}()
	}
	for range 2 {
		for _, m := range msgs {
			work <- m
		}
	}
	close(work)
	wg.Wait()
	got := must(e.Batches().Load(ctx, b.BatchID))
	if got.ProcessedCount != n || got.ErrorCount != 0 || len(finishMsgs) != 1 || got.Group() != group {
		t.Fatalf("processed %d errors %d, %d finish messages, group %d", got.ProcessedCount, got.ErrorCount, len(finishMsgs), got.Group())
	}
	if k := e.eventCount(t, b.BatchID, dispatch.EvRecordProcessed); k != n {
		t.Fatalf("%d record events", k)
	}
	for range 2 {
		deliver(t, e.job.HandleFinish, finishMsgs[0])
	}
	got = must(e.Batches().Load(ctx, b.BatchID))
	if got.State != dispatch.StateCompleted || got.ProcessedCount != n || e.eventCount(t, b.BatchID, dispatch.EvCompleted) != 1 {
		t.Fatalf("batch %s processed %d, %d completed events", got.State, got.ProcessedCount, e.eventCount(t, b.BatchID, dispatch.EvCompleted))
	}
}

// TestBatchMeteredAtFinish: the record jobs meter nothing; the finish meters every record made
// (the failed one left out), MeterPage records to a licence-usage message, listed a page at a
// time; a finish redelivered after the batch ended meters nothing again.
func TestBatchMeteredAtFinish(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.job.Meter = licensing.Meter{On: true, Now: e.Now}
	e.job.MeterPage, e.job.Page = 2, 2
	offers := []map[string]any{e.offer(0), e.offer(1), e.offer(2), e.offer(3), e.offer(4)}
	b := e.batch(t, offers, dispatch.Settings{Mode: dispatch.ModeIndividual}, false,
		func(_ *dispatch.Batch, recs []dispatch.Record) { recs[1].DataEnc = "not a ciphertext" })
	var recordMsgs, finishMsgs []json.RawMessage
	pages := []any{dispatch.BatchMessage{BatchID: b.BatchID, TenantID: tenant}}
	for len(pages) > 0 {
		r := deliver(t, e.job.HandleDispatch, pages[0])
		pages = pages[1:]
		recordMsgs = append(recordMsgs, r.Messages(queues.DispatchRecord.Binding())...)
		for _, n := range r.Messages(queues.Dispatch.Binding()) {
			pages = append(pages, n)
		}
	}
	for _, m := range recordMsgs {
		r := deliver(t, e.job.HandleRecord, m)
		if n := len(r.Messages(queues.LicenceUsage.Binding())); n != 0 {
			t.Fatalf("a record job metered (%d messages)", n)
		}
		finishMsgs = append(finishMsgs, r.Messages(queues.DispatchFinish.Binding())...)
	}
	if len(finishMsgs) != 1 {
		t.Fatalf("%d finish messages", len(finishMsgs))
	}
	usage := deliver(t, e.job.HandleFinish, finishMsgs[0]).Messages(queues.LicenceUsage.Binding())
	var ids []string
	for _, raw := range usage {
		var m licensing.UsageMessage
		if err := json.Unmarshal(raw, &m); err != nil || m.Validate() != nil || len(m.All()) > 2 {
			t.Fatalf("%s: %v %v", raw, err, m.Validate())
		}
		for _, u := range m.All() {
			ids = append(ids, u.ID)
		}
	}
	want := []string{"batch.record:" + b.BatchID + ":0", "batch.record:" + b.BatchID + ":2", "batch.record:" + b.BatchID + ":3", "batch.record:" + b.BatchID + ":4"}
	if len(usage) != 2 || !slices.Equal(ids, want) {
		t.Fatalf("%d messages metered %v, want 2 with %v", len(usage), ids, want)
	}
	if got := must(e.Batches().Load(context.Background(), b.BatchID)); got.State != dispatch.StatePartiallyFailed {
		t.Fatalf("batch %s", got.State)
	}
	if r := deliver(t, e.job.HandleFinish, finishMsgs[0]); len(r.Messages(queues.LicenceUsage.Binding())) != 0 {
		t.Fatalf("a redelivered finish metered again: %v", r.Outputs)
	}
}

// slowBlobs is the job's blobs with each Open taking a while, counting the opens under way and
// their most at once.
type slowBlobs struct {
	Blobs
	mu        sync.Mutex
	cur, most int
}

func (s *slowBlobs) Open(ctx context.Context, container, name string) (io.ReadCloser, blobstore.Props, error) {
	s.mu.Lock()
	s.cur++
	s.most = max(s.most, s.cur)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.cur--
		s.mu.Unlock()
	}()
	time.Sleep(20 * time.Millisecond)
	return s.Blobs.Open(ctx, container, name)
}

// TestFinishReadsAhead: the finish reads a few record PDFs ahead of the one it writes (before
// issue 26's metering part it read them one after the other), at most readAhead+1 at once, and
// the ZIP and the combined PDF still hold every record's PDF in index order; the records are
// listed in pages of three.
func TestFinishReadsAhead(t *testing.T) {
	t.Parallel()
	const n = 12
	for _, s := range []dispatch.Settings{{Mode: dispatch.ModeIndividual, ZipBundle: true}, {Mode: dispatch.ModeCombined}} {
		e := newEnv(t)
		e.job.Page = 3
		slow := &slowBlobs{Blobs: e.job.Blobs}
		e.job.Blobs = slow
		recs := make([]map[string]any, n)
		for i := range recs {
			recs[i] = e.offer(i)
		}
		b := e.batch(t, recs, s, false, nil)
		e.run(t, b)
		got := must(e.Batches().Load(context.Background(), b.BatchID))
		if got.State != dispatch.StateCompleted {
			t.Fatalf("%+v: %s", s, got.State)
		}
		if slow.most < 2 || slow.most > readAhead+1 {
			t.Errorf("%+v: %d record PDFs read at once, want 2 to %d", s, slow.most, readAhead+1)
		}
		rs := e.records(t, b.BatchID)
		if s.ZipBundle {
			raw := e.Read(got.BundlePath)
			zr := must(zip.NewReader(bytes.NewReader(raw), int64(len(raw))))
			if len(zr.File) != n {
				t.Fatalf("%d entries", len(zr.File))
			}
			for i, f := range zr.File {
				rc := must(f.Open())
				body, _ := io.ReadAll(rc)
				rc.Close()
				if !strings.HasSuffix(rs[i].PDFBlobPath, "/"+f.Name) || !bytes.Equal(body, e.Read(rs[i].PDFBlobPath)) {
					t.Fatalf("entry %d %s is not record %d's PDF %s", i, f.Name, i, rs[i].PDFBlobPath)
				}
			}
			continue
		}
		pages := 0
		for i := range rs {
			pages += must(api.PageCount(bytes.NewReader(e.Read(rs[i].PDFBlobPath)), nil))
		}
		if got, err := api.PageCount(bytes.NewReader(e.Read(got.CombinedPath)), nil); err != nil || got != pages {
			t.Fatalf("combined: %d pages (%v), want %d", got, err, pages)
		}
	}
}

// failingBlobs fails the Open of one name.
type failingBlobs struct {
	Blobs
	name string
}

func (f failingBlobs) Open(ctx context.Context, container, name string) (io.ReadCloser, blobstore.Props, error) {
	if container+"/"+name == f.name {
		return nil, blobstore.Props{}, errors.New("blob unavailable")
	}
	return f.Blobs.Open(ctx, container, name)
}

// eachDonePDF hands the records over in index order until the first error, a read's or the
// caller's, and returns it (the reads ahead are abandoned, nothing waits on them).
func TestEachDonePDFStopsAtTheFirstError(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.job.Page = 3
	ctx := context.Background()
	recs := make([]map[string]any, 12)
	for i := range recs {
		recs[i] = e.offer(i)
	}
	b := e.batch(t, recs, dispatch.Settings{Mode: dispatch.ModeIndividual}, false, nil)
	var msgs []json.RawMessage
	for pages := []any{dispatch.BatchMessage{BatchID: b.BatchID, TenantID: tenant}}; len(pages) > 0; pages = pages[1:] {
		r := deliver(t, e.job.HandleDispatch, pages[0])
		msgs = append(msgs, r.Messages(queues.DispatchRecord.Binding())...)
		for _, n := range r.Messages(queues.Dispatch.Binding()) {
			pages = append(pages, n)
		}
	}
	for _, m := range msgs {
		deliver(t, e.job.HandleRecord, m)
	}
	got := must(e.Batches().Load(ctx, b.BatchID))
	rs := e.records(t, b.BatchID)
	e.job.Blobs = failingBlobs{Blobs: e.job.Blobs, name: rs[5].PDFBlobPath}
	var seen []int
	err := e.job.eachDonePDF(ctx, got, func(r *dispatch.Record, raw []byte) error {
		if !bytes.HasPrefix(raw, []byte("%PDF")) {
			t.Errorf("record %d: no PDF", r.Index)
		}
		seen = append(seen, r.Index)
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "blob unavailable") || !slices.Equal(seen, []int{0, 1, 2, 3, 4}) {
		t.Fatalf("read failure: %v after %v", err, seen)
	}
	e.job.Blobs = e.job.Blobs.(failingBlobs).Blobs
	stop := errors.New("stop")
	seen = nil
	err = e.job.eachDonePDF(ctx, got, func(r *dispatch.Record, _ []byte) error {
		seen = append(seen, r.Index)
		if r.Index == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || !slices.Equal(seen, []int{0, 1, 2}) {
		t.Fatalf("caller's error: %v after %v", err, seen)
	}
}
