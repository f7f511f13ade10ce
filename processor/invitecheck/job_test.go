package invitecheck

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/esign-svc/esign/processor/deliveryupload"
	"github.com/esign-svc/esign/processor/notifyjob"
	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/apptest"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/delivery/deliverystore"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/esign/sessionstore"
	"github.com/esign-svc/esign/shared/kernel/aggstore"
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/notify/outbox"
	"github.com/esign-svc/esign/shared/pii"
)

func TestMain(m *testing.M) { azuritetest.Main(m) }

// env is one test's environment (stores, outbox, cipher, the clock the test moves), the two
// queue jobs and the reconciler.
type env struct {
	*apptest.Env
	sessions   *sessionstore.Store
	deliveries *deliverystore.Store
	box        *outbox.Outbox
	notifier   *notifyjob.Job
	inviter    *deliveryupload.Job
	job        *Job
	start      time.Time
	provider   *apptest.Flaky // the outbox, or a retryable failure while the provider is down
}

func newEnv(t *testing.T) *env {
	t.Helper()
	x := apptest.New(t)
	e := &env{Env: x, sessions: x.Sessions(), deliveries: x.Deliveries(), box: x.Outbox(), start: x.Now()}
	e.provider = &apptest.Flaky{To: e.box}
	clock, codec := x.Now, x.Tokens
	var err error
	if e.notifier, err = notifyjob.New(notifyjob.Deps{Sessions: &esign.SessionJobs{Store: e.sessions}, Tokens: codec, Cipher: x.Cipher, Email: e.provider,
		PortalURL: "https://portal.example.test", Now: clock}); err != nil {
		t.Fatal(err)
	}
	if e.inviter, err = deliveryupload.New(deliveryupload.Deps{Deliveries: &delivery.Deliveries{Store: e.deliveries, Now: clock}, Blobs: x.Blobs, Tokens: codec,
		Cipher: x.Cipher, Email: e.provider, PortalURL: "https://portal.example.test", Now: clock}); err != nil {
		t.Fatal(err)
	}
	if e.job, err = New(Deps{Sessions: &esign.SessionJobs{Store: e.sessions, InviteChecks: e.sessions.InviteChecks()},
		Deliveries: &delivery.InviteChecks{Schedule: e.deliveries.InviteChecks(), Store: e.deliveries}, Notify: e.notifier.Notify, MessageID: notifyjob.MessageID,
		Invite: e.inviter.Invite, Now: clock}); err != nil {
		t.Fatal(err)
	}
	return e
}

// session creates a live parallel session of n signers at e.Now(), through the store as the
// dispatcher does (Start invites every signer). It returns the invitation messages the create
// queued, one per slot.
func (e *env) session(t *testing.T, n int) (*esign.Session, []esign.NotifyMessage) {
	t.Helper()
	g := apptest.Hex(16)
	s := &esign.Session{GroupID: g, TenantID: "t1", CorrelationID: "C-" + g, DocumentID: "Contract 7", DocType: "contract",
		PDFBlobPath: "documents/a.pdf", PDFHash: "sha256:00", SigningMode: esign.ModeParallel, State: esign.SessionPending,
		CreatedAt: e.Now(), ExpiresAt: e.Now().Add(24 * time.Hour)}
	slots := make([]esign.Slot, n)
	var queued []esign.NotifyMessage
	for i := range slots {
		enc, err := e.Cipher.EncryptString("signer"+strconv.Itoa(i)+"@example.com", pii.AAD(g, "slot", strconv.Itoa(i)))
		if err != nil {
			t.Fatal(err)
		}
		slots[i] = esign.Slot{Index: i, SessionID: apptest.Hex(16), Role: "r", EmailHash: "h", EmailEnc: enc,
			Condition: esign.Required, OTPChannel: esign.OTPNone, LinkJTI: apptest.Hex(16)}
		queued = append(queued, esign.NotifyMessage{Kind: esign.KindInvitation, GroupID: g, TenantID: "t1", Slot: i, LinkJTI: slots[i].LinkJTI})
	}
	ch := esign.Start(s, slots, e.Now())
	ch.By(esign.Actor{Kind: "initiator", ID: "oid"})
	if err := e.sessions.Create(context.Background(), s, slots, ch, e.Now()); err != nil {
		t.Fatal(err)
	}
	return s, queued
}

// delivery creates a live secure-email delivery at e.Now() through the store.
func (e *env) delivery(t *testing.T) *delivery.Session {
	t.Helper()
	id := apptest.Hex(16)
	enc, err := e.Cipher.EncryptString("recipient@example.com", pii.AAD(id, "recipient"))
	if err != nil {
		t.Fatal(err)
	}
	s := &delivery.Session{DeliveryID: id, TenantID: "t1", CorrelationID: "D-" + id, DocumentName: "a.pdf",
		PDFBlobPath: "documents/a.pdf", Mode: delivery.ModeSecureEmail, RecipientHash: "h", RecipientEnc: enc,
		ExpiresAt: e.Now().Add(24 * time.Hour)}
	ch := delivery.Start(s, e.Now())
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
	e.Clock.Set(e.start.Add(at))
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
	if _, _, err := e.sessions.Update(ctx, ended.GroupID, func(s *esign.Session, slots []esign.Slot) (esign.Change, esign.Extras, error) {
		ch, err := esign.Cancel(s, e.Now(), esign.ReasonCancelled, "oid")
		return ch, esign.Extras{}, err
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
	sent, err := e.sessions.NoticeSent(ctx, s.GroupID, notifyjob.MessageID(queued[1]))
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
	e.Clock.Set(e.start.Add(20 * time.Minute))
	var resent esign.NotifyMessage
	if _, _, err := e.sessions.Update(ctx, s.GroupID, func(s *esign.Session, slots []esign.Slot) (esign.Change, esign.Extras, error) {
		if _, err := esign.Activate(s, slots, 0, e.Now(), nil); err != nil {
			return esign.Change{}, esign.Extras{}, err
		}
		ch, err := esign.Reinvite(s, slots, 0, e.Now())
		slots[0].LinkJTI, slots[0].LinkUsed = apptest.Hex(16), false
		resent = esign.NotifyMessage{Kind: esign.KindInvitation, GroupID: s.GroupID, TenantID: s.TenantID, Slot: 0,
			LinkJTI: slots[0].LinkJTI, Reminder: true}
		return ch, esign.Extras{}, err
	}); err != nil {
		t.Fatal(err)
	}
	e.run(t, 20*time.Minute+aggstore.DefaultCheckAfter, 1)
	if got := e.mail(t, notify.KindInvitation); got != 2 {
		t.Fatalf("%d invitations, want the first and the resent one", got)
	}
	sent, err := e.sessions.NoticeSent(ctx, s.GroupID, notifyjob.MessageID(resent))
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
	e.provider.Down.Store(true)
	e.Clock.Set(e.start.Add(aggstore.DefaultCheckAfter))
	r, err := e.job.Run(context.Background())
	if err == nil || r.Checked != 0 || r.Sent != 2 {
		t.Fatalf("run while the provider is down: %+v %v", r, err)
	}
	var unavailable *apperr.Error
	if !errors.As(err, &unavailable) || unavailable.Code != "provider_down" {
		t.Fatalf("error %v", err)
	}
	e.provider.Down.Store(false)
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
	e.Clock.Set(e.start.Add(aggstore.DefaultCheckAfter))
	// A sender holds the held delivery's claim while the runs go on.
	claimed, finish, holder := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		_, _, err := e.deliveries.SendInvite(ctx, held.DeliveryID, e.Now(), deliveryupload.InviteClaimLease, func() (time.Time, error) {
			close(claimed)
			<-finish
			return e.Now(), nil
		}, func(s *delivery.Session) (delivery.Change, error) {
			return delivery.Invited(s, e.Now(), "email")
		})
		holder <- err
	}()
	select {
	case <-claimed:
	case err := <-holder:
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
	if due, err := e.deliveries.InviteChecks().Due(ctx, e.Now(), 10); err != nil || len(due) != 1 || due[0].ID != held.DeliveryID {
		t.Fatalf("checks kept %v %v, want the held delivery's", due, err)
	}
	// The holder finishes; the next run finds it recorded and sends nothing.
	close(finish)
	if err := <-holder; err != nil {
		t.Fatal(err)
	}
	e.run(t, aggstore.DefaultCheckAfter+5*time.Minute, 0)
	if due, err := e.deliveries.InviteChecks().Due(ctx, e.Now(), 10); err != nil || len(due) != 0 {
		t.Fatalf("checks left %v %v", due, err)
	}
	if got, _ := e.deliveries.Load(ctx, d.DeliveryID); got.SentAt.IsZero() {
		t.Fatal("the reconciled delivery has no sentAt")
	}
}
