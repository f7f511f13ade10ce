package reminders

import (
	"context"
	"errors"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/processor/deliveryupload"
	"github.com/esign-svc/esign/processor/notifyjob"
	"github.com/esign-svc/esign/shared/apptest"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/delivery/deliverystore"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/esign/sessionstore"
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/notify/outbox"
	"github.com/esign-svc/esign/shared/pii"
	"github.com/esign-svc/esign/shared/tokens"
	"github.com/google/uuid"
)

func TestMain(m *testing.M) { azuritetest.Main(m) }

// env is one test's apptest environment (stores, outbox, keys, clock), the notification job,
// the reminder job and the portal's activation use case.
type env struct {
	*apptest.Env
	sessions *sessionstore.Store
	box      *outbox.Outbox
	portal   *esign.Sessions
	dstore   *deliverystore.Store // the deliveries (delivery_test.go)
	djob     *deliveryupload.Job  // their invitations and reminders
	recv     *delivery.Deliveries // the recipient's use cases (the portal's)
	job      *Job
	start    time.Time
	email    *apptest.Flaky // the outbox, or a provider that is down
}

func newEnv(t *testing.T) *env {
	t.Helper()
	a := apptest.New(t)
	// a few minutes into an hour, so that the hourly reminders fall in the hours after it
	a.Clock.Set(a.Now().Truncate(time.Hour).Add(5 * time.Minute))
	e := &env{Env: a, sessions: a.Sessions(), box: a.Outbox(), start: a.Now()}
	e.email = &apptest.Flaky{To: e.box}
	jobs := &esign.SessionJobs{Store: e.sessions, Reminders: e.sessions.Reminders()}
	notifier, err := notifyjob.New(notifyjob.Deps{Sessions: jobs, Tokens: a.Tokens, Cipher: a.Cipher, Email: e.email,
		PortalURL: "https://portal.example.test", Now: a.Now})
	if err != nil {
		t.Fatal(err)
	}
	e.dstore = a.Deliveries()
	e.recv = &delivery.Deliveries{Store: e.dstore, Cipher: a.Cipher, Now: a.Now}
	if e.djob, err = deliveryupload.New(deliveryupload.Deps{Deliveries: e.recv, Tokens: a.Tokens, Cipher: a.Cipher, Email: e.email,
		PortalURL: "https://portal.example.test", Now: a.Now}); err != nil {
		t.Fatal(err)
	}
	if e.job, err = New(Deps{Sessions: jobs, Notify: notifier.Notify, MessageID: notifyjob.MessageID,
		Deliveries: &delivery.Reminders{Schedule: e.dstore.Reminders(), Store: e.dstore}, Remind: e.djob.Remind, Now: a.Now}); err != nil {
		t.Fatal(err)
	}
	e.portal = &esign.Sessions{Store: e.sessions, Now: a.Now}
	return e
}

// session creates a live parallel session of n signers at the clock's time through the store, as the
// dispatcher does, with reminders after 1 h, then every 1 h, at most 2, expiring after expires.
func (e *env) session(t *testing.T, n int, expires time.Duration) (*esign.Session, []esign.Slot) {
	t.Helper()
	g := strings.ReplaceAll(uuid.NewString(), "-", "")
	s := &esign.Session{GroupID: g, TenantID: "t1", CorrelationID: "C-" + g, DocumentID: "Contract 7", DocType: "contract",
		PDFBlobPath: "documents/a.pdf", PDFHash: "sha256:00", SigningMode: esign.ModeParallel, State: esign.SessionPending,
		CreatedAt: e.Now(), ExpiresAt: e.Now().Add(expires), Reminders: &esign.ReminderPolicy{FirstAfterHours: 1, EveryHours: 1, Max: 2}}
	slots := make([]esign.Slot, n)
	for i := range slots {
		enc, err := e.Cipher.EncryptString("signer"+strconv.Itoa(i)+"@example.com", pii.AAD(g, "slot", strconv.Itoa(i)))
		if err != nil {
			t.Fatal(err)
		}
		slots[i] = esign.Slot{Index: i, SessionID: uuid.NewString(), Role: "r", EmailHash: "h", EmailEnc: enc,
			Condition: esign.Required, OTPChannel: esign.OTPNone, LinkJTI: uuid.NewString(), Locale: "de"}
	}
	slots[n-1].Condition = esign.Optional
	ch := esign.Start(s, slots, e.Now())
	ch.By(esign.Actor{Kind: "initiator", ID: "oid"})
	if err := e.sessions.Create(context.Background(), s, slots, ch, e.Now()); err != nil {
		t.Fatal(err)
	}
	return s, slots
}

// link is the slot token the portal link carries, as issued for the slot's link id.
func (e *env) link(t *testing.T, s *esign.Session, sl esign.Slot) tokens.Slot {
	t.Helper()
	tok, _, err := e.Tokens.IssueSlot(tokens.Slot{GroupID: s.GroupID, SlotIndex: sl.Index, ID: sl.LinkJTI, ExpiresAt: s.ExpiresAt})
	if err != nil {
		t.Fatal(err)
	}
	c, err := e.Tokens.VerifySlot(tok)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var reToken = regexp.MustCompile(`/sign\?token=([^\s"<>]+)`)

// mails are the outbox's e-mails of kind to address, in send order.
func (e *env) mails(t *testing.T, kind notify.Kind, to string) []outbox.Row {
	t.Helper()
	rows, err := e.box.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []outbox.Row
	for _, r := range rows {
		if r.Kind == kind && r.Recipient == to {
			out = append(out, r)
		}
	}
	return out
}

// linkIn is the submatches of re, the link of an e-mail, its last one (the token) unescaped.
func linkIn(t *testing.T, re *regexp.Regexp, r outbox.Row) []string {
	t.Helper()
	m := re.FindStringSubmatch(r.Text)
	if m == nil {
		t.Fatalf("no portal link in %q", r.Text)
	}
	raw, err := url.QueryUnescape(m[len(m)-1])
	if err != nil {
		t.Fatal(err)
	}
	m[len(m)-1] = raw
	return m
}

// tokenIn is the portal link's slot token of an e-mail.
func (e *env) tokenIn(t *testing.T, r outbox.Row) tokens.Slot {
	t.Helper()
	c, err := e.Tokens.VerifySlot(linkIn(t, reToken, r)[1])
	if err != nil {
		t.Fatalf("the reminder's link does not verify: %v", err)
	}
	return c
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

func (e *env) load(t *testing.T, g string) []esign.Slot {
	t.Helper()
	_, slots, err := e.sessions.Load(context.Background(), g)
	if err != nil {
		t.Fatal(err)
	}
	return slots
}

func sign(s *esign.Session, slots []esign.Slot, i int, at time.Time) (esign.Change, esign.Extras, error) {
	if _, err := esign.Activate(s, slots, i, at, nil); err != nil {
		return esign.Change{}, esign.Extras{}, err
	}
	if _, err := esign.MarkViewed(s, slots, i, at, nil); err != nil {
		return esign.Change{}, esign.Extras{}, err
	}
	if _, err := esign.Consent(s, slots, i, at, []string{"document_reviewed", "electronic_signature", "legally_binding"}); err != nil {
		return esign.Change{}, esign.Extras{}, err
	}
	ch, err := esign.Sign(s, slots, i, at, esign.SignInput{SignerName: "n"})
	slots[i].LinkUsed = true
	return ch, esign.Extras{}, err
}

// TestRemindersOnAMovedClock: of three signers, one never opens the link, one opened it and one
// signed. The first reminder comes an hour after the invitation: the unopened signer gets an
// invitation with a fresh link that opens the portal (the unused one no longer does), the
// opened one an e-mail without a link, the signed one nothing; the second an hour later; then
// the cap. Each reminder is audited and counted on the slot, and sent once.
func TestRemindersOnAMovedClock(t *testing.T) {
	t.Parallel()
	ctx, e := context.Background(), newEnv(t)
	s, created := e.session(t, 3, 24*time.Hour)
	if _, _, err := e.portal.Activate(ctx, e.link(t, s, created[1]), esign.Device{}); err != nil { // signer 1 opens
		t.Fatal(err)
	}
	if _, _, err := e.sessions.Update(ctx, s.GroupID, func(s *esign.Session, slots []esign.Slot) (esign.Change, esign.Extras, error) {
		return sign(s, slots, 2, e.Now())
	}); err != nil {
		t.Fatal(err)
	}
	e.run(t, time.Hour-time.Minute, 0) // not due yet
	e.run(t, time.Hour, 2)
	e.run(t, time.Hour+10*time.Minute, 0) // a second run sends nothing again

	first := e.mails(t, notify.KindInvitation, "signer0@example.com")
	if len(first) != 1 {
		t.Fatalf("%d reminder invitations to the unopened signer, want 1", len(first))
	}
	if !strings.Contains(first[0].Subject, "Neuer") {
		t.Fatalf("the reminder is not in the signer's language: %q", first[0].Subject)
	}
	c := e.tokenIn(t, first[0])
	if _, _, err := e.portal.Activate(ctx, e.link(t, s, created[0]), esign.Device{}); !errors.Is(err, esign.ErrLinkReplaced) {
		t.Fatalf("the unused first link after a reminder: %v, want link_replaced", err)
	}
	opened := e.mails(t, notify.KindSignerReminder, "signer1@example.com")
	if len(opened) != 1 || reToken.MatchString(opened[0].Text) || strings.Contains(opened[0].Text, "https://") {
		t.Fatalf("the opened signer's reminders %d, want one without a link: %+v", len(opened), opened)
	}
	if n := len(e.mails(t, notify.KindSignerReminder, "signer2@example.com")) + len(e.mails(t, notify.KindInvitation, "signer2@example.com")); n != 0 {
		t.Fatalf("the signed signer got %d reminders", n)
	}

	e.run(t, 2*time.Hour, 2)
	second := e.mails(t, notify.KindInvitation, "signer0@example.com")
	if len(second) != 2 {
		t.Fatalf("%d reminder invitations after the second, want 2", len(second))
	}
	c2 := e.tokenIn(t, second[1])
	if c2.ID == c.ID {
		t.Fatal("the second reminder carries the first reminder's link")
	}
	if _, _, err := e.portal.Activate(ctx, c, esign.Device{}); !errors.Is(err, esign.ErrLinkReplaced) {
		t.Fatalf("the first reminder's unused link after the second: %v, want link_replaced", err)
	}
	if got := len(e.mails(t, notify.KindSignerReminder, "signer1@example.com")); got != 2 {
		t.Fatalf("the opened signer got %d reminders, want 2", got)
	}

	e.run(t, 3*time.Hour, 0) // the cap: two each
	e.run(t, 10*time.Hour, 0)
	slots := e.load(t, s.GroupID)
	if slots[0].Reminders != 2 || slots[1].Reminders != 2 || slots[2].Reminders != 0 {
		t.Fatalf("reminder counts %d %d %d, want 2 2 0", slots[0].Reminders, slots[1].Reminders, slots[2].Reminders)
	}
	events, err := e.sessions.Events(ctx, s.GroupID)
	if err != nil {
		t.Fatal(err)
	}
	reminded := 0
	for _, ev := range events {
		if ev.Kind == esign.EvSlotReminded {
			reminded++
		}
	}
	if reminded != 4 {
		t.Fatalf("%d slot.reminded events, want 4", reminded)
	}
	if due, err := e.sessions.Reminders().Due(ctx, e.start.Add(24*time.Hour), 10); err != nil || len(due) != 0 {
		t.Fatalf("reminder entries left after the cap: %v %v", due, err)
	}
	// the latest link opens the portal
	if _, sl, err := e.portal.Activate(ctx, c2, esign.Device{}); err != nil || sl.State != esign.SlotActivated {
		t.Fatalf("the second reminder's link does not open the portal: %v", err)
	}
}

// TestNoReminderAfterExpiryOrCompletion: a session that expires before its second reminder
// gets only the first; a session whose signers all signed before the first gets none.
func TestNoReminderAfterExpiryOrCompletion(t *testing.T) {
	t.Parallel()
	ctx, e := context.Background(), newEnv(t)
	short, _ := e.session(t, 2, 90*time.Minute)
	done, _ := e.session(t, 2, 24*time.Hour)
	if _, _, err := e.sessions.Update(ctx, done.GroupID, func(s *esign.Session, slots []esign.Slot) (esign.Change, esign.Extras, error) {
		return sign(s, slots, 0, e.Now())
	}); err != nil {
		t.Fatal(err)
	}
	e.run(t, time.Hour, 2) // the short session's two signers; the other is sealing: its optional signer is not reminded
	if got := e.load(t, done.GroupID); got[1].Reminders != 0 {
		t.Fatalf("a completed session's signer was reminded %d times", got[1].Reminders)
	}
	e.run(t, 2*time.Hour, 0)
	e.run(t, 5*time.Hour, 0)
	if got := e.load(t, short.GroupID); got[0].Reminders != 1 || got[1].Reminders != 1 {
		t.Fatalf("reminders %d %d, want 1 1 (none after expiry)", got[0].Reminders, got[1].Reminders)
	}
}

// TestFailedReminderIsSentOnTheNextRun: the provider is down when the first reminder is due;
// the reminder is recorded (once) and its e-mail goes out on the next run, once, without a
// second reminder being recorded before its time.
func TestFailedReminderIsSentOnTheNextRun(t *testing.T) {
	t.Parallel()
	ctx, e := context.Background(), newEnv(t)
	s, _ := e.session(t, 1, 24*time.Hour)
	e.email.Down.Store(true)
	e.Clock.Set(e.start.Add(time.Hour))
	if _, err := e.job.Run(ctx); err == nil {
		t.Fatal("a run whose e-mail failed answered no error")
	}
	if got := e.load(t, s.GroupID); got[0].Reminders != 1 {
		t.Fatalf("%d reminders recorded, want 1", got[0].Reminders)
	}
	if n := len(e.mails(t, notify.KindInvitation, "signer0@example.com")); n != 0 {
		t.Fatalf("%d reminders sent while the provider is down", n)
	}
	e.email.Down.Store(false)
	e.run(t, time.Hour+10*time.Minute, 1)
	e.run(t, time.Hour+20*time.Minute, 0)
	if got := e.load(t, s.GroupID); got[0].Reminders != 1 {
		t.Fatalf("%d reminders recorded after the retry, want 1", got[0].Reminders)
	}
	sent := e.mails(t, notify.KindInvitation, "signer0@example.com")
	if len(sent) != 1 {
		t.Fatalf("%d reminders sent, want 1", len(sent))
	}
	c := e.tokenIn(t, sent[0])
	if _, _, err := e.portal.Activate(ctx, c, esign.Device{}); err != nil {
		t.Fatalf("the retried reminder's link does not open the portal: %v", err)
	}
}
