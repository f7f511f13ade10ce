package dispatch

import (
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/text"
)

// Audit event kinds (DESIGN 5: dotted names).
const (
	EvSubmitted        = "batch.submitted"
	EvPendingApproval  = "batch.pending_approval"
	EvInvalid          = "batch.invalid"
	EvApproved         = "batch.approved"
	EvQueued           = "batch.queued"
	EvRejected         = "batch.rejected"
	EvChangesRequested = "batch.changes_requested"
	EvCancelled        = "batch.cancelled"
	EvProcessing       = "batch.processing"
	EvRecordProcessed  = "batch.record_processed"
	EvRecordFailed     = "batch.record_failed"
	EvCompleted        = "batch.completed"
	EvPartiallyFailed  = "batch.partially_failed"
	// EvNoticeSent audits a notice e-mail (data: kind, count of recipients; never an address);
	// EvNoticeSkipped one that had no recipient.
	EvNoticeSent    = "batch.notice_sent"
	EvNoticeSkipped = "batch.notice_skipped"
)

// Effects of the batch machine; the apps' interpreters know each of them.
const (
	EffectNotifyApprovers EffectKind = "notify_approvers" // e-mail the approvers the batch summary
	EffectEnqueue         EffectKind = "enqueue"          // put the batch on the dispatch queue
	EffectFinish          EffectKind = "finish"           // every ready record is processed: finish the batch
	EffectNotifySubmitter EffectKind = "notify_submitter" // e-mail the submitter that the batch finished
)

// Errors of the machine.
var (
	// ErrInvalidState refuses a decide or cancel outside pending-approval and changes-requested
	// (409).
	ErrInvalidState = apperr.New(apperr.KindConflict, "invalid_state",
		"the batch can be decided or cancelled only in pending-approval or changes-requested")
	// ErrSelfApproval refuses a submitter deciding their own batch (403) unless the deployment
	// allows it (DISPATCH_ALLOW_SELF_APPROVAL).
	ErrSelfApproval = apperr.New(apperr.KindForbidden, "self_approval", "the submitter cannot decide their own batch")
	// ErrNotQueued: the batch is not waiting on the queue (a redelivered dispatch message).
	ErrNotQueued = apperr.New(apperr.KindConflict, "batch_not_queued", "the batch is not queued")
	// ErrNotProcessing: records and the finish act only on a processing batch.
	ErrNotProcessing = apperr.New(apperr.KindConflict, "batch_not_processing", "the batch is not processing")
	// ErrRecordDone: the record was processed already (a redelivered record message).
	ErrRecordDone = apperr.New(apperr.KindConflict, "record_already_processed", "the record was processed already")
)

// Tally is a new batch's records as its counters need them: each record's readiness by
// index, a byte each (the intake keeps no record past its chunk).
type Tally struct {
	Ready          []bool // Ready[i]: record i is DISPATCH_READY
	Failed, Warned int
}

// Add counts the next record (index len(t.Ready)).
func (t *Tally) Add(r Record) {
	ready := r.Status != RecordInvalid
	t.Ready = append(t.Ready, ready)
	switch {
	case !ready:
		t.Failed++
	case r.Warning:
		t.Warned++
	}
}

// TallyOf tallies records (in index order).
func TallyOf(records []Record) Tally {
	var t Tally
	for _, r := range records {
		t.Add(r)
	}
	return t
}

// Readiness of the records tallied: INVALID when any record is invalid, PARTIAL when any has
// warnings, else READY.
func (t Tally) Readiness() Readiness {
	switch {
	case t.Failed > 0:
		return ReadyInvalid
	case t.Warned > 0:
		return ReadyPartial
	}
	return ReadyAll
}

// Submit is the change of a new batch (spec "Batch states", first three rows): the counters
// from its records, then invalid (any record invalid), pending-approval (approval required:
// the approvers are notified) or queued (auto-approved: enqueued).
func Submit(b *Batch, records []Record, requireApproval bool, now time.Time) Change {
	return SubmitTally(b, TallyOf(records), requireApproval, now)
}

// SubmitTally is Submit from the records' tally.
func SubmitTally(b *Batch, t Tally, requireApproval bool, now time.Time) Change {
	var c Change
	b.CreatedAt, b.UpdatedAt = now, now
	b.DocumentCount, b.FailedCount, b.WarningCount = len(t.Ready), t.Failed, t.Warned
	b.ReadyCount = b.DocumentCount - b.FailedCount
	b.Readiness = t.Readiness()
	c.Record(EvSubmitted, kernel.NoSlot, now, map[string]any{
		"templatePath": b.TemplatePath, "templateName": b.TemplateName, "templateVersion": b.TemplateVersion,
		"documentCount": b.DocumentCount, "readyCount": b.ReadyCount, "failedCount": b.FailedCount,
		"warningCount": b.WarningCount, "readiness": string(b.Readiness), "supersedes": b.Supersedes,
	})
	switch {
	case b.Readiness == ReadyInvalid:
		b.State = StateInvalid
		c.Record(EvInvalid, kernel.NoSlot, now, nil)
	case requireApproval:
		b.State = StatePendingApproval
		c.Record(EvPendingApproval, kernel.NoSlot, now, nil)
		c.Ask(EffectNotifyApprovers, kernel.NoSlot)
	default:
		queue(b, &c, now)
	}
	return c
}

func queue(b *Batch, c *Change, now time.Time) {
	b.State, b.QueuedAt = StateQueued, now
	c.Record(EvQueued, kernel.NoSlot, now, nil)
	c.Ask(EffectEnqueue, kernel.NoSlot)
}

// Decide applies an approver's decision (spec "decide"): approve queues the batch (approved is
// the moment just before), reject ends it, request-changes stores the comments. by is the
// decider's caller id. Errors: ErrInvalidState; ErrSelfApproval when by submitted the batch and
// allowSelf is false; 400 for an unknown decision or comments shared/text refuses (lines of
// text).
func Decide(b *Batch, d Decision, by, comments string, allowSelf bool, now time.Time) (Change, error) {
	var c Change
	if !b.State.Decidable() {
		return c, ErrInvalidState
	}
	if by == b.SubmittedBy && !allowSelf {
		return c, ErrSelfApproval
	}
	if why := text.Problem(comments, text.Lines); why != "" { // kept in the audit row
		return c, apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field("comments", why))
	}
	data := map[string]any{"decision": string(d), "comments": comments}
	switch d {
	case DecisionApprove:
		b.State = StateApproved
		c.Record(EvApproved, kernel.NoSlot, now, data)
		queue(b, &c, now)
	case DecisionReject:
		b.State = StateRejected
		c.Record(EvRejected, kernel.NoSlot, now, data)
	case DecisionRequestChanges:
		b.State = StateChangesRequested
		c.Record(EvChangesRequested, kernel.NoSlot, now, data)
	default:
		return Change{}, apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field("decision", "must be approve, reject or request-changes"))
	}
	b.ApprovedBy, b.DecisionComments, b.DecidedAt, b.UpdatedAt = by, comments, now, now
	return c, nil
}

// Cancel ends a batch that has not started (spec "cancel"). Errors: ErrInvalidState.
func Cancel(b *Batch, now time.Time) (Change, error) {
	var c Change
	if !b.State.Decidable() {
		return c, ErrInvalidState
	}
	b.State, b.UpdatedAt = StateCancelled, now
	c.Record(EvCancelled, kernel.NoSlot, now, nil)
	return c, nil
}

// StartProcessing is the processor's pickup: queued to processing. A batch without a ready
// record (cannot happen: such a batch is invalid) finishes at once. Errors: ErrNotQueued.
func StartProcessing(b *Batch, now time.Time) (Change, error) {
	var c Change
	if b.State != StateQueued {
		return c, ErrNotQueued
	}
	b.State, b.UpdatedAt = StateProcessing, now
	c.Record(EvProcessing, kernel.NoSlot, now, map[string]any{"records": b.ReadyCount})
	if b.Done() {
		c.Ask(EffectFinish, kernel.NoSlot)
	}
	return c, nil
}

// Outcome is what processing one record produced.
type Outcome struct {
	CorrelationID string
	DocumentID    string
	PDFBlobPath   string
	PDFHash       string
	DeliveryIDs   []string
	Err           string // a short reason without personal data; empty: done
}

// Processed records a record's outcome: the record done or failed, the batch's ProcessedCount
// (and ErrorCount) one up, and, with the last record, EffectFinish. The change's slot is the
// record's index. Errors: ErrNotProcessing; ErrRecordDone for a record processed before.
func Processed(b *Batch, r *Record, o Outcome, now time.Time) (Change, error) {
	var c Change
	if b.State != StateProcessing {
		return c, ErrNotProcessing
	}
	if r.State != RecordPending || r.Status != RecordReady {
		return c, ErrRecordDone
	}
	r.CorrelationID, r.DocumentID, r.PDFBlobPath, r.PDFHash = o.CorrelationID, o.DocumentID, o.PDFBlobPath, o.PDFHash
	r.DeliveryIDs, r.ProcessedAt = o.DeliveryIDs, now
	b.ProcessedCount++
	b.UpdatedAt = now
	if o.Err != "" {
		r.State, r.Error = RecordFailed, o.Err
		b.ErrorCount++
		c.Record(EvRecordFailed, r.Index, now, map[string]any{"correlationId": o.CorrelationID, "error": o.Err})
	} else {
		r.State = RecordDone
		c.Record(EvRecordProcessed, r.Index, now, map[string]any{"correlationId": o.CorrelationID,
			"documentId": o.DocumentID, "pdfBlobPath": o.PDFBlobPath, "pdfHash": o.PDFHash, "deliveries": len(o.DeliveryIDs)})
	}
	c.Touch(r.Index)
	if b.Done() {
		c.Ask(EffectFinish, kernel.NoSlot)
	}
	return c, nil
}

// Finish ends a processing batch whose ready records are all processed: completed when none
// failed, else partially-failed; the submitter is notified. combined and bundle are the paths
// of the merged PDF and the ZIP ("" when not asked for). Errors: ErrNotProcessing (finished
// before, or not started); ErrInvalidState when records are still outstanding.
func Finish(b *Batch, combined, bundle string, now time.Time) (Change, error) {
	var c Change
	if b.State != StateProcessing {
		return c, ErrNotProcessing
	}
	if !b.Done() {
		return c, apperr.New(apperr.KindConflict, "records_outstanding", "%d of %d records are still to be processed",
			b.ReadyCount-b.ProcessedCount, b.ReadyCount)
	}
	b.CombinedPath, b.BundlePath, b.CompletedAt, b.UpdatedAt = combined, bundle, now, now
	data := map[string]any{"processedCount": b.ProcessedCount, "errorCount": b.ErrorCount,
		"combinedPath": combined, "bundlePath": bundle}
	if b.ErrorCount == 0 {
		b.State = StateCompleted
		c.Record(EvCompleted, kernel.NoSlot, now, data)
	} else {
		b.State = StatePartiallyFailed
		c.Record(EvPartiallyFailed, kernel.NoSlot, now, data)
	}
	c.Ask(EffectNotifySubmitter, kernel.NoSlot)
	return c, nil
}
