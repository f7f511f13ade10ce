package deliverystore_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/delivery/deliverystore"
	"github.com/esign-svc/esign/shared/delivery/deliverystore/storetest"
	"github.com/esign-svc/esign/shared/kernel/aggstore"
)

// TestInviteChecksOfEmailedDeliveries: a delivery whose mode e-mails the recipient is put on the
// invitation-check schedule at create, due the check delay later; a library-only delivery is
// not; a checked entry is forgotten.
func TestInviteChecksOfEmailedDeliveries(t *testing.T) {
	t.Parallel()
	ctx, st := context.Background(), storetest.New(t)
	st.InviteChecks().SetAfter(4 * time.Minute)
	at := time.Now().UTC()
	made := map[delivery.Mode]string{}
	for _, mode := range []delivery.Mode{delivery.ModeSecureEmail, delivery.ModeSharePoint} {
		s := &delivery.Session{DeliveryID: uuid.NewString(), TenantID: "t1", CorrelationID: "c-" + string(mode), DocumentName: "a.pdf",
			PDFBlobPath: "documents/a.pdf", Mode: mode, RecipientHash: "h", RecipientEnc: "enc", ExpiresAt: at.Add(time.Hour)}
		ch := delivery.Start(s, at)
		if err := st.Create(ctx, s, ch); err != nil {
			t.Fatal(err)
		}
		made[mode] = s.DeliveryID
	}
	due := func(now time.Time) []aggstore.Item {
		t.Helper()
		items, err := st.InviteChecks().Due(ctx, now, 100)
		if err != nil {
			t.Fatal(err)
		}
		return items
	}
	if got := due(at.Add(4*time.Minute - time.Nanosecond)); len(got) != 0 {
		t.Fatalf("due before its time: %v", got)
	}
	want := aggstore.Item{ID: made[delivery.ModeSecureEmail], At: at.Add(4 * time.Minute)}
	if got := due(at.Add(time.Hour)); !reflect.DeepEqual(got, []aggstore.Item{want}) {
		t.Fatalf("due %v, want only %v", got, want)
	}
	if err := st.InviteChecks().Forget(ctx, want); err != nil {
		t.Fatal(err)
	}
	if got := due(at.Add(time.Hour)); len(got) != 0 {
		t.Fatalf("a forgotten check is still due: %v", got)
	}
}

// TestInviteClaim: of two senders one sends; a failed send gives the claim back, so it is
// claimable again; the claim marked done with the invited change turns later sends into
// ErrInviteSent; a stale claim is taken over and its holder's record then loses.
func TestInviteClaim(t *testing.T) {
	t.Parallel()
	ctx, st := context.Background(), storetest.New(t)
	s := create(t, st, "t1", "claim")
	at, lease := time.Now().UTC(), time.Minute
	invited := func(s *delivery.Session) (delivery.Change, error) { return delivery.Invited(s, now, "email") }
	refused := errors.New("provider refused")
	unsent := func() (time.Time, error) { t.Fatal("a second sender sent"); return at, nil }
	// The first sender holds the claim while it sends; the second finds it in flight; the
	// first's send fails and gives the claim back.
	_, _, err := st.SendInvite(ctx, s.DeliveryID, at, lease, func() (time.Time, error) {
		if _, _, err := st.SendInvite(ctx, s.DeliveryID, at.Add(time.Second), lease, unsent, invited); !errors.Is(err, deliverystore.ErrInviteInFlight) {
			t.Errorf("second claim: %v, want ErrInviteInFlight", err)
		}
		return time.Time{}, refused
	}, invited)
	if !errors.Is(err, refused) {
		t.Fatalf("failed send: %v", err)
	}
	// A stale claim is taken over (while its holder still sends): the holder's record loses,
	// the new holder's stands.
	claimed, proceed, taken := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	_, _, err = st.SendInvite(ctx, s.DeliveryID, at, lease, func() (time.Time, error) {
		go func() {
			_, _, err := st.SendInvite(ctx, s.DeliveryID, at.Add(2*lease), lease, func() (time.Time, error) {
				close(claimed)
				<-proceed
				return at, nil
			}, invited)
			taken <- err
		}()
		select {
		case <-claimed:
		case err := <-taken:
			t.Fatalf("stale claim not taken over: %v", err)
		}
		return at, nil
	}, invited)
	if !errors.Is(err, deliverystore.ErrConcurrent) {
		t.Fatalf("record under a lost claim: %v, want ErrConcurrent", err)
	}
	if got, _ := st.Load(ctx, s.DeliveryID); !got.SentAt.IsZero() {
		t.Fatal("a lost claim recorded the invitation")
	}
	close(proceed)
	if err := <-taken; err != nil {
		t.Fatal(err)
	}
	if got, _ := st.Load(ctx, s.DeliveryID); !got.SentAt.Equal(now) {
		t.Fatalf("sentAt %v", got.SentAt)
	}
	if _, _, err := st.SendInvite(ctx, s.DeliveryID, at.Add(time.Hour), lease, unsent, invited); !errors.Is(err, deliverystore.ErrInviteSent) {
		t.Fatalf("claim after sending: %v, want ErrInviteSent", err)
	}
}
