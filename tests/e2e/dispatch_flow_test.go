package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/azure/queuestore"
	"github.com/esign-svc/esign/shared/azure/tablestore"
	"github.com/esign-svc/esign/shared/dispatch"
	"github.com/esign-svc/esign/shared/dispatch/batchstore"
)

// batchState reads a batch through the API.
func batchState(t *testing.T, by person, id string) reply {
	t.Helper()
	r := call(t, "GET", svc.url("dispatch/batch/"+id), nil, by.h())
	if r.Status != http.StatusOK {
		t.Fatalf("batch: %d %s", r.Status, r.Raw)
	}
	return r
}

// waitBatch polls a batch through the API until it is completed or partially-failed.
func waitBatch(t *testing.T, by person, id string) reply {
	t.Helper()
	deadline := time.Now().Add(batchWait)
	for {
		r := batchState(t, by, id)
		if s := r.str("state"); s == string(dispatch.StateCompleted) || s == string(dispatch.StatePartiallyFailed) {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("batch still %s: %s", r.str("state"), r.Raw)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// mailCount counts the outbox rows of kind for a correlationId.
func mailCount(t *testing.T, corr, kind string) int {
	t.Helper()
	n := 0
	for _, r := range allMail(t) {
		if r.CorrelationID == corr && string(r.Kind) == kind {
			n++
		}
	}
	return n
}

// TestBatchFromSubmitToCompleted drives a batch through the API only: submitted for approval
// (the approver e-mailed the summary), approved by a second person of the tenant, processed by
// the processor record by record into one PDF each and the combined PDF in record order, a
// delivery session per recipientEmail found by the record's correlationId, the submitter
// e-mailed once; the records name one field manifest, which a signing session created on a
// record's PDF reads (manifestSource rendered). A record message delivered again after the
// batch finished changes no counter.
func TestBatchFromSubmitToCompleted(t *testing.T) {
	t.Parallel()
	sealRequireTools(t)
	submitter := newPerson(t, tenantA, "submitter", "Esign.Initiator")
	approver := newPerson(t, tenantA, "approver", "Dispatch.Approver")
	recs := offers(3)
	for i, r := range recs {
		r["recipientEmail"] = email(200 + i)
	}
	recs[0]["recipientEmail"], recs[0]["recipientName"] = email(210)+";"+email(211), "Ann;Bob"
	body := batchBody(uploadPackage(t, examplePackage(t)), recs, true)
	dist := body["templateSettings"].(map[string]any)["distribution"].(map[string]any)
	dist["mode"], dist["deliveryConfig"] = "combined", map[string]any{"mode": "secure-email"}
	corr := body["options"].(map[string]any)["correlationId"].(string)

	r := submitBatch(t, submitter, body, http.StatusAccepted)
	id := r.Header.Get("X-Service-BatchId")
	if r.Header.Get("X-Service-DispatchReadiness") != "READY" || r.str("state") != "pending-approval" {
		t.Fatalf("submitted: %v %s", r.Header, r.Raw)
	}
	eventually(t, "the approvers' e-mail", func() bool { return mailCount(t, corr, "batch_pending_approval") == 1 })
	if d := decide(t, approver, id, "approve", "fine"); d.Status != http.StatusOK || d.str("state") != "queued" {
		t.Fatalf("approve: %d %s", d.Status, d.Raw)
	}
	done := waitBatch(t, submitter, id)
	if done.str("state") != "completed" || done.JSON["processedCount"] != float64(3) || done.JSON["errorCount"] != float64(0) {
		failed := call(t, "GET", svc.url("dispatch/batch/"+id+"/records?status=failed"), nil, submitter.h())
		t.Fatalf("finished: %s\nfailed records: %s", done.Raw, failed.Raw)
	}
	page := call(t, "GET", svc.url("dispatch/batch/"+id+"/records"), nil, submitter.h())
	records, _ := page.JSON["records"].([]any)
	if page.Status != http.StatusOK || len(records) != 3 {
		t.Fatalf("records: %d %s", page.Status, page.Raw)
	}
	for i, x := range records {
		rec := x.(map[string]any)
		if !strings.HasPrefix(rec["pdfBlobPath"].(string), "documents/"+tenantA+"/dispatch/"+id+"/") {
			t.Fatalf("record %d at %v", i, rec["pdfBlobPath"])
		}
		want := 1
		if i == 0 {
			want = 2
		}
		if ds := deliveriesOf(t, rec["correlationId"].(string)); len(ds) != want || ds[0] != rec["pdfBlobPath"] {
			t.Fatalf("record %d: deliveries %v", i, ds)
		}
	}
	// the records share the batch folder's one field manifest (issue 26), and a signing session
	// created on a record's PDF reads it
	manifest := ""
	for i, x := range records {
		_, props := sealDownload(t, x.(map[string]any)["pdfBlobPath"].(string))
		m := props.Metadata["esignmanifest"]
		if !strings.HasPrefix(m, tenantA+"/dispatch/"+id+"/manifest-") || (manifest != "" && m != manifest) {
			t.Fatalf("record %d names manifest %q, want the batch's one (%q)", i, m, manifest)
		}
		manifest = m
	}
	pdfPath := records[1].(map[string]any)["pdfBlobPath"].(string)
	pdf, _ := sealDownload(t, pdfPath)
	sum := sha256.Sum256(pdf)
	session := createSession(t, tenantA, map[string]any{"correlationId": "corr-" + id, "documentId": "Offer 2", "docType": "offer",
		"pdfBlobPath": pdfPath, "pdfHash": "sha256:" + hex.EncodeToString(sum[:]), "signingMode": "parallel", "signers": offerSigners()})
	if st := status(t, tenantA, "corr-"+id); st.str("groupId") != session.str("groupId") || st.str("manifestSource") != "rendered" {
		t.Fatalf("session on a batch record's PDF: %s, want manifestSource rendered", st.Raw)
	}
	combined, _ := sealDownload(t, "documents/"+tenantA+"/dispatch/"+id+"/combined.pdf")
	text := pdfText(t, combined)
	at := -1
	for i := range recs {
		next := strings.Index(text, strconv.Itoa(50000+i))
		if next <= at {
			t.Fatalf("the combined PDF does not hold record %d after record %d", i, i-1)
		}
		at = next
	}
	eventually(t, "the submitter's completion e-mail", func() bool { return mailCount(t, corr, "batch_finished") == 1 })

	q, err := queuestore.New(storageAccount(t), dispatch.QueueRecord)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Send(context.Background(), dispatch.RecordMessage{BatchID: id, TenantID: tenantA, Index: 1}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the redelivered record acknowledged", func() bool {
		return strings.Contains(svc.logs.String(), "dispatch-record: batch "+id+" record 1 is done; left out")
	})
	again := batchState(t, submitter, id)
	for _, k := range []string{"processedCount", "errorCount", "readyCount", "documentCount"} {
		if again.JSON[k] != done.JSON[k] {
			t.Fatalf("%s went from %v to %v", k, done.JSON[k], again.JSON[k])
		}
	}
	if mailCount(t, corr, "batch_finished") != 1 {
		t.Fatal("a second completion e-mail")
	}
}

// TestBatchPartiallyFailed submits a batch for approval, spoils one record's stored data
// before it is approved (a record that can never be processed), and checks that the record
// fails with its reason while the others complete: partially-failed, the counters exact.
func TestBatchPartiallyFailed(t *testing.T) {
	t.Parallel()
	submitter := newPerson(t, tenantA, "submitter", "Esign.Initiator")
	approver := newPerson(t, tenantA, "approver", "Dispatch.Approver")
	body := batchBody(uploadPackage(t, examplePackage(t)), offers(3), true)
	r := submitBatch(t, submitter, body, http.StatusAccepted)
	id := r.Header.Get("X-Service-BatchId")
	rows, err := tablestore.New(storageAccount(t), batchstore.TableBatches)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rows.Merge(context.Background(), tablestore.Entity{PartitionKey: id, RowKey: "rec-00001", ETag: "*",
		Props: map[string]any{"dataEnc": "not-a-ciphertext"}}); err != nil {
		t.Fatal(err)
	}
	if d := decide(t, approver, id, "approve", ""); d.Status != http.StatusOK {
		t.Fatalf("approve: %d %s", d.Status, d.Raw)
	}
	done := waitBatch(t, submitter, id)
	if done.str("state") != "partially-failed" || done.JSON["processedCount"] != float64(3) || done.JSON["errorCount"] != float64(1) {
		t.Fatalf("finished: %s", done.Raw)
	}
	failed := call(t, "GET", svc.url("dispatch/batch/"+id+"/records?status=failed"), nil, submitter.h())
	list, _ := failed.JSON["records"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["index"] != float64(1) || list[0].(map[string]any)["error"] == "" {
		t.Fatalf("failed records: %s", failed.Raw)
	}
	ok := call(t, "GET", svc.url("dispatch/batch/"+id+"/records?status=done"), nil, submitter.h())
	if list, _ := ok.JSON["records"].([]any); len(list) != 2 {
		t.Fatalf("done records: %s", ok.Raw)
	}
}
