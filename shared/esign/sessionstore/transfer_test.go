package sessionstore_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/esign/sessionstore"
	"github.com/esign-svc/esign/shared/esign/sessionstore/storetest"
	"github.com/esign-svc/esign/shared/tokens"
)

// createTransfer activates slot 0 and stores a cross-device token for it, as the portal does.
func createTransfer(t *testing.T, st *sessionstore.Store, now time.Time) (*esign.Session, string, string) {
	t.Helper()
	ctx := context.Background()
	s, slots := newSession("t1", "C-"+strings.ReplaceAll(t.Name(), "/", "-"), now, 1)
	create(t, st, s, slots, now)
	_, _, err := st.Update(ctx, s.GroupID, func(s *esign.Session, slots []esign.Slot) (esign.Change, esign.Extras, error) {
		ch, err := esign.Activate(s, slots, 0, now, nil)
		return ch, esign.Extras{}, err
	})
	if err != nil {
		t.Fatal(err)
	}
	tok, hash, err := tokens.NewOpaque()
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = st.Update(ctx, s.GroupID, func(s *esign.Session, slots []esign.Slot) (esign.Change, esign.Extras, error) {
		ch, tr, err := esign.CreateTransfer(s, slots, 0, now, hash)
		if err != nil {
			return ch, esign.Extras{}, err
		}
		if err := st.IndexTransfer(ctx, s.GroupID, tr); err != nil {
			return ch, esign.Extras{}, err
		}
		return ch, esign.Extras{NewTransfer: &tr}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return s, tok, hash
}

// redeem is the portal's redeem transaction.
func redeem(ctx context.Context, st *sessionstore.Store, token string, now time.Time) (int, error) {
	hash := tokens.OpaqueHash(token)
	groupID, err := st.TransferGroup(ctx, hash)
	if err != nil {
		return 0, err
	}
	a, _, err := st.Update(ctx, groupID, func(s *esign.Session, slots []esign.Slot) (esign.Change, esign.Extras, error) {
		tr, err := st.Transfer(ctx, groupID, hash)
		if err != nil {
			return esign.Change{}, esign.Extras{}, err
		}
		ch, err := esign.RedeemTransfer(s, slots, tr, now, nil)
		return ch, esign.Extras{Redeemed: &tr}, err
	})
	if err != nil {
		return 0, err
	}
	_ = st.ForgetTransfer(ctx, hash)
	return a.Slots[0].Generation, nil
}

func TestTransferStoredAsHashAndRedeemedOnce(t *testing.T) {
	t.Parallel()
	ctx, st := context.Background(), storetest.New(t)
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	s, tok, hash := createTransfer(t, st, now)

	tr, err := st.Transfer(ctx, s.GroupID, hash)
	if err != nil || tr.Slot != 0 || tr.Generation != 0 || !tr.ExpiresAt.Equal(now.Add(esign.TransferTTL)) || tr.ETag == "" {
		t.Fatalf("stored %+v %v", tr, err)
	}
	rows, err := st.Table().Query(ctx, s.GroupID, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		for k, v := range r.Props {
			if sv, ok := v.(string); ok && sv == tok {
				t.Fatalf("row %s property %s holds the token itself", r.RowKey, k)
			}
		}
	}
	if gen, err := redeem(ctx, st, tok, now.Add(time.Minute)); err != nil || gen != 1 {
		t.Fatalf("redeem: gen %d %v", gen, err)
	}
	if _, err := redeem(ctx, st, tok, now.Add(2*time.Minute)); err != esign.ErrTransferInvalid {
		t.Fatalf("second redeem: %v", err)
	}
	evs, err := st.Events(ctx, s.GroupID)
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	for _, ev := range evs {
		if ev.Kind == esign.EvSlotTransferCreated || ev.Kind == esign.EvSlotTransferRedeemed {
			seen = append(seen, ev.Kind)
		}
	}
	if len(seen) != 2 || seen[0] != esign.EvSlotTransferCreated || seen[1] != esign.EvSlotTransferRedeemed {
		t.Fatalf("transfer events %v", seen)
	}
}

func TestTransferUnknownAndExpired(t *testing.T) {
	t.Parallel()
	ctx, st := context.Background(), storetest.New(t)
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	s, tok, _ := createTransfer(t, st, now)
	other, _, _ := tokens.NewOpaque()
	for name, c := range map[string]struct {
		token string
		at    time.Time
	}{
		"unknown":   {other, now},
		"malformed": {"not-a-token", now},
		"expired":   {tok, now.Add(esign.TransferTTL)},
	} {
		if _, err := redeem(ctx, st, c.token, c.at); err != esign.ErrTransferInvalid {
			t.Errorf("%s: %v", name, err)
		}
	}
	_, slots, err := st.Load(ctx, s.GroupID)
	if err != nil || slots[0].Generation != 0 {
		t.Fatalf("refused redeems changed the slot: %v %d", err, slots[0].Generation)
	}
}

func TestTransferRaceHasOneWinner(t *testing.T) {
	t.Parallel()
	ctx, st := context.Background(), storetest.New(t)
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	s, tok, _ := createTransfer(t, st, now)
	const n = 4
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, errs[i] = redeem(ctx, st, tok, now.Add(time.Minute))
		}(i)
	}
	wg.Wait()
	wins := 0
	for _, err := range errs {
		switch {
		case err == nil:
			wins++
		case err == esign.ErrTransferInvalid || sessionstore.IsConcurrent(err):
		default:
			t.Errorf("unexpected error %v", err)
		}
	}
	_, slots, err := st.Load(ctx, s.GroupID)
	if err != nil {
		t.Fatal(err)
	}
	if wins != 1 || slots[0].Generation != 1 {
		t.Fatalf("%d redeems won, generation %d; want exactly one", wins, slots[0].Generation)
	}
}

func TestSweepTransfersRemovesOnlyExpiredTokens(t *testing.T) {
	t.Parallel()
	ctx, st := context.Background(), storetest.New(t)
	now := time.Now().UTC()
	var oldSession, liveSession *esign.Session
	var oldHash, liveHash string
	t.Run("old", func(t *testing.T) { oldSession, _, oldHash = createTransfer(t, st, now.Add(-20*time.Minute)) })
	t.Run("live", func(t *testing.T) { liveSession, _, liveHash = createTransfer(t, st, now) })

	n, err := st.SweepTransfers(ctx, now, 100)
	if err != nil || n != 1 {
		t.Fatalf("swept %d, %v", n, err)
	}
	if _, err := st.TransferGroup(ctx, oldHash); err == nil {
		t.Fatal("the expired token's index row is still there")
	}
	if _, err := st.Transfer(ctx, oldSession.GroupID, oldHash); err == nil {
		t.Fatal("the expired token's row is still in the session partition")
	}
	if g, err := st.TransferGroup(ctx, liveHash); err != nil || g != liveSession.GroupID {
		t.Fatalf("the live token was swept: %q %v", g, err)
	}
	if n, err := st.SweepTransfers(ctx, now, 100); err != nil || n != 0 {
		t.Fatalf("second sweep %d, %v", n, err)
	}
}
