package dispatch_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/azure/blobstore"
	"github.com/esign-svc/esign/shared/dispatch"
	"github.com/esign-svc/esign/shared/dispatch/batchstore"
	"github.com/esign-svc/esign/shared/dispatch/batchstore/storetest"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/licence"
	"github.com/esign-svc/esign/shared/licence/licencetest"
	"github.com/esign-svc/esign/shared/pdf/pdfdoc"
	"github.com/esign-svc/esign/shared/pii"
	"github.com/esign-svc/esign/shared/render"
	"github.com/esign-svc/esign/shared/template"
)

func TestMain(m *testing.M) { azuritetest.Main(m) }

var now = time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)

type fixture struct {
	in     *dispatch.Intake
	store  *batchstore.Store
	blobs  *blobstore.Store
	cipher *pii.Cipher
	pkg    string
}

// newFixture is an intake on Azurite (its own tables; the shared containers) with the sample
// package (examples/offer) stored as a blob folder.
func newFixture(t testing.TB) *fixture {
	t.Helper()
	st := storetest.New(t)
	ctx := context.Background()
	blobs := blobstore.New(azuritetest.Account(t))
	if err := blobs.EnsureContainer(ctx, template.Container); err != nil {
		t.Fatal(err)
	}
	dir := "shared/intake-" + uuid.NewString() + "/"
	for _, name := range []string{"template.yaml", "template.pdf"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "examples", "offer", name))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := blobs.Put(ctx, template.Container, dir+name, bytes.NewReader(b), "application/octet-stream", nil); err != nil {
			t.Fatal(err)
		}
	}
	c, err := pii.ParseCipher("e1:" + base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef")))
	if err != nil {
		t.Fatal(err)
	}
	in := &dispatch.Intake{Templates: &template.Loader{Blobs: blobs}, Blobs: blobs, Store: st, Intakes: st.Intakes(), Cipher: c,
		Now: func() time.Time { return now }, NewID: uuid.NewString}
	return &fixture{in: in, store: st, blobs: blobs, cipher: c, pkg: "templates/" + dir}
}

// packageWith stores a copy of the sample package whose template.yaml declares extra fields
// (YAML list entries, inserted first under fields:) and returns its templatePath.
func (f *fixture) packageWith(t *testing.T, fields string) string {
	t.Helper()
	ctx := context.Background()
	dir := "shared/intake-" + uuid.NewString() + "/"
	for _, name := range []string{"template.yaml", "template.pdf"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "examples", "offer", name))
		if err != nil {
			t.Fatal(err)
		}
		if name == "template.yaml" {
			b = bytes.Replace(b, []byte("fields:\n"), []byte("fields:\n"+fields), 1)
		}
		if _, err := f.blobs.Put(ctx, template.Container, dir+name, bytes.NewReader(b), "application/octet-stream", nil); err != nil {
			t.Fatal(err)
		}
	}
	return "templates/" + dir
}

func offer(i int) map[string]any {
	return map[string]any{"employeeName": fmt.Sprintf("Person %d", i), "employeeEmail": fmt.Sprintf("p%d@example.com", i),
		"position": "Engineer", "salary": 50000 + i, "currency": "EUR", "startDate": "2027-01-04"}
}

func request(pkg string, records []map[string]any, settings string) render.Request {
	ds, _ := json.Marshal(records)
	req := render.Request{TemplatePath: pkg, DataSource: ds, Features: map[string]bool{"dispatch": true},
		Options: render.Options{GeneratedBy: "tests", DocumentIDTemplate: "OFFER-{{employeeName}}"}}
	if settings != "" {
		req.TemplateSettings = json.RawMessage(settings)
	}
	return req
}

var alice = dispatch.Submitter{TenantID: "t1", CallerID: "oid-alice", Email: "alice@example.com",
	Actor: kernel.Actor{Kind: "initiator", ID: "oid-alice"}, Licence: licencetest.MustNew()}

const approval = `{"distribution":{"enabled":true,"requireApproval":true,"approversEmail":["boss@example.com"]}}`

// TestIntakeReadyIsStored submits three valid records needing approval: READY and
// pending-approval, the approvers' notice asked for, and everything stored: the batch row with
// its settings and encrypted addresses, one row per record with its data encrypted, the JSONL
// records, the JSON receipt and the PDF receipt.
func TestIntakeReadyIsStored(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	recs := []map[string]any{offer(0), offer(1), offer(2)}
	sub, err := f.in.Submit(ctx, alice, request(f.pkg, recs, approval))
	if err != nil {
		t.Fatal(err)
	}
	b := sub.Batch
	if b.Readiness != dispatch.ReadyAll || b.State != dispatch.StatePendingApproval || b.ReadyCount != 3 || b.FailedCount != 0 {
		t.Fatalf("batch %s %s ready %d failed %d", b.Readiness, b.State, b.ReadyCount, b.FailedCount)
	}
	if !sub.Change.Asks(dispatch.EffectNotifyApprovers) || sub.Change.Asks(dispatch.EffectEnqueue) {
		t.Fatalf("effects %+v", sub.Change.Effects)
	}
	got, err := f.store.Load(ctx, b.BatchID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Settings.DocumentIDTemplate != "OFFER-{{employeeName}}" || got.Settings.ExpiresInHours != dispatch.DefaultExpiresInHours ||
		got.Settings.Mode != dispatch.ModeIndividual || got.TemplateName != "Offer letter" || got.SubmittedBy != "oid-alice" {
		t.Fatalf("stored batch %+v", got)
	}
	if s, err := f.cipher.DecryptString(got.SubmitterEmailEnc, dispatch.SubmitterAAD(b.BatchID)); err != nil || s != "alice@example.com" {
		t.Fatalf("submitter %q %v", s, err)
	}
	if s, err := f.cipher.DecryptString(got.ApproversEnc, dispatch.ApproversAAD(b.BatchID)); err != nil || s != `["boss@example.com"]` {
		t.Fatalf("approvers %q %v", s, err)
	}
	rec, err := f.store.Record(ctx, b.BatchID, 2)
	if err != nil {
		t.Fatal(err)
	}
	data, err := f.cipher.Decrypt(rec.DataEnc, dispatch.RecordAAD(b.BatchID, 2))
	if err != nil || !strings.Contains(string(data), `"Person 2"`) || rec.Status != dispatch.RecordReady || rec.State != dispatch.RecordPending {
		t.Fatalf("record 2: %s %v %+v", data, err, rec)
	}
	if want := "dispatch/" + b.TenantID + "/" + b.BatchID + "/records.jsonl"; b.RecordsPath != want || b.ReceiptPath != "receipts/"+b.TenantID+"/"+b.BatchID+".pdf" {
		t.Fatalf("stored at %q and %q, want the tenant's folders", b.RecordsPath, b.ReceiptPath)
	}
	jsonl, _, err := f.blobs.ReadAll(ctx, dispatch.ContainerDispatch, b.TenantID+"/"+b.BatchID+"/records.jsonl", 1<<20)
	if err != nil || bytes.Count(jsonl, []byte("\n")) != 3 || !bytes.Contains(jsonl, []byte(`"Person 1"`)) {
		t.Fatalf("records.jsonl %s %v", jsonl, err)
	}
	rc, err := dispatch.ReadReceipt(ctx, f.blobs, b)
	if err != nil || len(rc.ValidationResults) != 3 || rc.ValidationResults[1].DocumentID != "OFFER-Person 1" ||
		rc.ValidationResults[1].Status != dispatch.ResultValid {
		t.Fatalf("receipt %+v %v", rc, err)
	}
	pdf, _, err := f.blobs.ReadAll(ctx, dispatch.ContainerReceipts, b.TenantID+"/"+b.BatchID+".pdf", 1<<20)
	if err != nil || !bytes.Equal(pdf, sub.PDF) || !bytes.HasPrefix(pdf, []byte("%PDF-")) {
		t.Fatalf("receipt PDF (%d bytes) %v", len(pdf), err)
	}
	for i, c := range pdf {
		if c > 0x7e || (c < 0x20 && c != '\n' && c != '\r' && c != '\t') {
			t.Fatalf("receipt PDF byte %d is %#x: not 7-bit text", i, c)
		}
	}
}

// TestIntakePartialAndInvalid: a warning makes PARTIAL (still dispatchable, queued without
// approval); an error rule, a wrong type or an unknown key makes the record INVALID and the
// batch invalid, the failing records named with their messages.
func TestIntakePartialAndInvalid(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	past := offer(1)
	past["startDate"] = "2020-01-15"
	sub, err := f.in.Submit(ctx, alice, request(f.pkg, []map[string]any{offer(0), past}, ""))
	if err != nil {
		t.Fatal(err)
	}
	if b := sub.Batch; b.Readiness != dispatch.ReadyPartial || b.State != dispatch.StateQueued || b.WarningCount != 1 || !sub.Change.Asks(dispatch.EffectEnqueue) {
		t.Fatalf("partial: %s %s warnings %d", b.Readiness, b.State, b.WarningCount)
	}
	if v := sub.Receipt.ValidationResults[1]; v.Status != dispatch.ResultWarning || len(v.Messages) != 1 || !strings.Contains(v.Messages[0], "start-in-future") {
		t.Fatalf("warning result %+v", v)
	}
	capped, typed, extra := offer(1), offer(3), offer(4)
	capped["salary"] = 2000000
	typed["salary"] = "a lot"
	extra["colour"] = "red"
	sub, err = f.in.Submit(ctx, alice, request(f.pkg, []map[string]any{offer(0), capped, offer(2), typed, extra}, approval))
	if err != nil {
		t.Fatal(err)
	}
	b := sub.Batch
	if b.Readiness != dispatch.ReadyInvalid || b.State != dispatch.StateInvalid || b.FailedCount != 3 || b.ReadyCount != 2 || len(sub.Change.Effects) != 0 {
		t.Fatalf("invalid: %s %s failed %d ready %d effects %v", b.Readiness, b.State, b.FailedCount, b.ReadyCount, sub.Change.Effects)
	}
	want := map[int]string{1: "salary-cap", 3: "field.type", 4: "field.unknown"}
	for _, v := range sub.Receipt.ValidationResults {
		rule, bad := want[v.Index]
		if bad != (v.Status == dispatch.ResultInvalid) || (bad && !strings.Contains(strings.Join(v.Messages, "|"), rule)) {
			t.Errorf("record %d: %+v", v.Index, v)
		}
	}
	page, err := f.store.Records(ctx, b.BatchID, dispatch.RecordInvalid, "", 10)
	if err != nil || len(page.Records) != 3 || page.Records[0].Index != 1 || page.Records[0].State != dispatch.RecordNotQueued {
		t.Fatalf("invalid records %+v %v", page, err)
	}
}

func fieldsOf(t *testing.T, err error, code string) []string {
	t.Helper()
	e, ok := apperr.As(err)
	if !ok || e.Kind != apperr.KindInvalid || e.Code != code {
		t.Fatalf("want 400 %s, got %v", code, err)
	}
	var out []string
	for _, f := range e.Fields {
		out = append(out, f.Field)
	}
	return out
}

// TestIntakeRefusals: what is refused before anything is stored, and the field named.
func TestIntakeRefusals(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	noGate := request(f.pkg, []map[string]any{offer(0)}, `{"distribution":{"enabled":true,"requireApproval":false}}`)
	noGate.Features = nil
	if got := fieldsOf(t, ddo(f, noGate), dispatch.CodeDispatchRequired); len(got) != 1 || got[0] != "features.dispatch" {
		t.Errorf("dispatch_required names %v", got)
	}
	gated := noGate
	gated.TemplateSettings = json.RawMessage(approval) // enabled and requireApproval derive the gate
	if _, err := f.in.Submit(ctx, alice, gated); err != nil {
		t.Errorf("distribution gate: %v", err)
	}
	many := make([]byte, 0, 30*dispatch.MaxRecords)
	many = append(many, '[')
	for i := 0; i <= dispatch.MaxRecords; i++ {
		if i > 0 {
			many = append(many, ',')
		}
		many = append(many, `{"a":1}`...)
	}
	tooMany := request(f.pkg, nil, "")
	tooMany.DataSource = append(many, ']')
	if got := fieldsOf(t, ddo(f, tooMany), apperr.CodeInvalidRequest); len(got) != 1 || got[0] != "dataSource" {
		t.Errorf("10,001 records: %v", got)
	}
	big := offer(1)
	big["notes"] = strings.Repeat("x", dispatch.MaxRecordBytes)
	notObject := request(f.pkg, []map[string]any{offer(0), big}, "")
	notObject.DataSource = json.RawMessage(strings.Replace(string(notObject.DataSource), "[", `[42,`, 1))
	if got := fieldsOf(t, ddo(f, notObject), apperr.CodeInvalidRequest); strings.Join(got, ",") != "dataSource[0],dataSource[2]" {
		t.Errorf("record shapes: %v", got)
	}
	for name, c := range map[string]struct {
		settings, field string
	}{
		"mode":      {`{"distribution":{"mode":"zip"}}`, "templateSettings.distribution.mode"},
		"zip combo": {`{"distribution":{"mode":"combined","zipBundle":true}}`, "templateSettings.distribution.zipBundle"},
		"expiry":    {`{"distribution":{"deliveryConfig":{"mode":"secure-email","expiresInHours":0}}}`, "templateSettings.distribution.deliveryConfig.expiresInHours"},
		// beyond the delivery's own limit (720): once accepted, and every record then failed
		"expiry 721":  {`{"distribution":{"deliveryConfig":{"mode":"secure-email","expiresInHours":721}}}`, "templateSettings.distribution.deliveryConfig.expiresInHours"},
		"expiry 1000": {`{"distribution":{"deliveryConfig":{"expiresInHours":1000}}}`, "templateSettings.distribution.deliveryConfig.expiresInHours"},
		"approver":    {`{"distribution":{"approversEmail":"not an address"}}`, "templateSettings.distribution.approversEmail[0]"},
	} {
		if got := fieldsOf(t, ddo(f, request(f.pkg, []map[string]any{offer(0)}, c.settings)), apperr.CodeInvalidRequest); len(got) != 1 || got[0] != c.field {
			t.Errorf("%s: %v", name, got)
		}
	}
}

func ddo(f *fixture, req render.Request) error {
	_, err := f.in.Submit(context.Background(), alice, req)
	return err
}

// TestIntakeRecipients: with secure-email delivery each record needs recipientEmail (one
// address or a ;-list of plain addresses) and may name its recipients (not more names than
// addresses); the two keys are dispatch's, never refused as unknown by the template.
func TestIntakeRecipients(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	with := func(email, name any) map[string]any {
		r := offer(0)
		if email != nil {
			r["recipientEmail"] = email
		}
		if name != nil {
			r["recipientName"] = name
		}
		return r
	}
	recs := []map[string]any{
		with("a@example.com", nil), with("a@example.com; b@example.org", "Ann;Bob"), with(nil, nil),
		with("a@example.com;nobody", nil), with("a@example.com", "Ann;Bob"), with(42, nil),
	}
	sub, err := f.in.Submit(context.Background(), alice, request(f.pkg, recs, `{"distribution":{"deliveryConfig":{"mode":"secure-email"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	wantInvalid := []bool{false, false, true, true, true, true}
	for i, v := range sub.Receipt.ValidationResults {
		if (v.Status == dispatch.ResultInvalid) != wantInvalid[i] {
			t.Errorf("record %d: %+v", i, v)
		}
		for _, m := range v.Messages {
			if strings.Contains(m, "field.unknown") || strings.Contains(m, "@") {
				t.Errorf("record %d message %q", i, m)
			}
		}
	}
	if sub.Batch.Settings.DeliveryMode != dispatch.DeliverySecureEmail {
		t.Fatalf("delivery mode %q", sub.Batch.Settings.DeliveryMode)
	}
	// Without secure-email the keys are optional, and still not unknown.
	sub, err = f.in.Submit(context.Background(), alice, request(f.pkg, []map[string]any{with(nil, nil), with("a@example.com", "Ann")}, ""))
	if err != nil || sub.Batch.Readiness != dispatch.ReadyAll {
		t.Fatalf("no delivery: %v %+v", err, sub.Receipt.ValidationResults)
	}
}

// TestIntakeRecipientsDeclaredByTheTemplate: a template that declares recipientEmail and
// recipientName as fields (to print them) does not make the keys unknown to secure-email
// delivery: the record's own values are its recipients either way, checked by the same rules,
// and they stay in the record the template renders (once "is required" although every record
// had them, and every such batch INVALID).
func TestIntakeRecipientsDeclaredByTheTemplate(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	pkg := f.packageWith(t, `  - key: recipientEmail
    type: string
    maxLength: 600
    label: Recipient e-mail
  - key: recipientName
    type: string
    maxLength: 200
    label: Recipient
`)
	good, list, bad := offer(0), offer(1), offer(2)
	good["recipientEmail"], good["recipientName"] = "ann@example.com", "Ann Example"
	list["recipientEmail"], list["recipientName"] = "a@example.com; b@example.org", "Ann;Bob"
	bad["recipientEmail"] = "nobody"
	sub, err := f.in.Submit(context.Background(), alice, request(pkg, []map[string]any{good, list, bad},
		`{"distribution":{"deliveryConfig":{"mode":"secure-email"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{dispatch.ResultValid, dispatch.ResultValid, dispatch.ResultInvalid} {
		if v := sub.Receipt.ValidationResults[i]; v.Status != want {
			t.Errorf("record %d: %+v, want %s", i, v, want)
		}
	}
	if m := strings.Join(sub.Receipt.ValidationResults[2].Messages, "|"); !strings.Contains(m, "dispatch.recipientEmail") {
		t.Errorf("record 2 messages %q: the delivery's address rule should refuse it", m)
	}
	// The declared keys stay in the record the template sees (printed); undeclared ones do not.
	p, err := (&template.Loader{Blobs: f.blobs}).Load(context.Background(), "templatePath", pkg)
	if err != nil {
		t.Fatal(err)
	}
	rec := map[string]any{"recipientEmail": "ann@example.com", "recipientName": "Ann"}
	if own := dispatch.OwnKeys(p, rec); own["recipientEmail"] != "ann@example.com" || own["recipientName"] != "Ann" || rec["recipientName"] != "Ann" {
		t.Errorf("declared: own %v, record %v", own, rec)
	}
	plain, err := (&template.Loader{Blobs: f.blobs}).Load(context.Background(), "templatePath", f.pkg)
	if err != nil {
		t.Fatal(err)
	}
	rec = map[string]any{"recipientEmail": "ann@example.com", "employeeName": "Ann"}
	if own := dispatch.OwnKeys(plain, rec); own["recipientEmail"] != "ann@example.com" || len(rec) != 1 {
		t.Errorf("not declared: own %v, record %v", own, rec)
	}
}

// TestIntakeNamesEqualFileNames: the intake gives each ready record its place among equal
// file names (regardless of case) in index order, so that the processor names the second
// " (2)" and so on; an invalid record takes no name, and no record takes the combined PDF's.
func TestIntakeNamesEqualFileNames(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	named := func(name string) map[string]any { r := offer(0); r["employeeName"] = name; return r }
	bad := named("Müller")
	bad["salary"] = "x"
	recs := []map[string]any{named("Müller"), bad, named("müller"), named("Schmidt"), named("MÜLLER"), named("combined")}
	req := request(f.pkg, recs, `{"distribution":{"mode":"combined","fileNameTemplate":"{{employeeName}}"}}`)
	sub, err := f.in.Submit(ctx, alice, req)
	if err != nil {
		t.Fatal(err)
	}
	want := []int{0, 0, 2, 0, 3, 2}
	for i, w := range want {
		r, err := f.store.Record(ctx, sub.Batch.BatchID, i)
		if err != nil || r.NameSeq != w {
			t.Errorf("record %d: seq %d (%v), want %d", i, r.NameSeq, err, w)
		}
	}
}

// TestIntakeSupersedes: a resubmission names an invalid or changes-requested batch of the
// tenant; anything else is refused naming options.supersedes.
func TestIntakeSupersedes(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	bad := offer(1)
	bad["salary"] = 2000000
	invalid, err := f.in.Submit(ctx, alice, request(f.pkg, []map[string]any{bad}, ""))
	if err != nil {
		t.Fatal(err)
	}
	pending, err := f.in.Submit(ctx, alice, request(f.pkg, []map[string]any{offer(0)}, approval))
	if err != nil {
		t.Fatal(err)
	}
	again := request(f.pkg, []map[string]any{offer(1)}, "")
	again.Options.Supersedes = invalid.Batch.BatchID
	sub, err := f.in.Submit(ctx, alice, again)
	if err != nil || sub.Batch.Supersedes != invalid.Batch.BatchID || sub.Receipt.Supersedes != invalid.Batch.BatchID {
		t.Fatalf("resubmission: %v", err)
	}
	other := alice
	other.TenantID = "t2"
	for name, c := range map[string]struct {
		by dispatch.Submitter
		id string
	}{
		"pending": {alice, pending.Batch.BatchID}, "unknown": {alice, uuid.NewString()}, "other tenant": {other, invalid.Batch.BatchID},
	} {
		req := request(f.pkg, []map[string]any{offer(1)}, "")
		req.Options.Supersedes = c.id
		_, err := f.in.Submit(ctx, c.by, req)
		if got := fieldsOf(t, err, apperr.CodeInvalidRequest); len(got) != 1 || got[0] != "options.supersedes" {
			t.Errorf("%s: %v", name, got)
		}
	}
}

// TestReceiptOfManyRecordsHasManyPages: 10,000 records are one row each over many pages.
func TestReceiptOfManyRecordsHasManyPages(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	recs := make([]map[string]any, dispatch.MaxRecords)
	for i := range recs {
		recs[i] = offer(i)
	}
	recs[9999]["salary"] = "x"
	sub, err := f.in.Submit(context.Background(), alice, request(f.pkg, recs, ""))
	if err != nil {
		t.Fatal(err)
	}
	if sub.Batch.DocumentCount != 10000 || sub.Batch.FailedCount != 1 {
		t.Fatalf("counts %d %d", sub.Batch.DocumentCount, sub.Batch.FailedCount)
	}
	d, err := pdfdoc.Open(sub.PDF)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := d.PageCount(); err != nil || n < 200 {
		t.Fatalf("%d pages (%v) for 10,000 rows", n, err)
	}
}

// TestIntakeLicenceFeatures: a batch needs dispatch (the spec's gate), not esign; one delivered
// by secure e-mail needs delivery too (403 licence_feature_missing naming the feature).
func TestIntakeLicenceFeatures(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const secure = `{"distribution":{"deliveryConfig":{"mode":"secure-email"}}}`
	withRecipient := offer(0)
	withRecipient[dispatch.KeyRecipientEmail] = "reader@example.com"
	for _, c := range []struct {
		name     string
		features []licence.Feature
		settings string
		missing  licence.Feature
	}{
		{"dispatch without esign", []licence.Feature{licence.FeatureDispatch}, "", ""},
		{"no dispatch", []licence.Feature{licence.FeatureEsign, licence.FeatureDelivery}, "", licence.FeatureDispatch},
		{"secure e-mail without delivery", []licence.Feature{licence.FeatureDispatch, licence.FeatureEsign}, secure, licence.FeatureDelivery},
		{"secure e-mail with delivery", []licence.Feature{licence.FeatureDispatch, licence.FeatureDelivery}, secure, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			by := alice
			by.Licence = licencetest.New(t, c.features...)
			_, err := f.in.Submit(context.Background(), by, request(f.pkg, []map[string]any{withRecipient}, c.settings))
			if c.missing == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			e, ok := apperr.As(err)
			if !ok || e.Kind != apperr.KindForbidden || e.Code != licence.CodeFeatureMissing || e.Extra["feature"] != string(c.missing) {
				t.Fatalf("err = %v, want 403 licence_feature_missing naming %s", err, c.missing)
			}
		})
	}
}
