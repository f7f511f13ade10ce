package deliveryupload

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/apptest"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/delivery/deliverystore"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/notify"
)

func TestMain(m *testing.M) { azuritetest.Main(m) }

type sentMail struct {
	mu   sync.Mutex
	msgs []notify.Message
}

func (s *sentMail) Send(_ context.Context, m notify.Message) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.msgs = append(s.msgs, m)
	return nil
}

func newJob(t *testing.T) (*Job, *deliverystore.Store) {
	t.Helper()
	x := apptest.New(t)
	j, err := New(Deps{Deliveries: &delivery.Deliveries{Store: x.Deliveries(), Now: time.Now}, Tokens: x.Tokens, Cipher: x.Cipher, Email: &sentMail{}, PortalURL: "https://portal.test"})
	if err != nil {
		t.Fatal(err)
	}
	return j, x.Deliveries()
}

func newDelivery(t *testing.T, st *deliverystore.Store, mode delivery.Mode) *delivery.Session {
	t.Helper()
	now := time.Now().UTC()
	s := &delivery.Session{DeliveryID: uuid.NewString(), TenantID: "t1", CorrelationID: "C1", DocumentName: "a.pdf",
		PDFBlobPath: "documents/a.pdf", Mode: mode, RecipientHash: "h", ExpiresAt: now.Add(time.Hour)}
	if err := st.Create(context.Background(), s, delivery.Start(s, now)); err != nil {
		t.Fatal(err)
	}
	return s
}

func message(t *testing.T, v any) funcproto.QueueMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return funcproto.QueueMessage{Body: b, DequeueCount: 5}
}

func kinds(t *testing.T, st *deliverystore.Store, id string) map[string]int {
	t.Helper()
	evs, err := st.Events(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, e := range evs {
		out[e.Kind]++
	}
	return out
}

// TestUploadPoisonRecordsTheFailureOnce: after the last retry an upload still pending is marked
// failed (retries_exhausted) with one audit event; a second poison message changes nothing; an
// upload already done is left alone.
func TestUploadPoisonRecordsTheFailureOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	j, st := newJob(t)
	s := newDelivery(t, st, delivery.ModeSharePoint)
	msg := message(t, delivery.UploadMessage{DeliveryID: s.DeliveryID, TenantID: s.TenantID})
	for i := 0; i < 2; i++ {
		if err := j.HandleUploadPoison(ctx, msg); err != nil && !funcproto.IsPermanent(err) {
			t.Fatalf("poison %d: %v", i, err)
		}
	}
	got, err := st.Load(ctx, s.DeliveryID)
	if err != nil {
		t.Fatal(err)
	}
	if got.UploadState != delivery.UploadFailed || got.UploadError != CodeRetriesExhausted {
		t.Fatalf("upload %s / %s", got.UploadState, got.UploadError)
	}
	if k := kinds(t, st, s.DeliveryID); k[delivery.EvUploadFailed] != 1 {
		t.Fatalf("events %v", k)
	}
	other := message(t, delivery.UploadMessage{DeliveryID: s.DeliveryID, TenantID: "another-tenant"})
	if err := j.HandleUploadPoison(ctx, other); !funcproto.IsPermanent(err) {
		t.Fatalf("another tenant's message: %v", err)
	}
}

// TestInvitePoisonRecordsTheFailure: an invitation never sent is recorded as failed after the
// last retry; one already sent is left alone.
func TestInvitePoisonRecordsTheFailure(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	j, st := newJob(t)
	s := newDelivery(t, st, delivery.ModeSecureEmail)
	if err := j.HandleInvitePoison(ctx, message(t, delivery.InviteMessage{DeliveryID: s.DeliveryID, TenantID: s.TenantID})); err != nil {
		t.Fatal(err)
	}
	if k := kinds(t, st, s.DeliveryID); k[delivery.EvInviteFailed] != 1 {
		t.Fatalf("events %v", k)
	}

	sent := newDelivery(t, st, delivery.ModeSecureEmail)
	if _, _, err := st.Update(ctx, sent.DeliveryID, func(s *delivery.Session) (delivery.Change, error) {
		return delivery.Invited(s, time.Now().UTC(), "email")
	}); err != nil {
		t.Fatal(err)
	}
	if err := j.HandleInvitePoison(ctx, message(t, delivery.InviteMessage{DeliveryID: sent.DeliveryID, TenantID: sent.TenantID})); err != nil {
		t.Fatal(err)
	}
	if k := kinds(t, st, sent.DeliveryID); k[delivery.EvInviteFailed] != 0 {
		t.Fatalf("a sent invitation was marked failed: %v", k)
	}
	if err := j.HandleInvitePoison(ctx, funcproto.QueueMessage{Body: []byte("not json")}); !funcproto.IsPermanent(err) {
		t.Fatalf("undecodable message: %v", err)
	}
}
