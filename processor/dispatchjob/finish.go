package dispatchjob

import (
	"archive/zip"
	"cmp"
	"context"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/blobpath"
	"github.com/esign-svc/esign/shared/dispatch"
	"github.com/esign-svc/esign/shared/effects"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/licensing"
	"github.com/esign-svc/esign/shared/render"
)

// maxRecordPDF bounds one record PDF read for the combined PDF or the bundle.
const maxRecordPDF = 64 << 20

// EvArtifactFailed records that a finish given up by the host ended the batch without its
// combined PDF or ZIP bundle.
const EvArtifactFailed = dispatch.EvArtifactFailed

// HandleFinish is the DispatchFinish queue function (dispatch.BatchMessage): with every ready
// record processed it writes the combined PDF (mode combined) or the ZIP bundle (zipBundle),
// meters the records made (meterDone), then ends the batch completed or partially-failed and
// queues the submitter's notice. A batch
// finished before (a redelivered message) is acknowledged with nothing written; a retry before
// the finish was recorded writes the combined PDF or the bundle again, whole.
func (j *Job) HandleFinish(ctx context.Context, qm funcproto.QueueMessage) error {
	return j.finish(ctx, qm, false)
}

// HandleFinishPoison is the DispatchFinish-poison queue function: the host gave up on a
// finish (the combined PDF or the ZIP bundle could not be written). So that the batch does not
// stay processing for good, it finishes the batch without them, recording
// batch.artifact_failed (what was not made) before the batch's final state.
func (j *Job) HandleFinishPoison(ctx context.Context, qm funcproto.QueueMessage) error {
	return j.finish(ctx, qm, true)
}

func (j *Job) finish(ctx context.Context, qm funcproto.QueueMessage, poisoned bool) error {
	_, b, err := j.loadBatch(ctx, qm)
	if err != nil || b == nil {
		return err
	}
	if b.State != dispatch.StateProcessing || !b.Done() {
		funcproto.Logf(ctx, "dispatch-finish: batch %s is %s with %d of %d records processed; message acknowledged",
			b.BatchID, b.State, b.ProcessedCount, b.ReadyCount)
		return nil
	}
	var combined, bundle, failed string
	done := b.ProcessedCount - b.ErrorCount
	switch {
	case done == 0:
	case poisoned:
		failed = "bundle"
		if b.Settings.Mode == dispatch.ModeCombined {
			failed = "combined"
		} else if !b.Settings.ZipBundle {
			failed = ""
		}
	case b.Settings.Mode == dispatch.ModeCombined:
		if combined, err = j.combine(ctx, b); err != nil {
			return err
		}
	case b.Settings.ZipBundle:
		if bundle, err = j.bundle(ctx, b); err != nil {
			return err
		}
	}
	if err := j.meterDone(ctx, b); err != nil {
		return err
	}
	after, ch, err := j.batches().Finish(ctx, b.TenantID, b.BatchID, systemActor,
		dispatch.Artifacts{Combined: combined, Bundle: bundle, Failed: failed, Reason: ReasonRetriesExhausted})
	if errors.Is(err, dispatch.ErrNotProcessing) {
		funcproto.Logf(ctx, "dispatch-finish: batch %s finished before; message acknowledged", b.BatchID)
		return nil
	}
	if err != nil {
		return err
	}
	funcproto.Logf(ctx, "dispatch-finish: batch %s %s (%d processed, %d failed)", after.BatchID, after.State, after.ProcessedCount, after.ErrorCount)
	return effects.EmitBatchProgress(ctx, after, ch.Effects)
}

// meterPage is how many records made one licence-usage message carries from a finish by
// default (Job.MeterPage; about 100 bytes each: well inside a queue message's 64 KiB).
const meterPage = 250

// meterDone queues the batch.record usage of every record the batch made (its done records),
// Job.MeterPage to a licence-usage message, when metering is on (DESIGN 19): once a batch, at its
// finish (issue 26: a message per record group cost the account about 0.4 queue requests a
// record), in the same invocation's outputs as the finish, so a finish that fails meters nothing
// and its retry meters all; a record is metered whatever became of the artifact. Usage is
// idempotent by id, so a finish run twice meters twice harmlessly. A batch can only end through
// its finish (a processing batch cannot be cancelled), so no record made goes unmetered.
func (j *Job) meterDone(ctx context.Context, b *dispatch.Batch) error {
	if !j.Meter.On {
		return nil
	}
	var page [][]string
	flush := func() error {
		err := effects.MeterGroup(ctx, j.Meter, licensing.KindBatchRecord, b.TenantID, page)
		page = page[:0]
		return err
	}
	err := j.eachDone(ctx, b, func(r *dispatch.Record) error {
		if page = append(page, []string{b.BatchID, strconv.Itoa(r.Index)}); len(page) == cmp.Or(j.MeterPage, meterPage) {
			return flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	return flush()
}

// eachDone calls fn with every done record of the batch in index order, a page at a time.
func (j *Job) eachDone(ctx context.Context, b *dispatch.Batch, fn func(r *dispatch.Record) error) error {
	return j.batches().EachDone(ctx, b, j.page(), fn)
}

// combine merges every done record's PDF in index order into
// documents/<tid>/dispatch/<batchId>/combined.pdf: the merger writes each record's pages as it reads
// them into a pipe read by a block-by-block upload, so memory holds the record PDFs read ahead
// (eachDonePDF) and the output's object offsets, never the merged document.
func (j *Job) combine(ctx context.Context, b *dispatch.Batch) (string, error) {
	name := blobpath.TenantName(b.TenantID, recordDir, b.BatchID, "/", combinedName, ".pdf")
	err := j.upload(ctx, render.ContainerDocuments, name, "application/pdf", func(w io.Writer) error {
		m, err := newMerger(w)
		if err != nil {
			return err
		}
		err = j.eachDonePDF(ctx, b, func(r *dispatch.Record, raw []byte) error {
			if err := m.add(raw); err != nil {
				return apperr.Wrap(err, apperr.KindInternal, "combine_failed", "record %d's PDF does not merge", r.Index)
			}
			return nil
		})
		if err != nil {
			return err
		}
		return m.close()
	})
	return render.ContainerDocuments + "/" + name, err
}

// bundle streams every done record's PDF, in index order, into bundles/<tenant>/<batchId>.zip
// (under the tenant's folder, DESIGN 14): the ZIP is written into a pipe read by a
// block-by-block upload, so the archive is never whole in memory, only the record PDFs read
// ahead (eachDonePDF).
func (j *Job) bundle(ctx context.Context, b *dispatch.Batch) (string, error) {
	name := blobpath.TenantName(b.TenantID, b.BatchID, ".zip")
	err := j.upload(ctx, ContainerBundle, name, "application/zip", func(w io.Writer) error {
		zw := zip.NewWriter(w)
		err := j.eachDonePDF(ctx, b, func(r *dispatch.Record, raw []byte) error {
			f, err := zw.CreateHeader(&zip.FileHeader{Name: r.PDFBlobPath[strings.LastIndexByte(r.PDFBlobPath, '/')+1:], Method: zip.Store, Modified: r.ProcessedAt})
			if err != nil {
				return err
			}
			_, err = f.Write(raw)
			return err
		})
		if err != nil {
			return err
		}
		return zw.Close()
	})
	return ContainerBundle + "/" + name, err
}

// upload writes what write produces to container/name through a pipe (the upload sends it
// block by block), creating the container when it is missing. A failed write fails the upload.
func (j *Job) upload(ctx context.Context, container, name, ctype string, write func(io.Writer) error) error {
	if err := j.Blobs.EnsureContainer(ctx, container); err != nil {
		return err
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(write(pw)) }()
	_, err := j.Blobs.Put(ctx, container, name, pr, ctype, nil)
	pr.CloseWithError(errors.New("dispatch: upload ended")) // unblocks the writer when Put stopped early
	return err
}

// readAhead is how many record PDFs the finish reads ahead of the one it writes: the reads of a
// 10,000-record finish overlap instead of waiting one after the other, and memory holds at most
// readAhead+1 record PDFs whatever the number of records.
const readAhead = 4

// donePDF is a done record and its PDF as read (or the read's error).
type donePDF struct {
	r   *dispatch.Record
	raw []byte
	err error
}

// eachDonePDF calls fn with every done record of the batch and its PDF, in index order, while
// up to readAhead of the following PDFs are read concurrently. The first error (a page, a read,
// fn) stops it and is returned; the reads still under way are cancelled.
func (j *Job) eachDonePDF(ctx context.Context, b *dispatch.Batch, fn func(r *dispatch.Record, raw []byte) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pending := make(chan chan donePDF, readAhead) // the reads in index order; a full channel holds the lister
	listed := make(chan error, 1)
	go func() {
		defer close(pending)
		listed <- j.eachDone(ctx, b, func(r *dispatch.Record) error {
			res := make(chan donePDF, 1)
			select {
			case pending <- res:
			case <-ctx.Done():
				return ctx.Err()
			}
			go func() {
				raw, err := j.read(ctx, r.PDFBlobPath)
				res <- donePDF{r: r, raw: raw, err: err}
			}()
			return nil
		})
	}()
	for res := range pending {
		d := <-res
		if d.err == nil {
			d.err = fn(d.r, d.raw)
		}
		if d.err != nil {
			cancel()
			for range pending { // let the lister end; each read sends into its own buffer
			}
			return d.err
		}
	}
	return <-listed
}

// read is one record PDF, whole (bounded by maxRecordPDF).
func (j *Job) read(ctx context.Context, path string) ([]byte, error) {
	c, n, _ := strings.Cut(path, "/")
	body, _, err := j.Blobs.Open(ctx, c, n)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	raw, err := io.ReadAll(io.LimitReader(body, maxRecordPDF+1))
	if err == nil && len(raw) > maxRecordPDF {
		err = apperr.New(apperr.KindInternal, "combine_failed", "a record PDF exceeds %d bytes", maxRecordPDF)
	}
	return raw, err
}
