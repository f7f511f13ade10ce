package dispatch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/mail"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/licence"
	"github.com/esign-svc/esign/shared/licensing"
	"github.com/esign-svc/esign/shared/render"
	"github.com/esign-svc/esign/shared/template"
)

// Blob containers of a batch (DESIGN 9): dispatch/<batchId>/records.jsonl and
// dispatch/<batchId>/receipt.json, receipts/<batchId>.pdf.
const (
	ContainerDispatch = "dispatch"
	ContainerReceipts = "receipts"
)

// Codes of the intake's refusals.
const (
	CodeDispatchRequired = "dispatch_required"
	// MaxRecipients bounds a record's recipientEmail list (the delivery create's limit).
	MaxRecipients = 20
)

// The per-record keys that are dispatch's own (spec "Per-record special fields"): not fields of
// the template unless the template declares them.
const (
	KeyRecipientEmail = "recipientEmail"
	KeyRecipientName  = "recipientName"
)

// Templates loads template packages (template.Loader), as the render use case does.
type Templates = render.Templates

// Blobs writes a batch's blobs and reads them back (blobstore.Store).
type Blobs interface {
	Put(ctx context.Context, container, name string, r io.Reader, contentType string, metadata map[string]string) (string, error)
	ReadAll(ctx context.Context, container, name string, limit int64) ([]byte, map[string]string, error)
	EnsureContainer(ctx context.Context, name string) error
}

// Store keeps batches (batchstore.Store). The intake stores a batch's record rows a chunk
// at a time while it reads them (CreateRecords, at most RecordChunk), then the batch
// (CreateBatch, with the records' Tally): a batch whose intake
// fails before CreateBatch has no batch row and is seen by no read, and its record rows are
// deleted (DeleteRecords; intake_sweep.go).
type Store interface {
	CreateRecords(ctx context.Context, batchID string, records []Record) error
	CreateBatch(ctx context.Context, b *Batch, t Tally, ch Change) error
	Load(ctx context.Context, batchID string) (*Batch, error)
	RecordDeleter
}

// RecordChunk is how many record rows the intake stores at once (one entity-group
// transaction: the table service's limit is 100 operations).
const RecordChunk = 100

// Cipher encrypts personal data (pii.Cipher).
type Cipher interface {
	Encrypt(plaintext, aad []byte) (string, error)
}

// Intake is the batch submit (DESIGN 9): validate every record, store the batch, answer the
// receipt. Safe for concurrent use.
type Intake struct {
	Templates Templates
	Blobs     IntakeBlobs
	Store     Store
	// Intakes is the schedule of intakes under way (required): each intake's batch is on it
	// before its first record row is stored (IntakeSweep).
	Intakes IntakeSchedule
	Cipher  Cipher
	Now     func() time.Time
	NewID   func() string
	// Licensing is asked once the batch is checked, before anything is stored (DESIGN 19);
	// nil: the offline licence alone.
	Licensing licensing.Validator
}

// Submitter is who submits: the tenant, the caller's id (the audit's, never an address), the
// caller's e-mail address (for the completion notice; may be empty), the audit actor and the
// deployment's licence, which must allow what the batch makes (Settings.Plan).
type Submitter struct {
	TenantID string
	CallerID string
	Email    string
	Actor    kernel.Actor
	Licence  *licence.Licence
}

// Submitted is a stored batch with its receipt.
type Submitted struct {
	Batch   *Batch
	Change  Change
	Receipt Receipt
	PDF     []byte
}

// Submit validates and stores req's batch (req.Batch() is true). Every record is checked with
// the template's validator; the batch is invalid (nothing queued), pending-approval or queued
// as dispatch.Submit decides, and the receipt is stored either way. Errors (nothing stored):
// 400 naming the field at fault (templatePath, options.*, templateSettings.*, dataSource,
// dataSource[i] for a record that is no object or too large, options.supersedes);
// dispatch_required when neither features.dispatch nor an enabled distribution requiring
// approval asks for dispatch; 403 licence_feature_missing when the licence lacks dispatch, or
// delivery for a batch delivered by secure e-mail (licence_missing, licence_expired); the
// template loader's; the stores'. A failure once the first record row may be stored leaves
// nothing behind: the rows and blobs written are deleted before the error comes back (on a
// context of their own), or else by the processor's sweep of the intake schedule.
func (in *Intake) Submit(ctx context.Context, by Submitter, req render.Request) (_ Submitted, err error) {
	if in.Intakes == nil {
		return Submitted{}, errors.New("dispatch: the intake schedule is not wired")
	}
	if err := by.Licence.Allow(licence.Plan{Batch: true}); err != nil {
		return Submitted{}, err
	}
	if req.TemplatePath == "" {
		return Submitted{}, apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field("templatePath", "is required"))
	}
	if err := req.Options.Validate(); err != nil {
		return Submitted{}, err
	}
	o := req.Options
	if o.CorrelationID != "" && !esign.ValidCorrelationID(o.CorrelationID) {
		return Submitted{}, apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field("options.correlationId",
			"must be 1 to 128 letters, digits or . _ : ~ - and start with a letter or digit"))
	}
	if err := scanRecords(req.DataSource); err != nil {
		return Submitted{}, err
	}
	if err := template.Confine("templatePath", req.TemplatePath, by.TenantID); err != nil {
		return Submitted{}, err
	}
	pkg, err := in.Templates.Load(ctx, "templatePath", req.TemplatePath)
	if err != nil {
		return Submitted{}, err
	}
	settings, err := pkg.Merge("templateSettings", req.TemplateSettings)
	if err != nil {
		return Submitted{}, err
	}
	dist := settings.Distribution
	if dist == nil {
		dist = &template.Distribution{}
	}
	if !req.Features["dispatch"] && !(dist.Enabled && dist.RequireApproval) {
		return Submitted{}, apperr.Invalid(CodeDispatchRequired, apperr.Field("features.dispatch",
			"an array of records is batch dispatch: set features.dispatch to true, or templateSettings.distribution enabled and requireApproval"))
	}
	bs, err := batchSettings(dist, o, pkg)
	if err != nil {
		return Submitted{}, err
	}
	if err := by.Licence.Allow(bs.Plan()); err != nil {
		return Submitted{}, err
	}
	if o.Supersedes != "" {
		if err := in.checkSupersedes(ctx, by.TenantID, o.Supersedes); err != nil {
			return Submitted{}, err
		}
	}
	now := in.Now().UTC()
	b := &Batch{BatchID: in.NewID(), TenantID: by.TenantID, CorrelationID: o.CorrelationID, Title: o.Title,
		TemplatePath: req.TemplatePath, TemplateName: pkg.Name, TemplateVersion: pkg.Version, SubmittedBy: by.CallerID,
		Settings: bs, Supersedes: o.Supersedes}
	if b.CorrelationID == "" {
		b.CorrelationID = in.NewID()
	}
	if err := licensing.Check(ctx, in.Licensing, b.TenantID, licence.FeatureDispatch, b.CorrelationID); err != nil {
		return Submitted{}, err
	}
	if b.Title == "" {
		b.Title = pkg.Name
	}
	placeBlobs(b)
	if err := in.encryptContacts(b, by.Email, dist.ApproversEmail); err != nil {
		return Submitted{}, err
	}
	// on the schedule of intakes under way before anything of the batch is stored: from here on
	// a failure deletes what was stored (abandon), and an intake that dies is found by the sweep
	due := now.Add(IntakeSafeAge)
	if err := in.Intakes.Add(ctx, IntakeEntry(b), due); err != nil {
		return Submitted{}, err
	}
	createTried := false
	defer func() {
		if err != nil {
			in.abandon(ctx, b, due, createTried)
		}
	}()
	// the records streamed from dataSource: each validated, encrypted and stored in a chunk of
	// RecordChunk rows as it comes; kept past its chunk are its result (the receipt's) and its
	// tally (the batch's counters and readiness)
	var results []ValidationResult
	var tally Tally
	names := newFileNames()
	chunk := make([]Record, 0, RecordChunk)
	flush := func() error {
		if len(chunk) == 0 {
			return nil
		}
		err := in.Store.CreateRecords(ctx, b.BatchID, chunk)
		clear(chunk)
		chunk = chunk[:0]
		return err
	}
	err = eachRecord(req.DataSource, func(i int, raw json.RawMessage) error {
		line, rec, err := recordLine(i, raw)
		if err != nil {
			return err
		}
		r, v := checkRecord(pkg, rec, bs, now)
		r.BatchID, r.Index, v.Index = b.BatchID, i, i
		if r.Status == RecordReady { // equal names in the batch's folder and ZIP: " (2)" for the second
			text := func(key string) string { return pkg.Text(rec, key) }
			r.NameSeq = names.claim(baseName(bs.FileNameTemplate, i, b.RecordCorrelationID(i), text))
		}
		if r.DataEnc, err = in.Cipher.Encrypt(line, RecordAAD(b.BatchID, i)); err != nil {
			return err
		}
		results = append(results, v)
		tally.Add(r)
		if chunk = append(chunk, r); len(chunk) == RecordChunk {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return Submitted{}, err
	}
	ch := SubmitTally(b, tally, dist.RequireApproval, now)
	ch.By(by.Actor)
	out := Submitted{Batch: b, Change: ch, Receipt: receiptOf(b, results)}
	if out.PDF, err = receiptPDF(out.Receipt); err != nil {
		return Submitted{}, err
	}
	receiptJSON, err := json.Marshal(out.Receipt)
	if err != nil {
		return Submitted{}, err
	}
	blobs := intakeBlobs(b)
	for i, w := range []struct {
		ctype string
		body  func() io.ReadCloser
	}{
		{"application/x-ndjson", func() io.ReadCloser { return jsonlReader(req.DataSource) }},
		{"application/json", bytesBody(receiptJSON)},
		{"application/pdf", bytesBody(out.PDF)},
	} {
		if err := in.put(ctx, blobs[i].container, blobs[i].name, w.ctype, w.body); err != nil {
			return Submitted{}, err
		}
	}
	createTried = true
	if err := in.Store.CreateBatch(ctx, b, tally, ch); err != nil {
		return Submitted{}, err
	}
	return out, nil
}

// ReceiptJSONName is the JSON receipt's name under dispatch/<batchId>/: the batch's
// validationResults are read from it (one blob, not one table row per record).
const ReceiptJSONName = "receipt.json"

// receiptJSONName is the JSON receipt's blob name in ContainerDispatch: beside the batch's stored
// records (dispatch/<tenant>/<batchId>/, or dispatch/<batchId>/ for a batch from before tenant
// folders; every batch stores its records' path at intake).
func receiptJSONName(b *Batch) string {
	dir, _ := path.Split(strings.TrimPrefix(b.RecordsPath, ContainerDispatch+"/"))
	return dir + ReceiptJSONName
}

// ReadReceipt reads a batch's JSON receipt. Errors: the store's (KindNotFound).
func ReadReceipt(ctx context.Context, blobs Blobs, b *Batch) (Receipt, error) {
	raw, _, err := blobs.ReadAll(ctx, ContainerDispatch, receiptJSONName(b), 64<<20)
	if err != nil {
		return Receipt{}, err
	}
	var r Receipt
	if err := json.Unmarshal(raw, &r); err != nil {
		return Receipt{}, apperr.Wrap(err, apperr.KindInternal, "receipt_unreadable", "the batch's receipt does not decode")
	}
	return r, nil
}

// put writes a blob, creating its container on first use: body opens the blob's content
// (again for the second try), closed once written.
func (in *Intake) put(ctx context.Context, container, name, ctype string, body func() io.ReadCloser) error {
	write := func() error {
		r := body()
		defer r.Close()
		_, err := in.Blobs.Put(ctx, container, name, r, ctype, nil)
		return err
	}
	err := write()
	if apperr.KindOf(err) == apperr.KindNotFound {
		if err := in.Blobs.EnsureContainer(ctx, container); err != nil {
			return err
		}
		err = write()
	}
	return err
}

func bytesBody(data []byte) func() io.ReadCloser {
	return func() io.ReadCloser { return io.NopCloser(bytes.NewReader(data)) }
}

// jsonlReader streams dataSource (checked by scanRecords) as records.jsonl: one compact line
// per record, produced as the blob's upload reads it. Closing it stops the producer.
func jsonlReader(ds json.RawMessage) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		pw.CloseWithError(eachRecord(ds, func(i int, raw json.RawMessage) error {
			line, _, err := recordLine(i, raw)
			if err == nil {
				_, err = pw.Write(append(line, '\n'))
			}
			return err
		}))
	}()
	return pr
}

// notArray is the refusal of a dataSource that is no JSON array.
func notArray() error {
	return apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field("dataSource", "must be an array of records (objects)"))
}

// eachRecord decodes dataSource token by token and calls fn with each element of its array in
// order, none held past its call. null is an array of none (as json.Unmarshal has it). Errors:
// notArray for anything but one array of JSON values (fn may have been called for the
// elements before the fault); fn's.
func eachRecord(ds json.RawMessage, fn func(i int, raw json.RawMessage) error) error {
	dec := json.NewDecoder(bytes.NewReader(ds))
	tok, err := dec.Token()
	if err != nil {
		return notArray()
	}
	if tok != nil {
		if d, ok := tok.(json.Delim); !ok || d != '[' {
			return notArray()
		}
		for i := 0; dec.More(); i++ {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return notArray()
			}
			if err := fn(i, raw); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil { // the closing ]
			return notArray()
		}
	}
	if _, err := dec.Token(); err != io.EOF {
		return notArray()
	}
	return nil
}

// recordLine checks the record at index i of dataSource: at most MaxRecordBytes, a JSON
// object; it returns the record compacted (its line of records.jsonl) and decoded. Errors: 400
// naming dataSource[i].
func recordLine(i int, raw json.RawMessage) ([]byte, map[string]any, error) {
	field := fmt.Sprintf("dataSource[%d]", i)
	if len(raw) > MaxRecordBytes {
		return nil, nil, apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field(field, fmt.Sprintf("is %d bytes; a record is at most %d", len(raw), MaxRecordBytes)))
	}
	rec, err := render.DecodeRecord(field, raw)
	if err != nil {
		return nil, nil, err
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) == nil {
		raw = buf.Bytes()
	}
	return raw, rec, nil
}

// scanRecords checks dataSource as an array of 1 to MaxRecords records (recordLine), reading it
// once and keeping none. Errors: 400 naming dataSource, or up to 20 dataSource[i].
func scanRecords(ds json.RawMessage) error {
	n := 0
	var errs []apperr.FieldError
	if err := eachRecord(ds, func(i int, raw json.RawMessage) error {
		n++
		if len(errs) < 20 {
			if _, _, err := recordLine(i, raw); err != nil {
				e, _ := apperr.As(err)
				errs = append(errs, e.Fields...)
			}
		}
		return nil
	}); err != nil {
		return err
	}
	switch {
	case n == 0:
		return apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field("dataSource", "must hold at least one record"))
	case n > MaxRecords:
		return apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field("dataSource",
			fmt.Sprintf("holds %d records; a batch holds at most %d", n, MaxRecords)))
	case len(errs) > 0:
		return apperr.Invalid(apperr.CodeInvalidRequest, errs...)
	}
	return nil
}

// splitRecords is dataSource's records as the intake streams them (scanRecords, then
// recordLine for each), all at once: compacted lines and decoded records.
func splitRecords(ds json.RawMessage) ([]json.RawMessage, []map[string]any, error) {
	if err := scanRecords(ds); err != nil {
		return nil, nil, err
	}
	var raws []json.RawMessage
	var recs []map[string]any
	err := eachRecord(ds, func(i int, raw json.RawMessage) error {
		line, rec, err := recordLine(i, raw)
		raws, recs = append(raws, line), append(recs, rec)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return raws, recs, nil
}

// batchSettings are the batch's processing settings: the merged distribution block and the
// options. Errors: 400 naming templateSettings.distribution.* for a value outside the spec's.
func batchSettings(d *template.Distribution, o render.Options, pkg *template.Package) (Settings, error) {
	const at = "templateSettings.distribution."
	s := Settings{Mode: d.Mode, FileNameTemplate: o.FileNameTemplate, ZipBundle: d.ZipBundle, DeliveryMode: DeliveryNone,
		ExpiresInHours: DefaultExpiresInHours, DocumentIDTemplate: o.DocumentIDTemplate, DocType: o.DocType,
		GeneratedBy: o.GeneratedBy, SourceSystem: o.SourceSystem}
	if s.Mode == "" {
		s.Mode = ModeIndividual
	}
	if s.FileNameTemplate == "" {
		s.FileNameTemplate = d.FileNameTemplate
	}
	if s.DocumentIDTemplate == "" {
		s.DocumentIDTemplate = pkg.DocumentIDTemplate
	}
	if s.DocType == "" {
		s.DocType = pkg.Name
	}
	var errs []apperr.FieldError
	if s.Mode != ModeIndividual && s.Mode != ModeCombined {
		errs = append(errs, apperr.Field(at+"mode", "must be individual or combined"))
	}
	if s.ZipBundle && s.Mode != ModeIndividual {
		errs = append(errs, apperr.Field(at+"zipBundle", "bundles individual PDFs: set it only with mode individual"))
	}
	if len(s.FileNameTemplate) > 256 {
		errs = append(errs, apperr.Field(at+"fileNameTemplate", "must be at most 256 bytes"))
	}
	if c := d.DeliveryConfig; c != nil {
		switch c.Mode {
		case "", DeliveryNone:
		case DeliverySecureEmail:
			s.DeliveryMode = DeliverySecureEmail
		default:
			errs = append(errs, apperr.Field(at+"deliveryConfig.mode", "must be secure-email or none"))
		}
		if c.ExpiresInHours != nil {
			// each record's delivery is made with this expiry: the delivery's own limit
			if msg := delivery.ExpiryProblem(*c.ExpiresInHours); msg != "" {
				errs = append(errs, apperr.Field(at+"deliveryConfig.expiresInHours", msg))
			} else {
				s.ExpiresInHours = *c.ExpiresInHours
			}
		}
	}
	for i, a := range d.ApproversEmail {
		if !plainAddress(a) {
			errs = append(errs, apperr.Field(fmt.Sprintf("%sapproversEmail[%d]", at, i), "must be a plain e-mail address"))
		}
	}
	if len(errs) > 0 {
		return Settings{}, apperr.Invalid(apperr.CodeInvalidRequest, errs...)
	}
	return s, nil
}

// checkSupersedes: the batch a resubmission replaces is the tenant's, and invalid or
// changes-requested. Errors: 400 naming options.supersedes.
func (in *Intake) checkSupersedes(ctx context.Context, tenant, id string) error {
	old, err := in.Store.Load(ctx, id)
	if apperr.KindOf(err) == apperr.KindNotFound || (err == nil && old.TenantID != tenant) {
		return apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field("options.supersedes", "names no batch of this tenant"))
	}
	if err != nil {
		return err
	}
	if old.State != StateInvalid && old.State != StateChangesRequested {
		return apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field("options.supersedes",
			"names a batch that is "+string(old.State)+": only an invalid or changes-requested batch is resubmitted"))
	}
	return nil
}

// encryptContacts keeps the submitter's address and the approvers' (a JSON array), encrypted
// and bound to the batch.
func (in *Intake) encryptContacts(b *Batch, submitter string, approvers []string) error {
	var err error
	if submitter != "" {
		if b.SubmitterEmailEnc, err = in.Cipher.Encrypt([]byte(submitter), SubmitterAAD(b.BatchID)); err != nil {
			return err
		}
	}
	if len(approvers) > 0 {
		list, _ := json.Marshal(approvers)
		if b.ApproversEnc, err = in.Cipher.Encrypt(list, ApproversAAD(b.BatchID)); err != nil {
			return err
		}
	}
	return nil
}

// checkRecord validates one record: dispatch's own keys (recipientEmail, recipientName) here,
// the rest with the template's validator (OwnKeys).
func checkRecord(pkg *template.Package, rec map[string]any, s Settings, now time.Time) (Record, ValidationResult) {
	own := OwnKeys(pkg, rec)
	results := append(recipientResults(own, s.DeliveryMode == DeliverySecureEmail), pkg.Validate(rec, now)...)
	r := Record{Status: RecordReady, State: RecordPending}
	v := ValidationResult{Status: ResultValid}
	if t := s.DocumentIDTemplate; t != "" {
		v.DocumentID = template.Expand(t, func(key string) string { return pkg.Text(rec, key) })
	}
	for _, res := range results {
		switch res.Severity {
		case template.SeverityError:
			r.Status, r.State = RecordInvalid, RecordNotQueued
		case template.SeverityWarning:
			r.Warning = true
		}
		r.Messages = append(r.Messages, message(res))
	}
	switch {
	case r.Status == RecordInvalid:
		r.Warning = false
		v.Status = ResultInvalid
	case r.Warning:
		v.Status = ResultWarning
	}
	v.Messages = r.Messages
	return r, v
}

// OwnKeys returns the values of dispatch's own keys (recipientEmail, recipientName) in rec: the
// record's recipients whether or not the template declares the keys as fields. A key the
// template does not declare is taken out of rec, so that the template's unknown-key check does
// not refuse it; one it declares stays in rec, validated and printed like any field. The
// intake and the processor take the keys with this one rule.
func OwnKeys(pkg *template.Package, rec map[string]any) map[string]any {
	own := map[string]any{}
	for _, k := range []string{KeyRecipientEmail, KeyRecipientName} {
		v, ok := rec[k]
		if !ok {
			continue
		}
		own[k] = v
		if !slices.ContainsFunc(pkg.Fields, func(f template.Field) bool { return f.Key == k }) {
			delete(rec, k)
		}
	}
	return own
}

// message is a result as the receipt lists it: "<severity> <field>: <message> (<rule>)". It
// names keys and rules, never a record's values.
func message(r template.Result) string {
	s := string(r.Severity) + " "
	if r.FieldKey != "" {
		s += r.FieldKey + ": "
	}
	s += r.Message
	if r.RuleID != "" {
		s += " (" + r.RuleID + ")"
	}
	return s
}

// recipientResults checks recipientEmail (required for secure-email delivery; one address or a
// ";"-separated list, each a plain address, at most MaxRecipients) and recipientName (text,
// ";"-separated, aligned by index with the addresses: not more names than addresses).
func recipientResults(own map[string]any, required bool) []template.Result {
	bad := func(key, msg string) []template.Result {
		return []template.Result{{RuleID: "dispatch." + key, FieldKey: key, Severity: template.SeverityError, Message: msg}}
	}
	raw, present := own[KeyRecipientEmail]
	if !present || raw == nil {
		if required {
			return bad(KeyRecipientEmail, "is required: deliveryConfig.mode is secure-email")
		}
		return nil
	}
	list, ok := raw.(string)
	if !ok {
		return bad(KeyRecipientEmail, "must be a string of addresses separated by ;")
	}
	emails := splitList(list)
	if len(emails) == 0 || len(emails) > MaxRecipients {
		return bad(KeyRecipientEmail, fmt.Sprintf("must hold 1 to %d addresses separated by ;", MaxRecipients))
	}
	for i, e := range emails {
		if !plainAddress(e) {
			return bad(KeyRecipientEmail, fmt.Sprintf("address %d is not a plain e-mail address", i+1))
		}
	}
	if n, present := own[KeyRecipientName]; present && n != nil {
		names, ok := n.(string)
		if !ok || strings.ContainsAny(names, "\r\n") {
			return bad(KeyRecipientName, "must be a string of names separated by ;")
		}
		if len(strings.Split(names, ";")) > len(emails) {
			return bad(KeyRecipientName, "has more names than recipientEmail has addresses (names align by index)")
		}
	}
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ";") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// plainAddress reports whether s is a bare address with a dotted domain.
func plainAddress(s string) bool {
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s && len(s) <= 254 && strings.Contains(s[strings.LastIndexByte(s, '@')+1:], ".")
}
