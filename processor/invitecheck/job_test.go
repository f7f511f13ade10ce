package invitecheck

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/esign-svc/esign/processor/deliveryupload"
	"github.com/esign-svc/esign/processor/notifyjob"
	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/azure/blobstore"
	"github.com/esign-svc/esign/shared/azure/tablestore"
	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/delivery/deliverystore"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/esign/sessionstore"
	"github.com/esign-svc/esign/shared/kernel/aggstore"
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/notify/outbox"
	"github.com/esign-svc/esign/shared/pii"
	"github.com/esign-svc/esign/shared/tokens"
)

func TestMain(m *testing.M) { azuritetest.Main(m) }

// env is one test's stores, outbox, the two queue jobs and the reconciler, on a clock the test
// moves.
type env struct {
	sessions   *sessionstore.Store
	deliveries *deliverystore.Store
	box        *outbox.Outbox
	cipher     *pii.Cipher
	notifier   *notifyjob.Job
	inviter    *deliveryupload.Job
	job        *Job
	start      time.Time
	now        time.Time
	failing    atomic.Bool // the e-mail provider is down (a retryable failure)
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func randKey() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

// flaky is the outbox, or a retryable failure while the test says the provider is down.
type flaky struct{ e *env }

func (f flaky) Send(ctx context.Context, m notify.Message) error {
	if f.e.failing.Load() {
		return apperr.New(apperr.KindUnavailable, "provider_down", "the provider is down")
	}
	return f.e.box.Send(ctx, m)
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	acct, err := azconn.New(azconn.Config{ConnectionString: azuritetest.Shared(t).ConnectionString()})
	if err != nil {
		t.Fatal(err)
	}
	suffix := randHex(5)
	e := &env{start: time.Now().UTC()}
	e.now = e.start
	clock := func() time.Time { return e.now }
	if e.sessions, err = sessionstore.New(acct, "sess"+suffix, "idx"+suffix); err != nil {
		t.Fatal(err)
	}
	if e.deliveries, err = deliverystore.New(acct, "dlv"+suffix, "dlvidx"+suffix); err != nil {
		t.Fatal(err)
	}
	if e.box, err = outbox.New(acct, "outbox"+suffix); err != nil {
		t.Fatal(err)
	}
	for _, ensure := range []func(context.Context) error{e.sessions.Ensure, e.deliveries.Ensure, e.box.Ensure} {
		if err := ensure(ctx); err != nil {
			t.Fatal(err)
		}
	}
	ring, err := tokens.ParseKeyRing("k1:" + randKey())
	if err != nil {
		t.Fatal(err)
	}
	if e.cipher, err = pii.ParseCipher("e1:" + randKey()); err != nil {
		t.Fatal(err)
	}
	codec := tokens.NewCodec(ring)
	if e.notifier, err = notifyjob.New(notifyjob.Deps{Sessions: &esign.SessionJobs{Store: e.sessions}, Tokens: codec, Cipher: e.cipher, Email: flaky{e},
		PortalURL: "https://portal.example.test", Now: clock}); err != nil {
		t.Fatal(err)
	}
	if e.inviter, err = deliveryupload.New(deliveryupload.Deps{Deliveries: &delivery.Deliveries{Store: e.deliveries, Now: clock}, Blobs: blobstore.New(acct), Tokens: codec,
		Cipher: e.cipher, Email: flaky{e}, PortalURL: "https://portal.example.test", Now: clock}); err != nil {
		t.Fatal(err)
	}
	if e.job, err = New(Deps{Sessions: &esign.SessionJobs{Store: e.sessions, InviteChecks: e.sessions.InviteChecks()},
		Deliveries: &delivery.InviteChecks{Schedule: e.deliveries.InviteChecks(), Store: e.deliveries}, Notify: e.notifier.Notify, MessageID: notifyjob.MessageID,
		Invite: e.inviter.Invite, Now: clock}); err != nil {
		t.Fatal(err)
	}
	return e
}

// session creates a live parallel session of n signers at e.now, through the store as the
// dispatcher does (Start invites every signer). It returns the invitation messages the create
// queued, one per slot.
func (e *env) session(t *testing.T, n int) (*esign.Session, []esign.NotifyMessage) {
	t.Helper()
	g := randHex(16)
	s := &esign.Session{GroupID: g, TenantID: "t1", CorrelationID: "C-" + g, DocumentID: "Contract 7", DocType: "contract",
		PDFBlobPath: "documents/a.pdf", PDFHash: "sha256:00", SigningMode: esign.ModeParallel, State: esign.SessionPending,
		CreatedAt: e.now, ExpiresAt: e.now.Add(24 * time.Hour)}
	slots := make([]esign.Slot, n)
	var queued []esign.NotifyMessage
	for i := range slots {
		enc, err := e.cipher.EncryptString("signer"+strconv.Itoa(i)+"@example.com", pii.AAD(g, "slot", strconv.Itoa(i)))
		if err != nil {
			t.Fatal(err)
		}
		slots[i] = esign.Slot{Index: i, SessionID: randHex(16), Role: "r", EmailHash: "h", EmailEnc: enc,
			Condition: esign.Required, OTPChannel: esign.OTPNone, LinkJTI: randHex(16)}
		queued = append(queued, esign.NotifyMessage{Kind: esign.KindInvitation, GroupID: g, TenantID: "t1", Slot: i, LinkJTI: slots[i].LinkJTI})
	}
	ch := esign.Start(s, slots, e.now)
	ch.By(esign.Actor{Kind: "initiator", ID: "oid"})
	if err := e.sessions.Create(context.Background(), s, slots, ch, e.now); err != nil {
		t.Fatal(err)
	}
	return s, queued
}

// delivery creates a live secure-email delivery at e.now through the store.
func (e *env) delivery(t *testing.T) *delivery.Session {
	t.Helper()
	id := randHex(16)
	enc, err := e.cipher.EncryptString("recipient@example.com", pii.AAD(id, "recipient"))
	if err != nil {
		t.Fatal(err)
	}
	s := &delivery.Session{DeliveryID: id, TenantID: "t1", CorrelationID: "D-" + id, DocumentName: "a.pdf",
		PDFBlobPath: "documents/a.pdf", Mode: delivery.ModeSecureEmail, RecipientHash: "h", RecipientEnc: enc,
		ExpiresAt: e.now.Add(24 * time.Hour)}
	ch := delivery.Start(s, e.now)
	ch.By(delivery.Actor{Kind: "initiator", ID: "oid"})
	if err := e.deliveries.Create(context.Background(), s, ch); err != nil {
		t.Fatal(err)
	}
	return s
}

// mail counts the outbox's e-mails of kind.
func (e *env) mail(t *testing.T, kind notify.Kind) int {
	t.Helper()
	rows, err := e.box.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range rows {
		if r.Kind == kind {
			n++
		}
	}
	return n
}

func (e *env) run(t *testing.T, at time.Duration, wantSent int) {
	t.Helper()
	e.now = e.start.Add(at)
	r, err := e.job.Run(context.Background())
	if err != nil {
		t.Fatalf("run at +%s: %v", at, err)
	}
	if r.Sent != wantSent {
		t.Fatalf("run at +%s sent %d, want %d", at, r.Sent, wantSent)
	}
}

// TestLostSigningInvitationIsSentOnce: of a create's two invitations the queue delivered one;
// the check due ten minutes later sends the other, the lost message arriving afterwards sends
// nothing more, and the checks are gone. A session that ended meanwhile owes nothing.
func TestLostSigningInvitationIsSentOnce(t *testing.T) {
	t.Parallel()
	ctx, e := context.Background(), newEnv(t)
	s, queued := e.session(t, 2)
	ended, _ := e.session(t, 1)
	if err := e.notifier.Notify(ctx, queued[0]); err != nil { // the one message the host wrote
		t.Fatal(err)
	}
	if _, _, _, err := e.sessions.Update(ctx, ended.GroupID, func(s *esign.Session, slots []esign.Slot) (esign.Change, []tablestore.Op, error) {
		ch, err := esign.Cancel(s, e.now, esign.ReasonCancelled, "oid")
		return ch, nil, err
	}); err != nil {
		t.Fatal(err)
	}
	e.run(t, aggstore.DefaultCheckAfter-time.Second, 0) // not due yet
	if got := e.mail(t, notify.KindInvitation); got != 1 {
		t.Fatalf("%d invitations before the check", got)
	}
	e.run(t, aggstore.DefaultCheckAfter, 1)
	if got := e.mail(t, notify.KindInvitation); got != 2 {
		t.Fatalf("%d invitations after the check, want one per signer", got)
	}
	sent, err := e.sessions.NotificationSent(ctx, s.GroupID, notifyjob.MessageID(queued[1]))
	if err != nil || !sent {
		t.Fatalf("slot 1's invitation recorded as sent: %t %v", sent, err)
	}
	if err := e.notifier.Notify(ctx, queued[1]); err != nil { // the lost message shows up after all
		t.Fatal(err)
	}
	e.run(t, 2*aggstore.DefaultCheckAfter, 0)
	if got := e.mail(t, notify.KindInvitation); got != 2 {
		t.Fatalf("%d invitations in the end, want 2", got)
	}
	if due, err := e.sessions.InviteChecks().Due(ctx, e.start.Add(time.Hour), 10); err != nil || len(due) != 0 {
		t.Fatalf("checks left: %v %v", due, err)
	}
}

// TestResentInvitationIsReconciledAsAReminder: a resend-invite whose message was lost is sent
// by the check as the reminder the resend queued (the same claim id), once.
func TestResentInvitationIsReconciledAsAReminder(t *testing.T) {
	t.Parallel()
	ctx, e := context.Background(), newEnv(t)
	s, queued := e.session(t, 1)
	if err := e.notifier.Notify(ctx, queued[0]); err != nil {
		t.Fatal(err)
	}
	e.run(t, aggstore.DefaultCheckAfter, 0) // delivered: nothing to send, the check is gone
	e.now = e.start.Add(20 * time.Minute)
	var resent esign.NotifyMessage
	if _, _, _, err := e.sessions.Update(ctx, s.GroupID, func(s *esign.Session, slots []esign.Slot) (esign.Change, []tablestore.Op, error) {
		if _, err := esign.Activate(s, slots, 0, e.now, nil); err != nil {
			return esign.Change{}, nil, err
		}
		ch, err := esign.Reinvite(s, slots, 0, e.now)
		slots[0].LinkJTI, slots[0].LinkUsed = randHex(16), false
		resent = esign.NotifyMessage{Kind: esign.KindInvitation, GroupID: s.GroupID, TenantID: s.TenantID, Slot: 0,
			LinkJTI: slots[0].LinkJTI, Reminder: true}
		return ch, nil, err
	}); err != nil {
		t.Fatal(err)
	}
	e.run(t, 20*time.Minute+aggstore.DefaultCheckAfter, 1)
	if got := e.mail(t, notify.KindInvitation); got != 2 {
		t.Fatalf("%d invitations, want the first and the resent one", got)
	}
	sent, err := e.sessions.NotificationSent(ctx, s.GroupID, notifyjob.MessageID(resent))
	if err != nil || !sent {
		t.Fatalf("the resend's reminder recorded as sent: %t %v", sent, err)
	}
	rows, err := e.box.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if last := rows[len(rows)-1]; !strings.HasPrefix(last.Subject, "New signing link: ") || !strings.Contains(last.Text, "This is a new link") {
		t.Fatalf("the reconciled resend is not a reminder: %q", last.Subject)
	}
}

// TestLostDeliveryInvitationIsSentOnce: a secure-email delivery whose invite message was lost
// gets its invitation from the check; the late message and a later check send nothing more.
func TestLostDeliveryInvitationIsSentOnce(t *testing.T) {
	t.Parallel()
	ctx, e := context.Background(), newEnv(t)
	d := e.delivery(t)
	e.run(t, aggstore.DefaultCheckAfter, 1)
	if got := e.mail(t, deliveryupload.KindInvitation); got != 1 {
		t.Fatalf("%d delivery invitations, want 1", got)
	}
	if err := e.inviter.Invite(ctx, delivery.InviteMessage{DeliveryID: d.DeliveryID, TenantID: d.TenantID}); err != nil {
		t.Fatal(err)
	}
	e.run(t, 2*aggstore.DefaultCheckAfter, 0)
	if got := e.mail(t, deliveryupload.KindInvitation); got != 1 {
		t.Fatalf("%d delivery invitations in the end, want 1", got)
	}
	got, err := e.deliveries.Load(ctx, d.DeliveryID)
	if err != nil || got.SentAt.IsZero() {
		t.Fatalf("sentAt not recorded: %+v %v", got, err)
	}
}

// TestFailedSendKeepsTheCheck: while the provider is down the run reports the failure and keeps
// the check; the next run sends.
func TestFailedSendKeepsTheCheck(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.session(t, 1)
	e.delivery(t)
	e.failing.Store(true)
	e.now = e.start.Add(aggstore.DefaultCheckAfter)
	r, err := e.job.Run(context.Background())
	if err == nil || r.Checked != 0 || r.Sent != 2 {
		t.Fatalf("run while the provider is down: %+v %v", r, err)
	}
	var unavailable *apperr.Error
	if !errors.As(err, &unavailable) || unavailable.Code != "provider_down" {
		t.Fatalf("error %v", err)
	}
	e.failing.Store(false)
	e.run(t, aggstore.DefaultCheckAfter+5*time.Minute, 2)
	if got := e.mail(t, notify.KindInvitation) + e.mail(t, deliveryupload.KindInvitation); got != 2 {
		t.Fatalf("%d invitations after the provider came back, want 2", got)
	}
	e.run(t, aggstore.DefaultCheckAfter+10*time.Minute, 0)
}

// TestConcurrentSendersSendOnce: two reconciler runs at once (and a sender holding a claim)
// send each invitation once; a run that finds an invitation being sent elsewhere reports no
// failure and keeps the check, which a later run finds recorded.
func TestConcurrentSendersSendOnce(t *testing.T) {
	t.Parallel()
	ctx, e := context.Background(), newEnv(t)
	e.session(t, 2)
	d := e.delivery(t)
	held := e.delivery(t)
	e.now = e.start.Add(aggstore.DefaultCheckAfter)
	claim, err := e.deliveries.ClaimInvite(ctx, held.DeliveryID, e.now, deliveryupload.InviteClaimLease)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = e.job.Run(ctx)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("concurrent runs: %v", err)
	}
	if got := e.mail(t, notify.KindInvitation); got != 2 {
		t.Fatalf("%d signer invitations, want 2", got)
	}
	if got := e.mail(t, deliveryupload.KindInvitation); got != 1 {
		t.Fatalf("%d delivery invitations, want 1 (the other's claim is held)", got)
	}
	if due, err := e.deliveries.InviteChecks().Due(ctx, e.now, 10); err != nil || len(due) != 1 || due[0].ID != held.DeliveryID {
		t.Fatalf("checks kept %v %v, want the held delivery's", due, err)
	}
	// The holder finishes; the next run finds it recorded and sends nothing.
	if _, _, err := e.deliveries.UpdateInvited(ctx, claim, e.now, func(s *delivery.Session) (delivery.Change, error) {
		return delivery.Invited(s, e.now, "email")
	}); err != nil {
		t.Fatal(err)
	}
	e.run(t, aggstore.DefaultCheckAfter+5*time.Minute, 0)
	if due, err := e.deliveries.InviteChecks().Due(ctx, e.now, 10); err != nil || len(due) != 0 {
		t.Fatalf("checks left %v %v", due, err)
	}
	if got, _ := e.deliveries.Load(ctx, d.DeliveryID); got.SentAt.IsZero() {
		t.Fatal("the reconciled delivery has no sentAt")
	}
}
