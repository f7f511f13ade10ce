package deliverystore_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/blobpath"
	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/delivery/deliverystore"
	"github.com/esign-svc/esign/shared/delivery/deliverystore/storetest"
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/otp"
	"github.com/esign-svc/esign/shared/otp/otpflow"
	"github.com/esign-svc/esign/shared/pii"
)

// The use cases on a stored session (delivery.Deliveries) on this store against Azurite: one
// load, the tenant or recipient gate, the transition and its audit rows by the actor.

// memBlobs is blob storage in memory: the documents and the sessions' copies.
type memBlobs struct {
	mu    sync.Mutex
	blobs map[string]bool // container/name
}

func newBlobs(paths ...string) *memBlobs {
	b := &memBlobs{blobs: map[string]bool{}}
	for _, p := range paths {
		b.blobs[p] = true
	}
	return b
}

func (b *memBlobs) has(container, name string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.blobs[container+"/"+name]
}

func (b *memBlobs) url(container, name string, ttl time.Duration, how string) (string, time.Time, error) {
	if !b.has(container, name) {
		return "", time.Time{}, apperr.New(apperr.KindNotFound, "blob_not_found", "no such blob")
	}
	return "https://blobs.test/" + container + "/" + name + "?" + how, time.Now().Add(ttl), nil
}

func (b *memBlobs) ReadURL(_ context.Context, container, name string, ttl time.Duration) (string, time.Time, error) {
	return b.url(container, name, ttl, "read")
}

func (b *memBlobs) DownloadURL(_ context.Context, container, name string, ttl time.Duration, filename string) (string, time.Time, error) {
	return b.url(container, name, ttl, "attachment="+filename)
}

func (b *memBlobs) Copy(_ context.Context, src, dst blobpath.Path) error {
	if !b.has(src.Container, src.Name) {
		return apperr.New(apperr.KindNotFound, "blob_not_found", "no such blob")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.blobs[dst.Container+"/"+dst.Name] = true
	return nil
}

func (b *memBlobs) DeleteIfExists(_ context.Context, container, name string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.blobs, container+"/"+name)
	return nil
}

type useCases struct {
	st     *deliverystore.Store
	u      *delivery.Deliveries
	blobs  *memBlobs
	clk    *clock
	hasher *pii.Hasher
}

const source = "documents/t1/uploads/a.pdf"

func newUseCases(t *testing.T) *useCases {
	t.Helper()
	h, err := pii.NewHasher([]byte("fedcba9876543210fedcba9876543210"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := pii.ParseCipher("e1:MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=")
	if err != nil {
		t.Fatal(err)
	}
	e := &useCases{st: storetest.New(t), blobs: newBlobs(source), clk: &clock{t: time.Now().UTC().Truncate(time.Second)}, hasher: h}
	e.u = &delivery.Deliveries{Store: e.st, Blobs: e.blobs, Cipher: c, Now: e.clk.tick}
	return e
}

// tick moves the clock on a millisecond and reads it: every transition its own time, so the
// audit rows sort in the order they were written.
func (c *clock) tick() time.Time { c.add(time.Millisecond); return c.now() }

// session stores a live session of tenant t1 for rita@example.test.
func (e *useCases) session(t *testing.T, requireOTP bool) *delivery.Session {
	t.Helper()
	id := uuid.NewString()
	enc, err := e.u.Cipher.EncryptString("rita@example.test", pii.AAD(id, "recipient"))
	if err != nil {
		t.Fatal(err)
	}
	s := &delivery.Session{DeliveryID: id, TenantID: "t1", CorrelationID: "corr-" + id, DocumentName: "a.pdf",
		PDFBlobPath: source, Mode: delivery.ModeSecureEmail, RecipientHash: "h", RecipientEnc: enc,
		RequireOTP: requireOTP, ExpiresAt: e.clk.now().Add(time.Hour)}
	ch := delivery.Start(s, e.clk.now())
	ch.By(delivery.Actor{Kind: "initiator", ID: "oid-1"})
	if err := e.st.Create(context.Background(), s, ch); err != nil {
		t.Fatal(err)
	}
	return s
}

// events are the session's audit rows as "kind by actor".
func (e *useCases) events(t *testing.T, id string) []string {
	t.Helper()
	evs, err := e.st.Events(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ev := range evs {
		out = append(out, ev.Kind+" by "+ev.ActorKind)
	}
	return out
}

func wantEvents(t *testing.T, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
}

func wantCode(t *testing.T, err error, status int, code string) {
	t.Helper()
	e, ok := apperr.As(err)
	if !ok || e.Kind.Status() != status || e.Code != code {
		t.Fatalf("err = %v, want %d %s", err, status, code)
	}
}

var (
	initiatorActor = delivery.Actor{Kind: "initiator", ID: "oid-1"}
	recipientActor = delivery.Actor{Kind: "recipient", ID: "r"}
	systemActor    = delivery.Actor{Kind: "system", ID: "processor"}
)

func TestDeliveriesRevokeIsPerTenantAndDeletesTheCopy(t *testing.T) {
	t.Parallel()
	e := newUseCases(t)
	ctx := context.Background()
	s := e.session(t, false)
	if _, err := e.u.IssueLink(ctx, s.DeliveryID, "sas", false, recipientActor); err != nil {
		t.Fatal(err)
	}
	cp := delivery.CopyPath(s)
	if !e.blobs.has(cp.Container, cp.Name) {
		t.Fatal("the first link made no copy")
	}

	_, err := e.u.Revoke(ctx, "t2", s.DeliveryID, initiatorActor)
	if !errors.Is(err, delivery.ErrNotFound) {
		t.Fatalf("another tenant's revoke: %v", err)
	}
	if _, err := e.u.Revoke(ctx, "t1", uuid.NewString(), initiatorActor); !errors.Is(err, delivery.ErrNotFound) {
		t.Fatalf("a missing session's revoke: %v", err)
	}
	if !e.blobs.has(cp.Container, cp.Name) {
		t.Fatal("another tenant's revoke deleted the copy")
	}

	got, err := e.u.Revoke(ctx, "t1", s.DeliveryID, initiatorActor)
	if err != nil || got.State != delivery.StateRevoked || got.RevokedAt.IsZero() {
		t.Fatalf("revoke: %+v %v", got, err)
	}
	if e.blobs.has(cp.Container, cp.Name) {
		t.Fatal("the revoke left the copy")
	}
	if _, err := e.u.Revoke(ctx, "t1", s.DeliveryID, initiatorActor); err != nil {
		t.Fatalf("revoking again: %v", err)
	}
	wantEvents(t, e.events(t, s.DeliveryID), delivery.EvCreated+" by initiator", delivery.EvSASIssued+" by recipient",
		delivery.EvRevoked+" by initiator")

	_, err = e.u.IssueLink(ctx, s.DeliveryID, "sas", false, recipientActor)
	wantCode(t, err, http.StatusGone, "delivery_revoked")
	if err := e.u.Ended(ctx, s.DeliveryID); !errors.Is(err, delivery.ErrRevoked) {
		t.Fatalf("Ended of a revoked session: %v", err)
	}
}

func TestDeliveriesListIsPerTenantWithTheRecipient(t *testing.T) {
	t.Parallel()
	e := newUseCases(t)
	ctx := context.Background()
	s := e.session(t, false)
	list, err := e.u.List(ctx, "t1", s.CorrelationID)
	if err != nil || len(list) != 1 || list[0].DeliveryID != s.DeliveryID || list[0].Recipient != "rita@example.test" {
		t.Fatalf("list: %+v %v", list, err)
	}
	if list, err := e.u.List(ctx, "t2", s.CorrelationID); err != nil || len(list) != 0 {
		t.Fatalf("another tenant listed %d (%v)", len(list), err)
	}
}

func TestDeliveriesRecipientGate(t *testing.T) {
	t.Parallel()
	e := newUseCases(t)
	ctx := context.Background()
	s := e.session(t, true)

	if got, err := e.u.Live(ctx, s.DeliveryID); err != nil || got.DeliveryID != s.DeliveryID {
		t.Fatalf("live: %v", err)
	}
	if _, err := e.u.Live(ctx, uuid.NewString()); !errors.Is(err, delivery.ErrNotFound) {
		t.Fatalf("missing: %v", err)
	}
	if err := e.u.Ended(ctx, uuid.NewString()); err != nil {
		t.Fatalf("Ended of a missing session: %v", err)
	}
	if err := e.u.Ended(ctx, s.DeliveryID); err != nil {
		t.Fatalf("Ended of a live session: %v", err)
	}

	// Before the OTP: no link, no download; opening is recorded with the reported address.
	_, err := e.u.IssueLink(ctx, s.DeliveryID, "download", true, recipientActor)
	wantCode(t, err, http.StatusForbidden, otp.CodeRequired)
	wantCode(t, e.u.Access(ctx, s.DeliveryID, delivery.AccessDownloaded, "", recipientActor), http.StatusForbidden, otp.CodeRequired)
	if err := e.u.Access(ctx, s.DeliveryID, delivery.AccessOpened, "203.0.113.9", recipientActor); err != nil {
		t.Fatal(err)
	}
	evs, _ := e.st.Events(ctx, s.DeliveryID)
	if last := evs[len(evs)-1]; last.Kind != delivery.EvOpened || last.Data["reportedIp"] != "203.0.113.9" {
		t.Fatalf("opened event %+v", last)
	}

	// Once expired every recipient use case is 410, and Ended says so.
	e.clk.add(time.Hour)
	wantCode(t, e.u.Access(ctx, s.DeliveryID, delivery.AccessOpened, "", recipientActor), http.StatusGone, "delivery_expired")
	_, err = e.u.Live(ctx, s.DeliveryID)
	wantCode(t, err, http.StatusGone, "delivery_expired")
	wantCode(t, e.u.Ended(ctx, s.DeliveryID), http.StatusGone, "delivery_expired")
	wantEvents(t, e.events(t, s.DeliveryID), delivery.EvCreated+" by initiator", delivery.EvOpened+" by recipient")
}

func TestDeliveriesIssueLink(t *testing.T) {
	t.Parallel()
	e := newUseCases(t)
	ctx := context.Background()
	s := e.session(t, false)
	l, err := e.u.IssueLink(ctx, s.DeliveryID, "download", true, recipientActor)
	if err != nil {
		t.Fatal(err)
	}
	cp := delivery.CopyPath(s)
	if !strings.Contains(l.URL, cp.Container+"/"+cp.Name+"?attachment=a.pdf") {
		t.Fatalf("download URL %s is not the copy's attachment URL", l.URL)
	}
	if until := e.clk.now().Add(delivery.SASTTL); l.ExpiresAt.After(until.Add(time.Minute)) {
		t.Fatalf("URL expires %v, beyond %v", l.ExpiresAt, until)
	}
	evs, _ := e.st.Events(ctx, s.DeliveryID)
	if last := evs[len(evs)-1]; last.Kind != delivery.EvSASIssued || last.Data["via"] != "download" {
		t.Fatalf("sas event %+v", last)
	}

	// A session whose document is gone (and has no copy yet) answers 410 document_gone.
	gone := e.session(t, false)
	_ = e.blobs.DeleteIfExists(ctx, "documents", strings.TrimPrefix(source, "documents/"))
	_, err = e.u.IssueLink(ctx, gone.DeliveryID, "sas", false, recipientActor)
	wantCode(t, err, http.StatusGone, "document_gone")
	wantEvents(t, e.events(t, gone.DeliveryID), delivery.EvCreated+" by initiator")
}

var codeIn = regexp.MustCompile(`\bis (\d{6})\.`)

// mailbox keeps the codes sent; fail makes the next send fail.
type mailbox struct {
	mu   sync.Mutex
	last notify.Message
	fail error
}

func (m *mailbox) Send(_ context.Context, msg notify.Message) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.fail; err != nil {
		m.fail = nil
		return err
	}
	m.last = msg
	return nil
}

func TestDeliveriesOTP(t *testing.T) {
	t.Parallel()
	e := newUseCases(t)
	ctx := context.Background()
	s := e.session(t, true)
	mail := &mailbox{}
	flow := &otpflow.Flow{Hasher: e.hasher, Senders: notify.Providers{Email: mail}, Purpose: otpflow.Access,
		SendFailed: otpflow.ErrSendFailed, Field: otpflow.CodeField{Path: "otp", Hint: "6 digits"}}
	send := func() error {
		var stored *delivery.Session
		return flow.Send(ctx, func(code otpflow.Code) (otpflow.Target, error) {
			to, st, err := e.u.RecordOTP(ctx, s.DeliveryID, code, recipientActor)
			stored = st
			return to, err
		}, func(ctx context.Context, reason string) error {
			return e.u.UndoOTP(ctx, stored.DeliveryID, reason, recipientActor)
		})
	}
	verify := func(digits string) error {
		return flow.Verify(digits, func(code otpflow.Code) (otp.Outcome, *otp.State, error) {
			return e.u.VerifyOTP(ctx, s.DeliveryID, code, recipientActor)
		})
	}

	// A failed send is undone: the recipient may ask again at once.
	mail.fail = apperr.New(apperr.KindUnavailable, "provider_down", "injected")
	wantCode(t, send(), http.StatusServiceUnavailable, otp.CodeSendFailed)
	if err := send(); err != nil {
		t.Fatalf("send after the failed one: %v", err)
	}
	if mail.last.To != "rita@example.test" {
		t.Fatal("the code did not go to the recipient's address")
	}
	code := codeIn.FindStringSubmatch(mail.last.Text)[1]
	wrong := "000000"
	if code == wrong {
		wrong = "000001"
	}
	wantCode(t, verify(wrong), http.StatusBadRequest, "otp_invalid")
	if err := verify(code); err != nil {
		t.Fatalf("the right code: %v", err)
	}
	if _, err := e.u.IssueLink(ctx, s.DeliveryID, "sas", false, recipientActor); err != nil {
		t.Fatalf("a link after the OTP: %v", err)
	}
	wantEvents(t, e.events(t, s.DeliveryID), delivery.EvCreated+" by initiator", delivery.EvOTPSent+" by recipient",
		delivery.EvOTPSendFailed+" by recipient", delivery.EvOTPSent+" by recipient", delivery.EvOTPFailed+" by recipient",
		delivery.EvOTPVerified+" by recipient", delivery.EvSASIssued+" by recipient")
	evs, _ := e.st.Events(ctx, s.DeliveryID)
	for _, ev := range evs {
		if data := fmt.Sprint(ev.Data); strings.Contains(data, "rita@example.test") || strings.Contains(data, code) {
			t.Fatalf("audit row %s carries the address or the code: %s", ev.Kind, ev.Data)
		}
	}

	// A session without OTP refuses a code.
	plain := e.session(t, false)
	err := flow.Send(ctx, func(code otpflow.Code) (otpflow.Target, error) {
		to, _, err := e.u.RecordOTP(ctx, plain.DeliveryID, code, recipientActor)
		return to, err
	}, func(context.Context, string) error { return nil })
	wantCode(t, err, http.StatusBadRequest, otp.CodeNotRequired)
}

func TestDeliveriesJobTransitions(t *testing.T) {
	t.Parallel()
	e := newUseCases(t)
	ctx := context.Background()
	s := e.session(t, false)

	if _, err := e.u.ForMessage(ctx, "t2", s.DeliveryID); !errors.Is(err, delivery.ErrTenantMismatch) {
		t.Fatalf("another tenant's message: %v", err)
	}
	if _, err := e.u.ForMessage(ctx, "", uuid.NewString()); !errors.Is(err, delivery.ErrNotFound) {
		t.Fatalf("a missing session's message: %v", err)
	}
	for _, tenant := range []string{"", "t1"} {
		if got, err := e.u.ForMessage(ctx, tenant, s.DeliveryID); err != nil || got.DeliveryID != s.DeliveryID {
			t.Fatalf("message of tenant %q: %v", tenant, err)
		}
	}

	// A failed send gives the claim up; the next sends; a third finds it sent.
	refused := apperr.New(apperr.KindInvalid, "address_rejected", "injected")
	if _, err := e.u.SendInvite(ctx, s.DeliveryID, time.Minute, "email", systemActor, func() error { return refused }); !errors.Is(err, refused) {
		t.Fatalf("failed send: %v", err)
	}
	if err := e.u.RecordInviteFailed(ctx, s.DeliveryID, "address_rejected", systemActor); err != nil {
		t.Fatal(err)
	}
	sends := 0
	got, err := e.u.SendInvite(ctx, s.DeliveryID, time.Minute, "email", systemActor, func() error { sends++; return nil })
	if err != nil || got.SentAt.IsZero() || sends != 1 {
		t.Fatalf("send: %+v %v (%d sends)", got, err, sends)
	}
	if _, err := e.u.SendInvite(ctx, s.DeliveryID, time.Minute, "email", systemActor, func() error { sends++; return nil }); !errors.Is(err, delivery.ErrInviteSent) || sends != 1 {
		t.Fatalf("second send: %v (%d sends)", err, sends)
	}

	if err := e.u.RecordUploadFailed(ctx, s.DeliveryID, "graph_forbidden", "no consent", 2, systemActor); err != nil {
		t.Fatal(err)
	}
	if err := e.u.RecordUpload(ctx, s.DeliveryID, "https://c.sharepoint.test/a.pdf", "item-1", "a.pdf", systemActor); err != nil {
		t.Fatal(err)
	}
	stored, err := e.st.Load(ctx, s.DeliveryID)
	if err != nil || stored.UploadState != delivery.UploadDone || stored.UploadItemID != "item-1" || stored.UploadError != "" {
		t.Fatalf("after the upload %+v %v", stored, err)
	}
	wantEvents(t, e.events(t, s.DeliveryID), delivery.EvCreated+" by initiator", delivery.EvInviteFailed+" by system",
		delivery.EvInvited+" by system", delivery.EvUploadFailed+" by system", delivery.EvUploaded+" by system")
}

// SendInvite on a session revoked meanwhile sends nothing more than the claim allowed and
// answers Invited's 410 once the provider took the message.
func TestDeliveriesSendInviteRevokedMeanwhile(t *testing.T) {
	t.Parallel()
	e := newUseCases(t)
	ctx := context.Background()
	s := e.session(t, false)
	_, err := e.u.SendInvite(ctx, s.DeliveryID, time.Minute, "email", systemActor, func() error {
		_, err := e.u.Revoke(ctx, "t1", s.DeliveryID, initiatorActor)
		return err
	})
	wantCode(t, err, http.StatusGone, "delivery_revoked")
}
