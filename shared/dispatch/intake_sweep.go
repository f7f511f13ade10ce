package dispatch

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/blobpath"
	"github.com/esign-svc/esign/shared/kernel"
)

// An intake stores its record rows a chunk at a time and its batch row last (Intake.Submit): one
// that fails or dies in between leaves record rows (each record's data encrypted) and blobs that
// no read finds. So the intake puts its batch on a schedule of intakes under way before its
// first chunk (one upsert), due IntakeSafeAge later; a failed intake deletes what it stored then
// and there (discard) and forgets its entry; the processor's timer (IntakeSweep) takes the due
// entries of intakes that died: a batch with a batch row is left alone, one without is
// discarded.

// IntakeSafeAge is how long after its start an intake's entry falls due: longer than any intake
// request runs (the dispatcher's request timeout is minutes), so the sweep never discards an
// intake still under way.
const IntakeSafeAge = time.Hour

// discardTimeout bounds a failed request's clean-up (on a context of its own: the request's may
// be the one cancelled). What it does not finish the sweep does.
const discardTimeout = time.Minute

// IntakeSchedule is the schedule of intakes under way (batchstore.Store.Intakes): adding a
// batch's entry, the due entries, forgetting one.
type IntakeSchedule interface {
	kernel.DueChecks
	Add(ctx context.Context, id string, at time.Time) error
}

// BlobDeleter deletes a blob; a missing one is no error (blobstore.Store.DeleteIfExists).
type BlobDeleter interface {
	DeleteIfExists(ctx context.Context, container, name string) error
}

// IntakeBlobs are the blobs the intake writes and, after a failure, deletes.
type IntakeBlobs interface {
	Blobs
	BlobDeleter
}

// IntakeEntry is a batch's id on the intake schedule: "<batchId>|<tenantId>" (the tenant
// names the blob folder; "|" is in neither: the batch id is ours, a tenant id a GUID).
func IntakeEntry(b *Batch) string { return b.BatchID + "|" + b.TenantID }

// batchOfEntry is the batch an intake entry names, with its blob paths (placeBlobs).
func batchOfEntry(id string) (*Batch, bool) {
	batchID, tenant, ok := strings.Cut(id, "|")
	if !ok || batchID == "" || tenant == "" {
		return nil, false
	}
	b := &Batch{BatchID: batchID, TenantID: tenant}
	placeBlobs(b)
	return b, true
}

// placeBlobs sets the batch's blob paths under its tenant's folders (DESIGN 14); later reads
// take the stored paths.
func placeBlobs(b *Batch) {
	b.RecordsPath = ContainerDispatch + "/" + blobpath.TenantName(b.TenantID, b.BatchID, "/records.jsonl")
	b.ReceiptPath = ContainerReceipts + "/" + blobpath.TenantName(b.TenantID, b.BatchID, ".pdf")
}

// intakeBlob is one blob the intake writes.
type intakeBlob struct{ container, name string }

// intakeBlobs are the blobs the intake writes for b, in the order it writes them: the records
// (JSONL), the JSON receipt, the PDF receipt.
func intakeBlobs(b *Batch) [3]intakeBlob {
	return [3]intakeBlob{
		{ContainerDispatch, strings.TrimPrefix(b.RecordsPath, ContainerDispatch+"/")},
		{ContainerDispatch, receiptJSONName(b)},
		{ContainerReceipts, strings.TrimPrefix(b.ReceiptPath, ContainerReceipts+"/")},
	}
}

// RecordDeleter deletes a batch's record rows (batchstore.Store.DeleteRecords).
type RecordDeleter interface {
	DeleteRecords(ctx context.Context, batchID string) (int, error)
}

// discard deletes what an intake of b stored: its record rows and its three blobs (each
// missing one is no error). The caller has made sure b has no batch row. Errors: the stores',
// joined (what was deleted stays deleted).
func discard(ctx context.Context, st RecordDeleter, blobs BlobDeleter, b *Batch) error {
	_, err := st.DeleteRecords(ctx, b.BatchID)
	errs := []error{err}
	for _, w := range intakeBlobs(b) {
		errs = append(errs, blobs.DeleteIfExists(ctx, w.container, w.name))
	}
	return errors.Join(errs...)
}

// abandon is the clean-up of a failed Submit of b, whose intake entry is due at due: on a
// context of its own (bounded by discardTimeout), when b has no batch row (looked for only
// when CreateBatch was tried: before it none can exist), its record rows and blobs are deleted
// and then its entry forgotten. Best effort: what fails stays for the sweep, the entry with it.
func (in *Intake) abandon(ctx context.Context, b *Batch, due time.Time, createTried bool) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), discardTimeout)
	defer cancel()
	if createTried {
		if _, err := in.Store.Load(ctx, b.BatchID); apperr.KindOf(err) != apperr.KindNotFound {
			return // written after all (an answer lost on the way), or unknown: the sweep looks again
		}
	}
	if discard(ctx, in.Store, in.Blobs, b) != nil {
		return
	}
	_ = in.Intakes.Forget(ctx, kernel.Due{ID: IntakeEntry(b), At: due})
}

// IntakeStore is what the sweep needs of the batch store: whether a batch row exists, and
// deleting a batch's record rows.
type IntakeStore interface {
	Load(ctx context.Context, batchID string) (*Batch, error)
	RecordDeleter
}

// IntakeSweep is the processor timer's use case over the intakes that died (no chance to clean
// up: the dispatcher stopped mid-request).
type IntakeSweep struct {
	Schedule IntakeSchedule
	Store    IntakeStore
	Blobs    BlobDeleter
}

// Run takes up to limit entries of the intake schedule due by now (intakes that started at
// least IntakeSafeAge before): an entry of a batch whose batch row exists is forgotten (the
// intake finished; CreateBatch leaves its entry to this run); one without a batch row has its
// record rows and blobs deleted, then the entry forgotten; a malformed entry is forgotten. It
// answers how many batches it discarded (CheckRun.Sent); a failure keeps the entry for the next
// run and comes back joined.
func (s *IntakeSweep) Run(ctx context.Context, now time.Time, limit int) (kernel.CheckRun, error) {
	if s.Schedule == nil || s.Store == nil || s.Blobs == nil {
		return kernel.CheckRun{}, errors.New("dispatch: the intake sweep is not wired")
	}
	return kernel.RunDue(ctx, s.Schedule, now, limit, func(ctx context.Context, id string) (int, error) {
		b, ok := batchOfEntry(id)
		if !ok {
			return 0, nil
		}
		_, err := s.Store.Load(ctx, b.BatchID)
		if err == nil {
			return 0, nil
		}
		if apperr.KindOf(err) != apperr.KindNotFound {
			return 0, err
		}
		if err := discard(ctx, s.Store, s.Blobs, b); err != nil {
			return 0, err
		}
		return 1, nil
	})
}
