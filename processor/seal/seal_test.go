package seal

import (
	"bytes"
	"context"
	"errors"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apptest"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/esign/sessionstore"
	"github.com/esign-svc/esign/shared/evidence"
	"github.com/esign-svc/esign/shared/funcproto"
)

func twoSigners() []signer {
	checked := true
	return []signer{
		{role: "buyer", name: "Alice Buyer", fields: []esign.CompletedField{
			{Name: "esign.buyer.date", Value: "2026-11-22"},
			{Name: "esign.buyer.text.title", Value: "Procurement Lead"},
			{Name: "esign.buyer.checkbox.agree", Checked: &checked},
		}},
		{role: "seller", name: "Bob Seller"},
	}
}

func kindsOf(evs []sessionstore.AuditEvent) map[string]int {
	out := map[string]int{}
	for _, e := range evs {
		out[e.Kind]++
	}
	return out
}

var spaces = regexp.MustCompile(`\s+`)

func TestSealJob(t *testing.T) {
	t.Parallel()
	requireTools(t)
	ctx := context.Background()
	e := newEnv(t)
	f := e.sealingSession(t, twoSigners(), "")
	h := funcproto.QueueHandler(e.job.Handle)
	msg := apptest.QueueData(t, esign.SealMessage{GroupID: f.sess.GroupID, TenantID: f.sess.TenantID})

	r := apptest.Serve(t, h, msg)
	if r.Status != 200 {
		t.Fatalf("status %d, logs %v", r.Status, r.Logs)
	}
	// Notices: documents-ready and one completion notice per signed slot.
	got := map[string]bool{}
	for _, n := range notices(t, r) {
		if n.GroupID != f.sess.GroupID || n.TenantID != f.sess.TenantID {
			t.Fatalf("notice for another session: %+v", n)
		}
		got[n.Kind+"/"+string(rune('0'+n.Slot+1))] = true
	}
	for _, want := range []string{"requester_documents_ready/0", "signer_completed/1", "signer_completed/2"} {
		if !got[want] || len(got) != 3 {
			t.Fatalf("notices %v, want documents-ready (slot -1) and signer_completed for slots 0 and 1", got)
		}
	}

	sess, _, err := e.store.Load(ctx, f.sess.GroupID)
	if err != nil {
		t.Fatal(err)
	}
	base := f.sess.TenantID + "/" + f.sess.GroupID + "/"
	if sess.State != esign.SessionComplete || sess.CompletedAt.IsZero() || sess.SignedPath != "signed/"+base+"signed.pdf" ||
		sess.CertificatePath != "signed/"+base+"certificate.pdf" || sess.EvidencePath != "evidence/"+base+"evidence.jsonl" {
		t.Fatalf("session after seal: %+v", sess)
	}

	signed, ok := e.readBlob(t, "signed", base+"signed.pdf")
	if !ok {
		t.Fatal("signed.pdf missing")
	}
	assertPdfsigValid(t, signed)
	assertQpdfCheck(t, signed)
	if !bytes.HasPrefix(signed, f.pdf) {
		t.Fatal("the seal is not an incremental update of the source document")
	}
	signedText := pdftotext(t, signed)
	for _, want := range []string{"Procurement Lead", "2026-11-22", "Bob Seller"} {
		if !strings.Contains(signedText, want) {
			t.Fatalf("signed PDF text lacks %q", want)
		}
	}

	bundle, ok := e.readBlob(t, "evidence", base+"evidence.jsonl")
	if !ok {
		t.Fatal("evidence.jsonl missing")
	}
	head, lines, err := evidence.Verify(bytes.NewReader(bundle))
	if err != nil {
		t.Fatalf("evidence bundle: %v", err)
	}
	cert, ok := e.readBlob(t, "signed", base+"certificate.pdf")
	if !ok {
		t.Fatal("certificate.pdf missing")
	}
	certText := pdftotext(t, cert)
	flat := spaces.ReplaceAllString(certText, "")
	if !strings.Contains(flat, head) {
		t.Fatalf("certificate does not show the bundle's head hash %s:\n%s", head, certText)
	}
	if !strings.Contains(spaces.ReplaceAllString(pdftotext(t, signed), ""), head) {
		t.Fatal("the certificate pages of the signed PDF do not show the bundle's head hash")
	}
	wantText := []string{"Alice Buyer", "Bob Seller", "DOC-4711", f.sess.CorrelationID, strings.TrimPrefix(f.sess.PDFHash, "sha256:"),
		f.sess.TenantID, "test-1.2.3", "203.0.113.7", f.slots[0].EmailHash}
	for _, st := range esign.ConsentStatements {
		wantText = append(wantText, st.Text)
	}
	for _, sl := range f.slots {
		for _, st := range []esign.SlotState{esign.SlotPending, esign.SlotActivated, esign.SlotViewed, esign.SlotSigned} {
			wantText = append(wantText, sl.Timeline[st].UTC().Format("2006-01-02T15:04:05.000000000Z07:00"))
		}
	}
	for _, w := range wantText {
		if !strings.Contains(flat, spaces.ReplaceAllString(w, "")) {
			t.Fatalf("certificate text lacks %q:\n%s", w, certText)
		}
	}

	evs, err := e.store.Events(ctx, f.sess.GroupID)
	if err != nil {
		t.Fatal(err)
	}
	if lines != len(evs)-2 { // all but session.completed and pii.purged, written after the bundle
		t.Fatalf("bundle has %d lines for %d audit events", lines, len(evs))
	}
	k := kindsOf(evs)
	if k[esign.EvSessionCompleted] != 1 || k[esign.EvPIIPurged] != 1 || k[esign.EvSealFailed] != 0 {
		t.Fatalf("audit kinds %v", k)
	}
	if left, _ := e.store.SignatureSlots(ctx, f.sess.GroupID); len(left) != 0 {
		t.Fatalf("signature rows left after the seal: %v", left)
	}
	for _, banned := range []string{"@", "token", "otpCode"} {
		if bytes.Contains(bundle, []byte(banned)) {
			t.Fatalf("evidence bundle contains %q", banned)
		}
	}

	// A duplicate message has no effect: no outputs, blobs unchanged, no second event.
	r2 := apptest.Serve(t, h, msg)
	if r2.Status != 200 || len(notices(t, r2)) != 0 {
		t.Fatalf("duplicate: status %d, outputs %v", r2.Status, r2.Outputs)
	}
	again, _ := e.readBlob(t, "signed", base+"signed.pdf")
	if !bytes.Equal(again, signed) {
		t.Fatal("a duplicate message rewrote signed.pdf")
	}
	evs2, _ := e.store.Events(ctx, f.sess.GroupID)
	if len(evs2) != len(evs) {
		t.Fatalf("duplicate message added events: %v", kindsOf(evs2))
	}
}

func TestSealHashMismatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	f := e.sealingSession(t, twoSigners()[:1], "sha256:"+strings.Repeat("ab", 32))
	r := apptest.Serve(t, funcproto.QueueHandler(e.job.Handle), apptest.QueueData(t, esign.SealMessage{GroupID: f.sess.GroupID, TenantID: f.sess.TenantID}))
	if r.Status != 200 {
		t.Fatalf("status %d, logs %v", r.Status, r.Logs)
	}
	n := notices(t, r)
	if len(n) != 1 || n[0].Kind != "requester_seal_failure" || n[0].Slot != -1 {
		t.Fatalf("notices %+v", n)
	}
	sess, _, _ := e.store.Load(ctx, f.sess.GroupID)
	if sess.State != esign.SessionSealing || !strings.Contains(sess.SealError, "hash") {
		t.Fatalf("session %s, sealError %q", sess.State, sess.SealError)
	}
	evs, _ := e.store.Events(ctx, f.sess.GroupID)
	if kindsOf(evs)[esign.EvSealFailed] != 1 {
		t.Fatalf("audit kinds %v", kindsOf(evs))
	}
	base := f.sess.TenantID + "/" + f.sess.GroupID + "/"
	for _, p := range [][2]string{{"signed", base + "signed.pdf"}, {"signed", base + "certificate.pdf"}, {"evidence", base + "evidence.jsonl"}} {
		if _, ok := e.readBlob(t, p[0], p[1]); ok {
			t.Fatalf("%s/%s written despite the hash mismatch", p[0], p[1])
		}
	}
	if left, _ := e.store.SignatureSlots(ctx, f.sess.GroupID); len(left) != 1 {
		t.Fatalf("signature rows must stay until the session is complete: %v", left)
	}
}

func TestSealCrashAfterWritesIsCompletedByRetry(t *testing.T) {
	t.Parallel()
	requireTools(t)
	ctx := context.Background()
	e := newEnv(t)
	f := e.sealingSession(t, twoSigners(), "")
	msg := apptest.QueueData(t, esign.SealMessage{GroupID: f.sess.GroupID, TenantID: f.sess.TenantID})
	base := f.sess.TenantID + "/" + f.sess.GroupID + "/"

	crashing := *e.job
	crashing.afterWrite = func() error { return errors.New("simulated crash after the blobs were written") }
	r := apptest.Serve(t, funcproto.QueueHandler(crashing.Handle), msg)
	if r.Status != 500 || len(r.Outputs) != 0 {
		t.Fatalf("crashed attempt: status %d outputs %v", r.Status, r.Outputs)
	}
	first, ok := e.readBlob(t, "signed", base+"signed.pdf")
	if !ok {
		t.Fatal("the crashed attempt wrote no signed.pdf")
	}
	// Leave a torn certificate behind as well, as a crash mid-write could.
	if _, err := e.blobs.Put(ctx, "signed", base+"certificate.pdf", strings.NewReader("torn"), "application/pdf", nil); err != nil {
		t.Fatal(err)
	}
	if sess, _, _ := e.store.Load(ctx, f.sess.GroupID); sess.State != esign.SessionSealing {
		t.Fatalf("crashed attempt left the session %s", sess.State)
	}

	r = apptest.Serve(t, funcproto.QueueHandler(e.job.Handle), msg)
	if r.Status != 200 || len(notices(t, r)) != 3 {
		t.Fatalf("retry: status %d notices %d logs %v", r.Status, len(notices(t, r)), r.Logs)
	}
	signed, _ := e.readBlob(t, "signed", base+"signed.pdf")
	if bytes.Equal(signed, first) {
		t.Fatal("the retry did not rewrite signed.pdf")
	}
	assertPdfsigValid(t, signed)
	cert, _ := e.readBlob(t, "signed", base+"certificate.pdf")
	bundle, _ := e.readBlob(t, "evidence", base+"evidence.jsonl")
	head, _, err := evidence.Verify(bytes.NewReader(bundle))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(spaces.ReplaceAllString(pdftotext(t, cert), ""), head) || !strings.Contains(spaces.ReplaceAllString(pdftotext(t, signed), ""), head) {
		t.Fatal("after the retry the certificate and the bundle are not from one attempt")
	}
	sess, _, _ := e.store.Load(ctx, f.sess.GroupID)
	evs, _ := e.store.Events(ctx, f.sess.GroupID)
	if sess.State != esign.SessionComplete || kindsOf(evs)[esign.EvSessionCompleted] != 1 {
		t.Fatalf("after retry: %s, %v", sess.State, kindsOf(evs))
	}
}

func TestSealPoison(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	f := e.sealingSession(t, twoSigners()[:1], "")
	h := funcproto.QueueHandler(e.job.HandlePoison)
	msg := apptest.QueueData(t, esign.SealMessage{GroupID: f.sess.GroupID, TenantID: f.sess.TenantID})
	r := apptest.Serve(t, h, msg)
	n := notices(t, r)
	if r.Status != 200 || len(n) != 1 || n[0].Kind != "requester_seal_failure" {
		t.Fatalf("poison: status %d notices %+v logs %v", r.Status, n, r.Logs)
	}
	sess, _, _ := e.store.Load(ctx, f.sess.GroupID)
	if sess.State != esign.SessionSealing || sess.SealError != PoisonReason {
		t.Fatalf("after poison: %s %q", sess.State, sess.SealError)
	}
	evs, _ := e.store.Events(ctx, f.sess.GroupID)
	if kindsOf(evs)[esign.EvSealFailed] != 1 {
		t.Fatalf("audit kinds %v", kindsOf(evs))
	}
}

func TestSealMessagesAcknowledgedWithoutEffect(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	f := e.sealingSession(t, twoSigners()[:1], "")
	tests := []struct {
		name string
		data map[string]any
	}{
		{"not JSON", map[string]any{"msg": "not json"}},
		{"no group id", apptest.QueueData(t, esign.SealMessage{TenantID: "t"})},
		{"unknown session", apptest.QueueData(t, esign.SealMessage{GroupID: "no-such-group", TenantID: "t"})},
		{"wrong tenant", apptest.QueueData(t, esign.SealMessage{GroupID: f.sess.GroupID, TenantID: "someone-else"})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := apptest.Serve(t, funcproto.QueueHandler(e.job.Handle), tt.data)
			if r.Status != 200 || len(r.Outputs) != 0 || !strings.Contains(strings.Join(r.Logs, "\n"), "permanent failure") {
				t.Fatalf("status %d outputs %v logs %v", r.Status, r.Outputs, r.Logs)
			}
		})
	}
	sess, _, _ := e.store.Load(context.Background(), f.sess.GroupID)
	if sess.State != esign.SessionSealing || sess.SealError != "" {
		t.Fatalf("a refused message changed the session: %s %q", sess.State, sess.SealError)
	}
}

func TestSealWhileAnotherAttemptHoldsTheLock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	f := e.sealingSession(t, twoSigners()[:1], "")
	if err := e.store.AcquireSealLock(ctx, f.sess.GroupID, "other-attempt", e.job.now(), DefaultLockTTL); err != nil {
		t.Fatal(err)
	}
	// Busy is retried (the holder may have died; its lock expires), and so is the poison
	// message: no failure is recorded while an attempt holds the lock.
	for _, h := range []func(context.Context, funcproto.QueueMessage) error{e.job.Handle, e.job.HandlePoison} {
		r := apptest.Serve(t, funcproto.QueueHandler(h), apptest.QueueData(t, esign.SealMessage{GroupID: f.sess.GroupID, TenantID: f.sess.TenantID}))
		if r.Status != 500 || len(r.Outputs) != 0 || !strings.Contains(strings.Join(r.Logs, "\n"), "seal_in_progress") {
			t.Fatalf("status %d outputs %v logs %v", r.Status, r.Outputs, r.Logs)
		}
	}
	sess, _, _ := e.store.Load(ctx, f.sess.GroupID)
	evs, _ := e.store.Events(ctx, f.sess.GroupID)
	if sess.State != esign.SessionSealing || kindsOf(evs)[esign.EvSealFailed] != 0 {
		t.Fatalf("a locked session was touched: %s %v", sess.State, kindsOf(evs))
	}
	if _, ok := e.readBlob(t, "signed", f.sess.TenantID+"/"+f.sess.GroupID+"/signed.pdf"); ok {
		t.Fatal("blobs written while another attempt held the lock")
	}
	// Once the holder is gone, the lock is released and a message seals the session.
	if err := e.store.ReleaseSealLock(ctx, f.sess.GroupID, "other-attempt"); err != nil {
		t.Fatal(err)
	}
	r := apptest.Serve(t, funcproto.QueueHandler(e.job.Handle), apptest.QueueData(t, esign.SealMessage{GroupID: f.sess.GroupID, TenantID: f.sess.TenantID}))
	if sess, _, _ := e.store.Load(ctx, f.sess.GroupID); r.Status != 200 || sess.State != esign.SessionComplete {
		t.Fatalf("after release: %d %s %v", r.Status, sess.State, r.Logs)
	}
}

// The seal lock is renewed while the attempt runs, past its lifetime: no other attempt can
// take it over from a live one. The clock and the renewal ticks are the test's: a renewal at
// two thirds of the lifetime, then the clock past the first lifetime's end.
func TestSealLockIsRenewedWhileSealing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	f := e.sealingSession(t, twoSigners()[:1], "")
	job := *e.job
	var mu sync.Mutex
	clock := e.job.now()
	job.d.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	advance := func(d time.Duration) { mu.Lock(); defer mu.Unlock(); clock = clock.Add(d) }
	ticks, renewed := make(chan time.Time), make(chan struct{}, 1)
	job.renewTicks, job.afterRenew = ticks, func() { renewed <- struct{}{} }
	var tookOver error
	job.afterWrite = func() error {
		advance(2 * job.d.LockTTL / 3)
		ticks <- job.now()
		<-renewed
		advance(2 * job.d.LockTTL / 3) // the first lifetime ended a third of it ago
		tookOver = e.store.AcquireSealLock(ctx, f.sess.GroupID, "other-attempt", job.now(), job.d.LockTTL)
		return nil
	}
	r := apptest.Serve(t, funcproto.QueueHandler(job.Handle), apptest.QueueData(t, esign.SealMessage{GroupID: f.sess.GroupID, TenantID: f.sess.TenantID}))
	if !errors.Is(tookOver, sessionstore.ErrSealBusy) {
		t.Fatalf("another attempt took the lock of a live one: %v", tookOver)
	}
	if sess, _, _ := e.store.Load(ctx, f.sess.GroupID); r.Status != 200 || sess.State != esign.SessionComplete {
		t.Fatalf("status %d, session %s, logs %v", r.Status, sess.State, r.Logs)
	}
	// The attempt released its lock: the next one takes it at once.
	if err := e.store.AcquireSealLock(ctx, f.sess.GroupID, "next-attempt", job.now(), job.d.LockTTL); err != nil {
		t.Fatalf("the lock was not released: %v", err)
	}
}

// The lock of an attempt that died expires, and the message's retry seals the session.
func TestSealAfterADeadAttemptsLockExpired(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	f := e.sealingSession(t, twoSigners()[:1], "")
	past := e.job.now().Add(-2 * DefaultLockTTL)
	if err := e.store.AcquireSealLock(ctx, f.sess.GroupID, "dead-attempt", past, DefaultLockTTL); err != nil {
		t.Fatal(err)
	}
	r := apptest.Serve(t, funcproto.QueueHandler(e.job.Handle), apptest.QueueData(t, esign.SealMessage{GroupID: f.sess.GroupID, TenantID: f.sess.TenantID}))
	if sess, _, _ := e.store.Load(ctx, f.sess.GroupID); r.Status != 200 || sess.State != esign.SessionComplete {
		t.Fatalf("status %d, session %s, logs %v", r.Status, sess.State, r.Logs)
	}
}
