package e2e

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/devtools/funchost"
	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/azure/queuestore"
	"github.com/esign-svc/esign/shared/azure/tablestore"
	"github.com/esign-svc/esign/shared/delivery/deliverystore"
	"github.com/esign-svc/esign/shared/dispatch"
	"github.com/esign-svc/esign/shared/dispatch/batchstore"
	"github.com/esign-svc/esign/shared/pii"
)

// batchWait bounds the wait for a small batch to finish through the host; batchTimeout a
// benchmark's batch of up to 10,000 records (10 records per second at least).
const (
	batchWait    = 90 * time.Second
	batchTimeout = dispatch.MaxRecords*100*time.Millisecond + time.Minute
)

func storageAccount(t testing.TB) *azconn.Account {
	t.Helper()
	acct, err := azconn.New(azconn.Config{ConnectionString: svc.azurite.ConnectionString()})
	if err != nil {
		t.Fatal(err)
	}
	return acct
}

// batchStore is the dispatcher's and the processor's batch store, opened on the test Azurite.
func batchStore(t testing.TB) *batchstore.Store {
	t.Helper()
	st, err := batchstore.New(storageAccount(t), batchstore.TableBatches, batchstore.TableIndex)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Ensure(context.Background()); err != nil {
		t.Fatal(err)
	}
	return st
}

// storeBatch stores a queued batch of records (each encrypted under its record's AAD as the
// intake does, with the run's PII key) on template pkg, as an auto-approved render would.
func storeBatch(t testing.TB, pkg string, records []map[string]any, s dispatch.Settings, submitter string) *dispatch.Batch {
	t.Helper()
	cipher, err := pii.ParseCipher(svc.settings["PII_ENC_KEYS"])
	if err != nil {
		t.Fatal(err)
	}
	b := &dispatch.Batch{BatchID: uuid.NewString(), TenantID: tenantA, CorrelationID: "batch-" + uuid.NewString()[:8],
		Title: "Offers", TemplatePath: pkg, TemplateName: "Offer letter", TemplateVersion: 1, SubmittedBy: "oid-e2e", Settings: s}
	if submitter != "" {
		if b.SubmitterEmailEnc, err = cipher.EncryptString(submitter, dispatch.SubmitterAAD(b.BatchID)); err != nil {
			t.Fatal(err)
		}
	}
	recs := make([]dispatch.Record, len(records))
	for i, rec := range records {
		raw, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		enc, err := cipher.Encrypt(raw, dispatch.RecordAAD(b.BatchID, i))
		if err != nil {
			t.Fatal(err)
		}
		recs[i] = dispatch.Record{BatchID: b.BatchID, Index: i, Status: dispatch.RecordReady, State: dispatch.RecordPending, DataEnc: enc}
	}
	ch := dispatch.Submit(b, recs, false, time.Now().UTC())
	if b.State != dispatch.StateQueued {
		t.Fatalf("submitted %s", b.State)
	}
	if err := batchStore(t).Create(context.Background(), b, recs, ch); err != nil {
		t.Fatal(err)
	}
	return b
}

// enqueueBatch puts the batch on the dispatch queue, as the dispatcher's enqueue effect does.
func enqueueBatch(t testing.TB, b *dispatch.Batch) {
	t.Helper()
	q, err := queuestore.New(storageAccount(t), dispatch.QueueDispatch)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Send(context.Background(), dispatch.BatchMessage{BatchID: b.BatchID, TenantID: b.TenantID}); err != nil {
		t.Fatal(err)
	}
}

// waitFinished polls the batch until it is completed or partially-failed.
func waitFinished(t testing.TB, st *batchstore.Store, id string, within time.Duration) *dispatch.Batch {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		b, err := st.Load(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if b.State == dispatch.StateCompleted || b.State == dispatch.StatePartiallyFailed {
			return b
		}
		if time.Now().After(deadline) {
			t.Fatalf("batch %s still %s after %v (%d of %d processed)", id, b.State, within, b.ProcessedCount, b.ReadyCount)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// batchOffer is a valid record of the sample package for person i, starting in a month.
func batchOffer(i int) map[string]any {
	return map[string]any{"employeeName": "Person " + strconv.Itoa(i), "employeeEmail": email(100 + i), "position": "Engineer",
		"salary": 50000 + i, "currency": "EUR", "startDate": time.Now().AddDate(0, 1, 0).Format("2006-01-02")}
}

// TestBatchDispatchThroughTheHost puts a queued batch on the dispatch queue of the running
// processor and waits for it: every record rendered into its named PDF (hash as recorded),
// delivery sessions per recipientEmail found by the record's correlationId, the ZIP bundle of
// the PDFs in record order, the submitter e-mailed once.
func TestBatchDispatchThroughTheHost(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pkg := uploadPackage(t, examplePackage(t))
	recs := []map[string]any{batchOffer(0), batchOffer(1), batchOffer(2)}
	recs[0]["recipientEmail"], recs[0]["recipientName"] = email(110)+";"+email(111), "Ann;Bob"
	recs[1]["recipientEmail"] = email(112)
	recs[2]["recipientEmail"] = email(113)
	submitter := email(120)
	b := storeBatch(t, pkg, recs, dispatch.Settings{Mode: dispatch.ModeIndividual, ZipBundle: true,
		FileNameTemplate: "offer-{BATCHID_1}", DeliveryMode: dispatch.DeliverySecureEmail}, submitter)
	enqueueBatch(t, b)
	st := batchStore(t)
	got := waitFinished(t, st, b.BatchID, batchWait)
	if got.State != dispatch.StateCompleted || got.ProcessedCount != 3 || got.ErrorCount != 0 {
		t.Fatalf("batch %s: %d processed, %d failed", got.State, got.ProcessedCount, got.ErrorCount)
	}
	page, err := st.Records(ctx, b.BatchID, "", "", 10)
	if err != nil {
		t.Fatal(err)
	}
	deliveries, err := deliverystore.New(storageAccount(t), deliverystore.TableSessions, deliverystore.TableIndex)
	if err != nil {
		t.Fatal(err)
	}
	var pdfs [][]byte
	for i, r := range page.Records {
		if r.PDFBlobPath != fmt.Sprintf("documents/%s/dispatch/%s/offer-%d.pdf", b.TenantID, b.BatchID, i+1) {
			t.Fatalf("record %d at %s", i, r.PDFBlobPath)
		}
		c, n, _ := strings.Cut(r.PDFBlobPath, "/")
		pdf, _, err := blobs(t).ReadAll(ctx, c, n, 16<<20)
		if err != nil {
			t.Fatal(err)
		}
		if sum := sha256.Sum256(pdf); r.PDFHash != "sha256:"+hex.EncodeToString(sum[:]) {
			t.Fatalf("record %d: the PDF does not hash to %s", i, r.PDFHash)
		}
		pdfs = append(pdfs, pdf)
		sessions, err := deliveries.ListByCorrelation(ctx, tenantA, r.CorrelationID)
		if err != nil || len(sessions) != len(strings.Split(recs[i]["recipientEmail"].(string), ";")) {
			t.Fatalf("record %d: %d delivery sessions (%v)", i, len(sessions), err)
		}
	}
	if got.BundlePath != "bundles/"+tenantA+"/"+b.BatchID+".zip" {
		t.Fatalf("bundle at %q, want the tenant's folder", got.BundlePath)
	}
	raw, _, err := blobs(t).ReadAll(ctx, "bundles", tenantA+"/"+b.BatchID+".zip", 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(raw), int64(len(raw)))
	if err != nil || len(zr.File) != 3 {
		t.Fatalf("bundle: %v", err)
	}
	for i, f := range zr.File {
		rc, _ := f.Open()
		var buf bytes.Buffer
		_, _ = buf.ReadFrom(rc)
		rc.Close()
		if f.Name != fmt.Sprintf("offer-%d.pdf", i+1) || !bytes.Equal(buf.Bytes(), pdfs[i]) {
			t.Fatalf("bundle entry %d: %s", i, f.Name)
		}
	}
	deadline := time.Now().Add(batchWait)
	for {
		n := 0
		for _, r := range allMail(t) {
			if r.Recipient == submitter && r.CorrelationID == b.CorrelationID {
				n++
			}
		}
		if n == 1 {
			break
		}
		if n > 1 || time.Now().After(deadline) {
			t.Fatalf("%d completion e-mails to the submitter", n)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// BenchmarkBatch times a batch of b.N records (E2E_BENCHTIME=1000x: 1,000; 10000x: 10,000;
// larger N runs batches of 10,000 one after the other) from its dispatch message to finished
// through the local host and Azurite, without delivery: "individual" writes the record PDFs,
// "zip" also streams the ZIP bundle, "combined" merges them into one PDF. Each reports records per second
// and the processor handler's peak resident memory during the run (VmHWM, reset before the
// batch through /proc/<pid>/clear_refs), the seconds of those spent finishing (merging or
// bundling after the last record), Azurite's CPU time per record (and, as the machine's speed
// moves, Azurite's CPU per reference request just before: azuriteRef),
// and the storage calls per record through the counting proxy: the processor's (calls/record) and the local host's queue
// calls (host-calls/record: polls, deletes, output bindings, for every queue while the batch
// runs).
func BenchmarkBatch(b *testing.B) {
	for _, m := range []struct {
		name string
		s    dispatch.Settings
	}{
		{"individual", dispatch.Settings{Mode: dispatch.ModeIndividual}},
		{"zip", dispatch.Settings{Mode: dispatch.ModeIndividual, ZipBundle: true}},
		{"combined", dispatch.Settings{Mode: dispatch.ModeCombined}},
	} {
		b.Run(m.name, func(b *testing.B) { benchBatch(b, m.s) })
	}
	b.Run("submitted", benchSubmitted)
	b.Run("intake", benchIntake)
}

// benchSubmitted is the issue's own measure: individual PDFs for records submitted through
// POST /api/render (features.dispatch: queued at once), from the POST to completed. Besides
// BenchmarkBatch's figures it reports the intake's seconds (until the POST's answer) and the
// dispatcher handler's peak resident memory (VmHWM); calls/record counts the dispatcher's and
// the processor's storage calls.
func benchSubmitted(b *testing.B) {
	st := batchStore(b)
	m := startSubmits(b, false)
	for _, body := range m.bodies {
		logged := svc.logs.Len()
		id := m.submit(b, body, http.StatusAccepted)
		waitLogged(b, logged, "dispatch-finish: batch "+id+" ", batchTimeout)
		if got := waitFinished(b, st, id, batchTimeout); got.State != dispatch.StateCompleted {
			b.Fatalf("batch %s: %d failed", got.State, got.ErrorCount)
		}
	}
	m.report(b)
}

// benchIntake is the intake alone at its largest: records with a 2,000-character notes field
// (10,000 are a body of about 23 MiB of the route's 32), submitted for approval (stored, not
// dispatched; cancelled once measured), with the same figures as benchSubmitted.
func benchIntake(b *testing.B) {
	m := startSubmits(b, true)
	var ids []string
	for _, body := range m.bodies {
		ids = append(ids, m.submit(b, body, http.StatusAccepted))
	}
	m.report(b)
	for _, id := range ids {
		if r := call(b, "POST", svc.url("dispatch/batch/"+id+"/cancel"), nil, m.by.h()); r.Status != http.StatusOK {
			b.Fatalf("cancel: %d %s", r.Status, r.Raw)
		}
	}
}

// submits is a benchmark of batches submitted through POST /api/render: the request bodies
// (batches of at most dispatch.MaxRecords, made before the timer starts), the intake's time and
// the run's measure.
type submits struct {
	*measure
	by     person
	bodies [][]byte
	intake time.Duration
}

func startSubmits(b *testing.B, forApproval bool) *submits {
	pkg := uploadPackage(b, examplePackage(b))
	m := &submits{by: newPerson(b, tenantA, "alice", "Esign.Initiator", "Dispatch.Approver")}
	for left := b.N; left > 0; left -= dispatch.MaxRecords {
		recs := make([]map[string]any, min(left, dispatch.MaxRecords))
		for i := range recs {
			recs[i] = batchOffer(i)
			if forApproval {
				recs[i]["notes"] = strings.Repeat("n", 2000)
			}
		}
		raw, err := json.Marshal(batchBody(pkg, recs, forApproval))
		if err != nil {
			b.Fatal(err)
		}
		m.bodies = append(m.bodies, raw)
	}
	m.measure = startMeasure(b)
	return m
}

// submit posts one batch and answers its id; the POST's time counts as intake.
func (m *submits) submit(b *testing.B, body []byte, status int) string {
	t0 := time.Now()
	r := call(b, "POST", svc.url("render"), body, m.by.h("Accept", "application/json"))
	m.intake += time.Since(t0)
	id := r.Header.Get("X-Service-BatchId")
	if r.Status != status || id == "" {
		b.Fatalf("submit: %d %.2000s", r.Status, r.Raw)
	}
	return id
}

func (m *submits) report(b *testing.B) {
	m.measure.report(b, true)
	b.ReportMetric(m.intake.Seconds(), "intake-s")
}

// measure is what a BenchmarkBatch run measures from its start (startMeasure, which starts the
// timer): the time, both handlers' peak resident memory (reset at the start), Azurite's CPU and
// the storage calls through the counting proxy.
type measure struct {
	pids  [2]int // the dispatcher's and the processor's handlers
	azRef float64
	azCPU time.Duration
	marks [3]int // the dispatcher's, the processor's and the host's storage calls
	start time.Time
}

func startMeasure(b *testing.B) *measure {
	m := &measure{pids: [2]int{svc.host.HandlerPID("dispatcher"), svc.host.HandlerPID("processor")}, azRef: azuriteRef(b)}
	for _, pid := range m.pids {
		if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
			b.Fatalf("reset a handler's peak memory: %v", err)
		}
	}
	m.azCPU = cpuTime(b, svc.azurite.PID())
	m.marks = [3]int{svc.counter.mark("esign-dispatcher"), svc.counter.mark("esign-processor"), svc.counter.mark(funchost.UserAgent)}
	b.ResetTimer()
	m.start = time.Now()
	return m
}

// report stops the timer and reports records/s, the processor's peak memory, Azurite's CPU and
// the storage calls per record (the apps' and the host's, and by kind in the log); withDispatcher
// also counts the dispatcher's calls and reports its peak memory (a run through the intake).
func (m *measure) report(b *testing.B, withDispatcher bool) {
	elapsed := time.Since(m.start)
	b.StopTimer()
	apps := svc.counter.since("esign-processor", m.marks[1])
	if withDispatcher {
		apps = append(svc.counter.since("esign-dispatcher", m.marks[0]), apps...)
		b.ReportMetric(float64(peakKB(b, m.pids[0]))/1024, "dispatcher-peak-MB")
	}
	host := svc.counter.since(funchost.UserAgent, m.marks[2])
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "records/s")
	b.ReportMetric(float64(peakKB(b, m.pids[1]))/1024, "peak-MB")
	azMS := float64((cpuTime(b, svc.azurite.PID()) - m.azCPU).Microseconds()) / 1000 / float64(b.N)
	b.ReportMetric(azMS, "azurite-ms/record")
	b.ReportMetric(m.azRef, "azurite-ref-ms")
	b.ReportMetric(float64(len(apps))/float64(b.N), "calls/record")
	b.ReportMetric(float64(len(host))/float64(b.N), "host-calls/record")
	b.Logf("storage calls per record, by kind:\n%s", perRecord(b.N, apps, host))
	b.ReportMetric(0, "ns/op")
}

func benchBatch(b *testing.B, s dispatch.Settings) {
	pkg := uploadPackage(b, examplePackage(b))
	st := batchStore(b)
	var batches []*dispatch.Batch
	for left := b.N; left > 0; left -= dispatch.MaxRecords {
		recs := make([]map[string]any, min(left, dispatch.MaxRecords))
		for i := range recs {
			recs[i] = batchOffer(i)
		}
		batches = append(batches, storeBatch(b, pkg, recs, s, ""))
	}
	m := startMeasure(b)
	var finishing time.Duration
	for _, bt := range batches {
		logged := svc.logs.Len()
		enqueueBatch(b, bt)
		waitLogged(b, logged, "dispatch-finish: batch "+bt.BatchID+" ", batchTimeout)
		got := waitFinished(b, st, bt.BatchID, batchTimeout)
		if got.State != dispatch.StateCompleted {
			b.Fatalf("batch %s: %d failed", got.State, got.ErrorCount)
		}
		// a finish the host gave up on also ends completed, without its artifact
		if (s.ZipBundle && got.BundlePath == "") || (s.Mode == dispatch.ModeCombined && got.CombinedPath == "") {
			b.Fatalf("batch %s ended without its bundle or combined PDF (bundle %q, combined %q)", got.BatchID, got.BundlePath, got.CombinedPath)
		}
		finishing += finishTime(b, st, bt.BatchID)
	}
	m.report(b, false)
	b.ReportMetric(finishing.Seconds(), "finish-s")
}

// waitLogged waits until the host's and handlers' output from offset on holds text: a
// benchmark waits for a batch's finish by its log line, so that its wait adds no storage calls
// (a batch load is a query, which Azurite answers by scanning the table) to what it measures.
func waitLogged(b *testing.B, offset int, text string, within time.Duration) {
	deadline := time.Now().Add(within)
	for {
		out, n := svc.logs.From(offset)
		if strings.Contains(out, text) {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("no %q in the output after %v", text, within)
		}
		offset = max(offset, n-len(text)) // the text may straddle two reads
		time.Sleep(20 * time.Millisecond)
	}
}

// finishTime is how long the batch's finish took: from its last record's outcome to its end
// (the combined PDF or the bundle written), by the audit trail's times.
func finishTime(b *testing.B, st *batchstore.Store, id string) time.Duration {
	evs, err := st.Events(context.Background(), id)
	if err != nil {
		b.Fatal(err)
	}
	var last, end time.Time
	for _, ev := range evs {
		switch ev.Kind {
		case dispatch.EvRecordProcessed, dispatch.EvRecordFailed:
			if ev.At.After(last) {
				last = ev.At
			}
		case dispatch.EvCompleted, dispatch.EvPartiallyFailed:
			end = ev.At
		}
	}
	return end.Sub(last)
}

// refCalls is how many point reads azuriteRef times.
const refCalls = 500

// azuriteRef is Azurite's CPU per reference request just before a run (azurite-ref-ms):
// refCalls point reads of one small entity, straight to Azurite, the machine otherwise idle.
// The shared machine's speed moves (the same code has cost half as much again in Azurite CPU
// an hour later), and Azurite's CPU per record with it; this says how fast the machine was.
// It is no exact yardstick: during a run the processor renders on the other core.
func azuriteRef(b *testing.B) float64 {
	ctx := context.Background()
	st, err := tablestore.New(storageAccount(b), "benchref")
	if err == nil {
		err = st.EnsureTable(ctx)
	}
	if err == nil {
		_, err = st.Upsert(ctx, tablestore.Entity{PartitionKey: "ref", RowKey: "ref", Props: map[string]any{"n": int64(1)}})
	}
	if err != nil {
		b.Fatal(err)
	}
	read := func(n int) {
		for range n {
			if _, err := st.Get(ctx, "ref", "ref"); err != nil {
				b.Fatal(err)
			}
		}
	}
	read(50) // warm
	cpu := cpuTime(b, svc.azurite.PID())
	read(refCalls)
	return float64((cpuTime(b, svc.azurite.PID()) - cpu).Microseconds()) / 1000 / refCalls
}

// cpuTime is a process's CPU time so far (user and system, /proc/<pid>/stat in clock ticks
// of 10 ms).
func cpuTime(b testing.TB, pid int) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	f := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+2:])) // after "pid (comm) "
	ticks := 0
	for _, v := range f[11:13] { // utime, stime (fields 14 and 15)
		n, err := strconv.Atoi(v)
		if err != nil {
			b.Fatal(err)
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}

// peakKB is a process's VmHWM in kB.
func peakKB(b testing.TB, pid int) int {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			if err != nil {
				b.Fatal(err)
			}
			return kb
		}
	}
	b.Fatal("no VmHWM in /proc status")
	return 0
}
