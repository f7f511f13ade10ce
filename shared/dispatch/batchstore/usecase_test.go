package batchstore_test

// The batch use cases (dispatch.Batches) on the real store: the routes' reads answer another
// tenant's batch as not found before reading the request's query, and the processor's
// transitions (start, fan-out, record outcome, finish, notices) keep the counters exact, the
// finish asked once and every notice sent once.

import (
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/dispatch"
	"github.com/esign-svc/esign/shared/dispatch/batchstore/storetest"
	"github.com/esign-svc/esign/shared/kernel"
)

// memBlobs holds blobs by container and name (dispatch.Blobs).
type memBlobs map[string][]byte

func (m memBlobs) Put(_ context.Context, container, name string, r io.Reader, _ string, _ map[string]string) (string, error) {
	b, err := io.ReadAll(r)
	m[container+"/"+name] = b
	return "etag", err
}

func (m memBlobs) ReadAll(_ context.Context, container, name string, _ int64) ([]byte, map[string]string, error) {
	b, ok := m[container+"/"+name]
	if !ok {
		return nil, nil, apperr.New(apperr.KindNotFound, "blob_not_found", "no blob")
	}
	return b, nil, nil
}

func (memBlobs) EnsureContainer(context.Context, string) error { return nil }

var jobActor = kernel.Actor{Kind: "system", ID: "dispatch"}

func TestBatchesReadsAnswerAnotherTenantAsNotFound(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	b, _ := newBatch(t, st, "t1", 5, true, false)
	blobs := memBlobs{}
	s := &dispatch.Batches{Store: st, Blobs: blobs, Now: func() time.Time { return now }}

	queried := 0
	query := func() (dispatch.RecordQuery, error) {
		queried++
		return dispatch.RecordQuery{Filter: dispatch.RecordReady, Limit: 2}, nil
	}
	if _, _, err := s.Records(ctx, "t2", b.BatchID, query); !errors.Is(err, dispatch.ErrBatchNotFound) || queried != 0 {
		t.Fatalf("another tenant's records: %v, query read %d time(s); want not found before the query", err, queried)
	}
	got, page, err := s.Records(ctx, "t1", b.BatchID, query)
	if err != nil || got.BatchID != b.BatchID || len(page.Records) != 2 || page.Next == "" || queried != 1 {
		t.Fatalf("records: %v, %d record(s), next %q, query read %d time(s)", err, len(page.Records), page.Next, queried)
	}
	bad := func() (dispatch.RecordQuery, error) {
		return dispatch.RecordQuery{}, apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field("limit", "must be 1 to 1000"))
	}
	if _, _, err := s.Records(ctx, "t1", b.BatchID, bad); apperr.KindOf(err) != apperr.KindInvalid {
		t.Fatalf("a refused query: %v", err)
	}
	if _, err := s.ReceiptPDF(ctx, "t2", b.BatchID); !errors.Is(err, dispatch.ErrBatchNotFound) {
		t.Fatalf("another tenant's receipt: %v", err)
	}
	if _, _, err := s.Get(ctx, "t2", b.BatchID); !errors.Is(err, dispatch.ErrBatchNotFound) {
		t.Fatalf("another tenant's batch: %v", err)
	}
	if list, err := s.List(ctx, "t2", "", "", 100); err != nil || len(list.Batches) != 0 {
		t.Fatalf("another tenant lists %d batch(es): %v", len(list.Batches), err)
	}
	if list, err := s.List(ctx, "t1", dispatch.StatePendingApproval, "", 100); err != nil || len(list.Batches) != 1 || list.Batches[0].BatchID != b.BatchID {
		t.Fatalf("the tenant's pending batches: %v %v", list, err)
	}
}

func TestBatchesReceiptPDFReadsTheStoredPath(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	b, _ := newBatch(t, st, "t1", 2, true, false)
	if _, _, err := st.Update(ctx, b.BatchID, func(x *dispatch.Batch) (dispatch.Change, error) {
		x.ReceiptPath = dispatch.ContainerReceipts + "/t1/" + x.BatchID + ".pdf"
		var ch dispatch.Change
		ch.Record("test.receipt_path", kernel.NoSlot, now, nil)
		return ch, nil
	}); err != nil {
		t.Fatal(err)
	}
	blobs := memBlobs{dispatch.ContainerReceipts + "/t1/" + b.BatchID + ".pdf": []byte("%PDF-receipt")}
	s := &dispatch.Batches{Store: st, Blobs: blobs, Now: func() time.Time { return now }}
	pdf, err := s.ReceiptPDF(ctx, "t1", b.BatchID)
	if err != nil || !bytes.Equal(pdf, []byte("%PDF-receipt")) {
		t.Fatalf("receipt: %q %v", pdf, err)
	}
}

func TestBatchesJobTransitions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	b, recs := newBatch(t, st, "t1", 10, false, false)
	s := &dispatch.Batches{Store: st, Now: func() time.Time { return now }}

	if _, _, err := s.Start(ctx, "t2", b.BatchID, jobActor); !errors.Is(err, dispatch.ErrBatchNotFound) {
		t.Fatalf("another tenant's start: %v", err)
	}
	started, ch, err := s.Start(ctx, "t1", b.BatchID, jobActor)
	if err != nil || started.State != dispatch.StateProcessing || len(ch.Events) == 0 || ch.Events[0].Actor != jobActor {
		t.Fatalf("start: %v, %+v, %+v", err, started, ch.Events)
	}
	again, _, err := s.Start(ctx, "t1", b.BatchID, jobActor)
	if !errors.Is(err, dispatch.ErrNotQueued) || again == nil || again.State != dispatch.StateProcessing {
		t.Fatalf("a redelivered start: %v with %+v; want ErrNotQueued and the batch processing", err, again)
	}

	// the fan-out reads the ready records a page at a time
	var pending []int
	for from, pages := 0, 0; ; pages++ {
		f, err := s.FanoutPage(ctx, started, from, 4)
		if err != nil {
			t.Fatal(err)
		}
		pending = append(pending, f.Pending...)
		if f.Next == 0 {
			if pages != 2 {
				t.Fatalf("%d fan-out pages, want 3", pages+1)
			}
			break
		}
		from = f.Next
	}
	if !slices.Equal(pending, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}) {
		t.Fatalf("fanned out %v", pending)
	}

	finishes := 0
	for _, r := range recs {
		rec, err := s.Record(ctx, b.BatchID, r.Index)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.Processed(ctx, "t2", started, rec, dispatch.Outcome{}); !errors.Is(err, dispatch.ErrBatchNotFound) {
			t.Fatalf("another tenant's record outcome: %v", err)
		}
		o := dispatch.Outcome{CorrelationID: rec.CorrelationID, PDFBlobPath: "documents/t1/x.pdf"}
		if r.Index == 4 {
			o = dispatch.Outcome{Err: "render_failed: x"}
		}
		_, ch, err := s.Processed(ctx, "t1", started, rec, o)
		if err != nil {
			t.Fatal(err)
		}
		if ch.Asks(dispatch.EffectFinish) {
			finishes++
		}
		if _, _, err := s.Processed(ctx, "t1", started, rec, o); !errors.Is(err, dispatch.ErrRecordDone) {
			t.Fatalf("a redelivered record %d: %v, want ErrRecordDone", r.Index, err)
		}
	}
	done := []int{}
	if err := s.EachDone(ctx, started, 3, func(r *dispatch.Record) error { done = append(done, r.Index); return nil }); err != nil {
		t.Fatal(err)
	}
	loaded, err := s.Load(ctx, b.BatchID)
	if err != nil || loaded.ProcessedCount != 10 || loaded.ErrorCount != 1 || finishes != 1 || !slices.Equal(done, []int{0, 1, 2, 3, 5, 6, 7, 8, 9}) {
		t.Fatalf("after the records: %v processed %d errors %d finishes %d done %v", err, loaded.ProcessedCount, loaded.ErrorCount, finishes, done)
	}

	art := dispatch.Artifacts{Failed: "bundle", Reason: "retries_exhausted"}
	if _, _, err := s.Finish(ctx, "t2", b.BatchID, jobActor, art); !errors.Is(err, dispatch.ErrBatchNotFound) {
		t.Fatalf("another tenant's finish: %v", err)
	}
	fin, ch, err := s.Finish(ctx, "t1", b.BatchID, jobActor, art)
	if err != nil || fin.State != dispatch.StatePartiallyFailed || !ch.Asks(dispatch.EffectNotifySubmitter) {
		t.Fatalf("finish: %v, state %v, effects %+v", err, fin, ch.Effects)
	}
	if ch.Events[0].Kind != dispatch.EvArtifactFailed || ch.Events[0].Data["what"] != "bundle" || ch.Events[0].Data["reason"] != "retries_exhausted" {
		t.Fatalf("the finish's first event %+v, want the failed artifact", ch.Events[0])
	}
	if _, _, err := s.Finish(ctx, "t1", b.BatchID, jobActor, dispatch.Artifacts{}); !errors.Is(err, dispatch.ErrNotProcessing) {
		t.Fatalf("a redelivered finish: %v, want ErrNotProcessing", err)
	}
}

func TestBatchesNoticeIsSentOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	b, _ := newBatch(t, st, "t1", 2, true, false)
	s := &dispatch.Batches{Store: st, Now: func() time.Time { return now }}
	sends := 0
	down := errors.New("provider down")
	if err := s.Notice(ctx, b, dispatch.NoticeApprovers, jobActor, time.Minute, func() (int, error) { sends++; return 0, down }); !errors.Is(err, down) {
		t.Fatalf("a failed send: %v", err)
	}
	// the failed send gave its claim back: the retry sends at once
	if err := s.Notice(ctx, b, dispatch.NoticeApprovers, jobActor, time.Minute, func() (int, error) { sends++; return 2, nil }); err != nil {
		t.Fatal(err)
	}
	if err := s.Notice(ctx, b, dispatch.NoticeApprovers, jobActor, time.Minute, func() (int, error) { sends++; return 2, nil }); !errors.Is(err, dispatch.ErrNoticeSent) || sends != 2 {
		t.Fatalf("a redelivered notice: %v after %d send(s); want ErrNoticeSent without sending", err, sends)
	}
	if err := s.Notice(ctx, b, dispatch.NoticeFinished, jobActor, time.Minute, func() (int, error) { return 0, nil }); err != nil {
		t.Fatal(err)
	}
	evs, err := st.Events(ctx, b.BatchID)
	if err != nil {
		t.Fatal(err)
	}
	var sent, skipped int
	for _, e := range evs {
		switch e.Kind {
		case dispatch.EvNoticeSent:
			sent++
			if e.Data["kind"] != dispatch.NoticeApprovers || e.Data["count"] != float64(2) || e.ActorID != jobActor.ID {
				t.Fatalf("notice_sent %+v", e)
			}
		case dispatch.EvNoticeSkipped:
			skipped++
			if e.Data["kind"] != dispatch.NoticeFinished || e.Data["reason"] != "no_recipient" {
				t.Fatalf("notice_skipped %+v", e)
			}
		}
	}
	if sent != 1 || skipped != 1 {
		t.Fatalf("%d notice_sent and %d notice_skipped, want one each", sent, skipped)
	}
}
