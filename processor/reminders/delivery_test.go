package reminders

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/processor/deliveryupload"
	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/notify/outbox"
	"github.com/esign-svc/esign/shared/pii"
	"github.com/google/uuid"
)

// delivery creates a secure-email delivery to recipient<n>@example.com at the clock's time,
// with reminders after 1 h, then every 1 h, at most 2, expiring after expires, and sends its
// invitation through the delivery job (sentAt: the clock's time).
func (e *env) delivery(t *testing.T, n int, expires time.Duration) *delivery.Session {
	t.Helper()
	ctx := context.Background()
	id := uuid.NewString()
	enc, err := e.Cipher.EncryptString(recipient(n), pii.AAD(id, "recipient"))
	if err != nil {
		t.Fatal(err)
	}
	s := &delivery.Session{DeliveryID: id, TenantID: "t1", CreatedBy: "oid", CorrelationID: "C-" + id[:8], DocumentName: "Rechnung.pdf",
		PDFBlobPath: "documents/a.pdf", Mode: delivery.ModeSecureEmail, RecipientHash: "h" + strconv.Itoa(n), RecipientEnc: enc,
		RecipientLocale: "de", RequesterOrg: "Acme", ExpiresAt: e.Now().Add(expires),
		Reminders: &delivery.ReminderPolicy{FirstAfterHours: 1, EveryHours: 1, Max: 2}}
	ch := delivery.Start(s, e.Now())
	ch.By(delivery.Actor{Kind: "initiator", ID: "oid"})
	if err := e.dstore.Create(ctx, s, ch); err != nil {
		t.Fatal(err)
	}
	if err := e.djob.Invite(ctx, delivery.InviteMessage{DeliveryID: id, TenantID: "t1"}); err != nil {
		t.Fatal(err)
	}
	return s
}

func recipient(n int) string { return "recipient" + strconv.Itoa(n) + "@example.com" }

var reDeliver = regexp.MustCompile(`/deliver/([^?\s"<>]+)\?t=([^\s"<>]+)`)

// opens follows a reminder's link as the portal does: its token verifies for the delivery and
// the recipient's opened access is recorded.
func (e *env) opens(t *testing.T, r outbox.Row, id string) {
	t.Helper()
	m := linkIn(t, reDeliver, r)
	c, err := e.Tokens.VerifyDelivery(m[2])
	if err != nil || c.DeliveryID != id || m[1] != id {
		t.Fatalf("the reminder's link does not verify for %s: %+v %v", id, c, err)
	}
	if err := e.recv.Access(context.Background(), c.DeliveryID, delivery.AccessOpened, "", delivery.Actor{Kind: "recipient"}); err != nil {
		t.Fatalf("the reminder's link does not open the delivery: %v", err)
	}
}

func (e *env) reminded(t *testing.T, id string) (int, int) {
	t.Helper()
	ctx := context.Background()
	s, err := e.dstore.Load(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	events, err := e.dstore.Events(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ev := range events {
		if ev.Kind == delivery.EvReminded {
			n++
		}
	}
	return s.RemindCount, n
}

// TestDeliveryRemindersOnAMovedClock: of two recipients, one never opens the delivery and one
// opens it before the first reminder is due. The first reminder comes an hour after the
// invitation, in the recipient's language, with a working link, only to the unopened one; the
// second an hour later; then the cap. Each is audited, counted and sent once; the link of the
// last one opens the delivery.
func TestDeliveryRemindersOnAMovedClock(t *testing.T) {
	t.Parallel()
	ctx, e := context.Background(), newEnv(t)
	d0, d1 := e.delivery(t, 0, 24*time.Hour), e.delivery(t, 1, 24*time.Hour)
	e.Clock.Set(e.start.Add(30 * time.Minute))
	if err := e.recv.Access(ctx, d1.DeliveryID, delivery.AccessOpened, "", delivery.Actor{Kind: "recipient"}); err != nil {
		t.Fatal(err)
	}
	e.run(t, time.Hour-time.Minute, 0)
	e.run(t, time.Hour, 1)
	e.run(t, time.Hour+10*time.Minute, 0)
	first := e.mails(t, deliveryupload.KindReminder, recipient(0))
	if len(first) != 1 {
		t.Fatalf("%d reminders to the unopened recipient, want 1", len(first))
	}
	if !strings.HasPrefix(first[0].Subject, "Erinnerung") {
		t.Fatalf("the reminder is not in the recipient's language: %q", first[0].Subject)
	}
	if n := len(e.mails(t, deliveryupload.KindReminder, recipient(1))); n != 0 {
		t.Fatalf("the recipient who opened it got %d reminders", n)
	}
	e.run(t, 2*time.Hour, 1)
	e.run(t, 3*time.Hour, 0) // the cap
	e.run(t, 10*time.Hour, 0)
	sent := e.mails(t, deliveryupload.KindReminder, recipient(0))
	if len(sent) != 2 {
		t.Fatalf("%d reminders, want 2", len(sent))
	}
	if count, audited := e.reminded(t, d0.DeliveryID); count != 2 || audited != 2 {
		t.Fatalf("remindCount %d, %d delivery.reminded events, want 2 2", count, audited)
	}
	if count, audited := e.reminded(t, d1.DeliveryID); count != 0 || audited != 0 {
		t.Fatalf("the opened delivery: remindCount %d, %d events", count, audited)
	}
	if due, err := e.dstore.Reminders().Due(ctx, e.start.Add(24*time.Hour), 10); err != nil || len(due) != 0 {
		t.Fatalf("reminder entries left after the cap: %v %v", due, err)
	}
	e.opens(t, sent[1], d0.DeliveryID)
}

// TestNoDeliveryReminderAfterOpeningOrExpiry: a delivery that expires before its second
// reminder gets only the first; one opened through the first reminder's link gets no second;
// a revoked one gets none.
func TestNoDeliveryReminderAfterOpeningOrExpiry(t *testing.T) {
	t.Parallel()
	ctx, e := context.Background(), newEnv(t)
	e.delivery(t, 0, 90*time.Minute) // expires before its second reminder
	opened := e.delivery(t, 1, 24*time.Hour)
	revoked := e.delivery(t, 2, 24*time.Hour)
	if _, _, err := e.dstore.Update(ctx, revoked.DeliveryID, func(s *delivery.Session) (delivery.Change, error) {
		return delivery.Revoke(s, e.Now()), nil
	}); err != nil {
		t.Fatal(err)
	}
	e.run(t, time.Hour, 2)
	e.opens(t, e.mails(t, deliveryupload.KindReminder, recipient(1))[0], opened.DeliveryID)
	e.run(t, 2*time.Hour, 0)
	e.run(t, 5*time.Hour, 0)
	for i, want := range []int{1, 1, 0} {
		if n := len(e.mails(t, deliveryupload.KindReminder, recipient(i))); n != want {
			t.Errorf("recipient %d got %d reminders, want %d", i, n, want)
		}
	}
	if due, err := e.dstore.Reminders().Due(ctx, e.start.Add(24*time.Hour), 10); err != nil || len(due) != 0 {
		t.Fatalf("reminder entries left: %v %v", due, err)
	}
}

// TestFailedDeliveryReminderIsSentOnTheNextRun: the provider is down when the first reminder
// is due: nothing is recorded, the entry stays, and the next run sends it once.
func TestFailedDeliveryReminderIsSentOnTheNextRun(t *testing.T) {
	t.Parallel()
	ctx, e := context.Background(), newEnv(t)
	d := e.delivery(t, 0, 24*time.Hour)
	e.email.Down.Store(true)
	e.Clock.Set(e.start.Add(time.Hour))
	if _, err := e.job.Run(ctx); err == nil {
		t.Fatal("a run whose e-mail failed answered no error")
	}
	if count, _ := e.reminded(t, d.DeliveryID); count != 0 {
		t.Fatalf("%d reminders recorded while the provider is down", count)
	}
	e.email.Down.Store(false)
	e.run(t, time.Hour+10*time.Minute, 1)
	e.run(t, time.Hour+20*time.Minute, 0)
	if count, audited := e.reminded(t, d.DeliveryID); count != 1 || audited != 1 {
		t.Fatalf("remindCount %d, %d events, want 1 1", count, audited)
	}
	sent := e.mails(t, deliveryupload.KindReminder, recipient(0))
	if len(sent) != 1 {
		t.Fatalf("%d reminders sent, want 1", len(sent))
	}
	e.opens(t, sent[0], d.DeliveryID)
}
