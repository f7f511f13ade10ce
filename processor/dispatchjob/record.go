package dispatchjob

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/blobpath"
	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/dispatch"
	"github.com/esign-svc/esign/shared/document"
	"github.com/esign-svc/esign/shared/effects"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/queues"
	"github.com/esign-svc/esign/shared/render"
	"github.com/esign-svc/esign/shared/template"
)

// Failure reasons of a record (Record.Error: codes, never personal data).
const (
	ReasonUnreadable       = "record_unreadable"  // its data does not decrypt or decode
	ReasonRetriesExhausted = "retries_exhausted"  // the host gave up on its message
	reasonDelivery         = "delivery_refused: " // + the delivery use case's code
	reasonRender           = "render_failed: "    // + the template's or the renderer's code
	reasonLicence          = "licence_refused: "  // + the licence's code (licence_feature_missing, licence_expired)
	recordDir              = "dispatch/"          // documents/<tid>/dispatch/<batchId>/
	deliveryKeyPrefix      = "dispatch:"          // delivery idempotency key: dispatch:<batchId>:<index>
	defaultRecordSeparator = ";"                  // recipientEmail and recipientName lists
)

// HandleRecord is the DispatchRecord queue function (dispatch.RecordMessage): it processes
// the message's records (a group of up to dispatch.RecordsPerMessage, read in one query, the
// template once) and records their outcomes with the batch's counters (one transaction per
// counter shard: one for a group). A record processed before (a redelivered message) is left
// out with nothing written and no output. A record that can never succeed (unreadable data,
// template gone or changed so the record no longer validates, a PDF path taken, delivery
// refused, the licence no longer allowing the batch) is recorded failed with a short reason;
// a transient failure (storage) is returned, and the host retries the message (the records
// already rendered are found again), then poisons it. The change that completes the batch's
// counts puts the batch on dispatch-finish, which meters the records made.
func (j *Job) HandleRecord(ctx context.Context, qm funcproto.QueueMessage) error {
	b, recs, err := j.loadRecords(ctx, qm)
	if err != nil || len(recs) == 0 {
		return err
	}
	outs := make([]dispatch.Outcome, len(recs))
	invites := make([][]delivery.InviteMessage, len(recs))
	for i, r := range recs {
		if outs[i], invites[i], err = j.process(ctx, b, r); err != nil {
			return err
		}
	}
	written, err := j.processed(ctx, b, recs, outs)
	if err != nil {
		return err
	}
	for i := range recs {
		if !written[i] {
			continue
		}
		for _, m := range invites[i] {
			if err := effects.Send(ctx, queues.DeliveryInvite, m); err != nil {
				return err
			}
		}
	}
	return nil // the records made are metered at the batch's finish (meterDone)
}

// HandleRecordPoison is the DispatchRecordPoison function: the host gave up on a record
// message; its records are recorded failed (retries_exhausted) unless processed meanwhile,
// which may finish the batch.
func (j *Job) HandleRecordPoison(ctx context.Context, qm funcproto.QueueMessage) error {
	b, recs, err := j.loadRecords(ctx, qm)
	if err != nil || len(recs) == 0 {
		return err
	}
	outs := make([]dispatch.Outcome, len(recs))
	for i := range outs {
		outs[i] = dispatch.Outcome{Err: ReasonRetriesExhausted}
	}
	_, err = j.processed(ctx, b, recs, outs)
	return err
}

// loadRecords reads the message's batch (cached) and records (one read): only the records
// still to process; none when there is nothing to do (the batch is gone or not processing,
// the records were processed).
func (j *Job) loadRecords(ctx context.Context, qm funcproto.QueueMessage) (*dispatch.Batch, []*dispatch.Record, error) {
	var m dispatch.RecordMessage
	if err := qm.Decode(&m); err != nil {
		return nil, nil, err
	}
	indexes := m.Records()
	if len(indexes) > dispatch.RecordsPerMessage || !slices.IsSorted(indexes) || indexes[0] < 0 {
		return nil, nil, funcproto.Permanent(apperr.Invalid(funcproto.CodeInvalidMessage,
			apperr.Field("indexes", "at most "+strconv.Itoa(dispatch.RecordsPerMessage)+" record indexes in ascending order")))
	}
	b, err := j.cache.batch(m.BatchID, func() (*dispatch.Batch, error) { return j.load(ctx, m.BatchID, m.TenantID) })
	if err != nil || b == nil {
		return nil, nil, err
	}
	if b.TenantID != m.TenantID {
		return nil, nil, funcproto.TenantMismatch("batch")
	}
	if b.State != dispatch.StateProcessing {
		funcproto.Logf(ctx, "dispatch-record: batch %s is %s; records %v acknowledged", b.BatchID, b.State, indexes)
		return nil, nil, nil
	}
	all, err := j.batches().RecordsOf(ctx, b, indexes)
	if apperr.KindOf(err) == apperr.KindNotFound {
		return nil, nil, funcproto.Permanent(err)
	}
	if err != nil {
		return nil, nil, err
	}
	recs := all[:0]
	for _, r := range all {
		if r.State != dispatch.RecordPending || r.Status != dispatch.RecordReady {
			funcproto.Logf(ctx, "dispatch-record: batch %s record %d is %s; left out", b.BatchID, r.Index, r.State)
			continue
		}
		recs = append(recs, r)
	}
	return b, recs, nil
}

// processed records outs for recs as read (counters in the same transaction) and interprets
// the change's effects. written says which were written (false: processed meanwhile).
func (j *Job) processed(ctx context.Context, b *dispatch.Batch, recs []*dispatch.Record, outs []dispatch.Outcome) ([]bool, error) {
	after, ch, written, err := j.batches().ProcessedMany(ctx, b.TenantID, b, recs, outs)
	if errors.Is(err, dispatch.ErrRecordDone) || errors.Is(err, dispatch.ErrNotProcessing) {
		funcproto.Logf(ctx, "dispatch-record: batch %s records processed before; message acknowledged", b.BatchID)
		return make([]bool, len(recs)), nil
	}
	if err != nil {
		return nil, err
	}
	for i, o := range outs {
		if written[i] && o.Err != "" {
			funcproto.Logf(ctx, "dispatch-record: batch %s record %d failed (%s)", b.BatchID, recs[i].Index, o.Err)
		}
	}
	return written, effects.EmitBatchProgress(ctx, after, ch.Effects)
}

// process renders, stores and delivers one record. A permanent failure comes back as the
// outcome's Err (with what was decided so far); err is for a failure worth retrying.
func (j *Job) process(ctx context.Context, b *dispatch.Batch, r *dispatch.Record) (dispatch.Outcome, []delivery.InviteMessage, error) {
	o := dispatch.Outcome{CorrelationID: b.RecordCorrelationID(r.Index)}
	if err := j.Licence.Allow(b.Settings.Plan()); err != nil { // it may have lost a feature since the intake
		o.Err = reasonLicence + codeOf(err)
		return o, nil, nil
	}
	raw, err := j.Cipher.Decrypt(r.DataEnc, dispatch.RecordAAD(b.BatchID, r.Index))
	if err != nil {
		o.Err = ReasonUnreadable
		return o, nil, nil
	}
	record, err := render.DecodeRecord("record", raw)
	if err != nil {
		o.Err = ReasonUnreadable
		return o, nil, nil
	}
	pkg, err := j.loadTemplate(ctx, b.TemplatePath)
	if permanent(err) {
		o.Err = reasonRender + codeOf(err)
		return o, nil, nil
	}
	if err != nil {
		return o, nil, err
	}
	own := dispatch.OwnKeys(pkg, record)
	now := j.Now().UTC()
	if err := template.Errors("record", pkg.Validate(record, now)); err != nil {
		o.Err = reasonRender + codeOf(err)
		return o, nil, nil
	}
	d := newDocument(b, r, pkg, record, raw)
	d.CreatedAt = now
	o.CorrelationID, o.DocumentID, o.PDFBlobPath = d.CorrelationID, d.DocumentID, d.PDFBlobPath
	d, _, err = j.Producer.Produce(ctx, pkg, record, d)
	if permanent(err) {
		o.Err = reasonRender + codeOf(err)
		return o, nil, nil
	}
	if err != nil {
		return o, nil, err
	}
	o.PDFHash = d.PDFHash
	if b.Settings.DeliveryMode != dispatch.DeliverySecureEmail {
		return o, nil, nil
	}
	c, err := j.Creator.Create(ctx, delivery.Requester{TenantID: b.TenantID, CallerID: b.SubmittedBy, Actor: systemActor},
		deliveryKeyPrefix+b.BatchID+":"+strconv.Itoa(r.Index), deliveryRequest(b, d, own))
	if permanent(err) {
		o.Err = reasonDelivery + codeOf(err)
		return o, nil, nil
	}
	if err != nil {
		return o, nil, err
	}
	o.DeliveryIDs = c.DeliveryIDs
	invites, _ := c.Messages(delivery.ModeSecureEmail, b.TenantID)
	return o, invites, nil
}

// permanent reports whether err can never go away by retrying: a refusal of the input (400,
// 404, 409), as opposed to storage or a provider being unavailable.
func permanent(err error) bool {
	switch apperr.KindOf(err) {
	case apperr.KindInvalid, apperr.KindNotFound, apperr.KindConflict:
		return err != nil
	}
	return false
}

func codeOf(err error) string {
	if e, ok := apperr.As(err); ok && e.Code != "" {
		return e.Code
	}
	return "error"
}

// newDocument is the record's document: its correlationId is <batch correlationId>-<index+1>
// (unique: a document id made by documentIdTemplate repeats across batches, a customer's
// statement every month, and would collide with an earlier batch's document); its documentId
// the expansion of Settings.DocumentIDTemplate (or the package's), else the correlationId; its
// path documents/<tid>/dispatch/<batchId>/<fileName> (dispatch.FileName, with the record's
// NameSeq the intake gave it); its referenceId the batch. The request hash
// covers the batch, the index and the record, so a redelivered record adopts its own PDF.
func newDocument(b *dispatch.Batch, r *dispatch.Record, pkg *template.Package, record map[string]any, raw []byte) *document.Document {
	text := func(k string) string { return pkg.Text(record, k) }
	s := b.Settings
	cid := b.RecordCorrelationID(r.Index)
	docID := ""
	if s.DocumentIDTemplate != "" {
		docID = strings.TrimSpace(template.Expand(s.DocumentIDTemplate, text))
	} else if pkg.DocumentIDTemplate != "" {
		docID = strings.TrimSpace(template.Expand(pkg.DocumentIDTemplate, text))
	}
	if docID == "" {
		docID = cid
	}
	d := &document.Document{
		CorrelationID: cid, TenantID: b.TenantID, CreatedBy: b.SubmittedBy, DocumentID: docID,
		DocType: cmp.Or(s.DocType, pkg.Name), Title: cmp.Or(strings.TrimSpace(template.Expand(pkg.Title, text)), pkg.Name),
		TemplatePath: b.TemplatePath, TemplateName: pkg.Name, TemplateVersion: pkg.Version,
		PDFBlobPath: render.ContainerDocuments + "/" + blobpath.TenantName(b.TenantID, recordDir, b.BatchID, "/", dispatch.FileName(s.FileNameTemplate, r.Index, cid, text, r.NameSeq)),
		GeneratedBy: s.GeneratedBy, SourceSystem: s.SourceSystem, ReferenceID: b.BatchID,
	}
	sum := sha256.Sum256([]byte(b.BatchID + "\x00" + strconv.Itoa(r.Index) + "\x00" + string(raw)))
	d.RequestHash = hex.EncodeToString(sum[:])
	return d
}

// deliveryRequest is the record's secure-email delivery: one recipient per recipientEmail
// entry (';'-separated), named by the recipientName entry of the same position.
func deliveryRequest(b *dispatch.Batch, d *document.Document, record map[string]any) delivery.CreateRequest {
	var emails []string
	for _, e := range splitList(record[dispatch.KeyRecipientEmail]) {
		if e != "" {
			emails = append(emails, e)
		}
	}
	names := splitList(record[dispatch.KeyRecipientName])
	req := delivery.CreateRequest{CorrelationID: d.CorrelationID, DocumentID: d.DocumentID,
		DocumentName: d.PDFBlobPath[strings.LastIndexByte(d.PDFBlobPath, '/')+1:], PDFBlobPath: d.PDFBlobPath,
		Mode: delivery.ModeSecureEmail}
	for i, e := range emails {
		rc := delivery.Recipient{Email: e}
		if i < len(names) {
			rc.Name = names[i]
		}
		req.Recipients = append(req.Recipients, rc)
	}
	h := b.Settings.ExpiresInHours
	if h <= 0 {
		h = dispatch.DefaultExpiresInHours
	}
	req.ExpiresInHours = &h
	return req
}

// splitList is a ';'-separated field's entries, trimmed, empty ones kept (names stay aligned
// with the addresses by position; the addresses drop theirs, as the intake counts them).
func splitList(v any) []string {
	s, _ := v.(string)
	if strings.TrimSpace(s) == "" {
		return nil
	}
	parts := strings.Split(s, defaultRecordSeparator)
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}
