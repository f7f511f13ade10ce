package dispatch

import (
	"context"
	"strings"
	"time"
)

// maxReceiptPDF bounds the stored receipt PDF read back (10,000 records fit well inside).
const maxReceiptPDF = 64 << 20

// RecordPage is one page of a batch's records (batchstore.Page).
type RecordPage struct {
	Records []Record
	// Next is the continuation token of the next page; "" on the last.
	Next string
}

// BatchStore is what the batch use cases need of the batch store (batchstore.Store): the
// transitions' Update, the reads of the routes and the record jobs, a record's outcome with the
// batch's counters, and the notices sent once.
type BatchStore interface {
	Updater
	// Load reads a batch row. Errors: ErrBatchNotFound; the store's.
	Load(ctx context.Context, batchID string) (*Batch, error)
	// List is a page of the tenant's batches, newest first, those in state when it is not
	// empty: at most limit after the continuation token after ("": the first page).
	List(ctx context.Context, tenant string, state State, after string, limit int) (BatchPage, error)
	// Records lists up to limit records in index order after the continuation token after,
	// those of filter (an intake status or a record state) when it is not empty.
	Records(ctx context.Context, batchID, filter, after string, limit int) (RecordPage, error)
	// RecordsFrom is Records from record index from on.
	RecordsFrom(ctx context.Context, batchID, filter string, from, limit int) (RecordPage, error)
	// Record reads one record row.
	Record(ctx context.Context, batchID string, index int) (*Record, error)
	// Process writes outcome o of a record just read (with its counter, Record.Counter) of
	// batch b as the caller loaded it with its counter shard in one transaction (Processed),
	// trying again while other records land first.
	Process(ctx context.Context, b *Batch, rec *Record, o Outcome, now time.Time) (*Batch, Change, error)
	// RecordsOf reads the records of indexes (ascending: one record message's) with their
	// counters in one query.
	RecordsOf(ctx context.Context, b *Batch, indexes []int) ([]*Record, error)
	// ProcessMany is Process for several records just read (RecordsOf), those of one counter
	// shard in one transaction; written says which outcomes were written (false: processed
	// before); ErrRecordDone when none was.
	ProcessMany(ctx context.Context, b *Batch, recs []*Record, outs []Outcome, now time.Time) (*Batch, Change, []bool, error)
	// Counts are the processed and failed records summed over the batch's counter shards (a
	// record's outcome writes one shard, never the batch row); ok is false for a batch stored
	// without shards, whose row holds its counters.
	Counts(ctx context.Context, batchID string) (processed, failed int, ok bool, err error)
	// SendNotice claims the batch's notice of kind (ErrNoticeSent when it went out before,
	// ErrNoticeInFlight while another worker holds it), runs send and, when send succeeds,
	// marks the notice sent with the events send returns in one transaction; a failed send gives
	// the claim back and is returned as is.
	SendNotice(ctx context.Context, b *Batch, kind string, now time.Time, lease time.Duration, send func() ([]Event, error)) error
}

// own loads a batch of the tenant; another tenant's is ErrBatchNotFound.
func (s *Batches) own(ctx context.Context, tenant, batchID string) (*Batch, error) {
	b, err := s.Store.Load(ctx, batchID)
	if err != nil {
		return nil, err
	}
	if b.TenantID != tenant {
		return nil, ErrBatchNotFound
	}
	return b, nil
}

// BatchPage is one page of a tenant's batches: Total is how many the list selects in all;
// Next the continuation token of the next page ("" on the last).
type BatchPage struct {
	Batches []*Batch
	Total   int
	Next    string
}

// List is a page of the tenant's batches, newest first, those in state when it is not empty,
// at most limit after the continuation token after. Errors: 400 naming continuationToken for
// a token the list did not make; the store's.
func (s *Batches) List(ctx context.Context, tenant string, state State, after string, limit int) (BatchPage, error) {
	return s.Store.List(ctx, tenant, state, after, limit)
}

// Get is a batch of the tenant with its intake receipt (the validation results, read from its
// JSON receipt). Errors: ErrBatchNotFound (also another tenant's); the blobs'.
func (s *Batches) Get(ctx context.Context, tenant, batchID string) (*Batch, Receipt, error) {
	b, err := s.own(ctx, tenant, batchID)
	if err != nil {
		return nil, Receipt{}, err
	}
	rc, err := ReadReceipt(ctx, s.Blobs, b)
	if err != nil {
		return nil, Receipt{}, err
	}
	return b, rc, nil
}

// RecordQuery selects a page of records: those of Filter (an intake status or a record state;
// "": all) after the continuation token After, at most Limit.
type RecordQuery struct {
	Filter, After string
	Limit         int
}

// Records is a page of a batch of the tenant's records (BatchStore.Records); query reads the
// request's selection after the batch is found (a batch that is not found answers first).
// Errors: ErrBatchNotFound; query's; the store's (400 naming continuationToken for a token it
// did not make).
func (s *Batches) Records(ctx context.Context, tenant, batchID string, query func() (RecordQuery, error)) (*Batch, RecordPage, error) {
	b, err := s.own(ctx, tenant, batchID)
	if err != nil {
		return nil, RecordPage{}, err
	}
	q, err := query()
	if err != nil {
		return nil, RecordPage{}, err
	}
	page, err := s.Store.Records(ctx, b.BatchID, q.Filter, q.After, q.Limit)
	if err != nil {
		return nil, RecordPage{}, err
	}
	return b, page, nil
}

// ReceiptPDF is the stored intake receipt PDF of a batch of the tenant. Errors:
// ErrBatchNotFound; the blobs'.
func (s *Batches) ReceiptPDF(ctx context.Context, tenant, batchID string) ([]byte, error) {
	b, err := s.own(ctx, tenant, batchID)
	if err != nil {
		return nil, err
	}
	// the path stored at intake (receipts/<tenant>/<batchId>.pdf; receipts/<batchId>.pdf before
	// tenant folders): every batch has one
	name := strings.TrimPrefix(b.ReceiptPath, ContainerReceipts+"/")
	pdf, _, err := s.Blobs.ReadAll(ctx, ContainerReceipts, name, maxReceiptPDF)
	return pdf, err
}
