package deliverystore_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/delivery/deliverystore"
	"github.com/esign-svc/esign/shared/delivery/deliverystore/storetest"
	"github.com/esign-svc/esign/shared/pii"
	"github.com/esign-svc/esign/shared/tokens"
)

// The create use case (delivery.Creator) on this store against Azurite: the claim of the
// idempotency key, the plan, a storage failure part-way and the retry that completes it.

// failingStore is the store whose session Create fails once, on the failOn-th call (1-based).
type failingStore struct {
	*deliverystore.Store
	failOn     int64
	failFinish bool // recording a failed run fails too (the run died)
	calls      atomic.Int64
}

var errStorage = &apperr.Error{Kind: apperr.KindUnavailable, Code: "storage_unavailable", Detail: "injected"}

func (f *failingStore) Create(ctx context.Context, s *delivery.Session, ch delivery.Change) error {
	if f.calls.Add(1) == f.failOn {
		return errStorage
	}
	return f.Store.Create(ctx, s, ch)
}

func (f *failingStore) FinishCreate(ctx context.Context, tenant, key, run string, p delivery.Plan) error {
	if f.failFinish && !p.Done {
		return errStorage
	}
	return f.Store.FinishCreate(ctx, tenant, key, run, p)
}

// docs says every document exists (the blob check is not what is tested here).
type docs struct{}

func (docs) Exists(context.Context, string, string) (bool, error) { return true, nil }

// clock is a settable time shared by the creator and its token codec.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

type fixture struct {
	st    *deliverystore.Store
	clk   *clock
	codec *tokens.Codec
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	return &fixture{st: storetest.New(t), clk: &clock{t: time.Now().UTC().Truncate(time.Second)}}
}

func (f *fixture) creator(t *testing.T, store delivery.CreateStore) *delivery.Creator {
	t.Helper()
	key := base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	ring, err := tokens.ParseKeyRing("k1:" + key)
	if err != nil {
		t.Fatal(err)
	}
	f.codec = tokens.NewCodec(ring, tokens.WithClock(f.clk.now))
	h, err := pii.NewHasher([]byte("fedcba9876543210fedcba9876543210"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := pii.ParseCipher("e1:" + key)
	if err != nil {
		t.Fatal(err)
	}
	return &delivery.Creator{Store: store, Docs: docs{}, Tokens: f.codec, Hasher: h, Cipher: c,
		PortalURL: "https://portal.example.test", Now: f.clk.now}
}

var initiator = delivery.Requester{TenantID: "t1", CallerID: "oid-1", Actor: delivery.Actor{Kind: "initiator", ID: "oid-1"}}

func request(corr string, n int) delivery.CreateRequest {
	var rc []delivery.Recipient
	for i := 0; i < n; i++ {
		rc = append(rc, delivery.Recipient{Email: fmt.Sprintf("r%d@example.test", i), Name: fmt.Sprintf("R %d", i)})
	}
	return delivery.CreateRequest{CorrelationID: corr, DocumentName: "a.pdf", PDFBlobPath: "documents/t1/uploads/a.pdf",
		Mode: delivery.ModeSecureEmail, Recipients: rc}
}

// storedIDs lists the deliveryIds stored under the request's correlationId, sorted.
func storedIDs(t *testing.T, st *deliverystore.Store, corr string) []string {
	t.Helper()
	list, err := st.ListByCorrelation(context.Background(), initiator.TenantID, corr)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range list {
		ids = append(ids, s.DeliveryID)
	}
	slices.Sort(ids)
	return ids
}

func sorted(ids []string) []string { return slices.Sorted(slices.Values(ids)) }

func wantErr(t *testing.T, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("err = %v, want %v", err, want)
	}
}

func TestCreateFailurePartWayThenRetry(t *testing.T) {
	t.Parallel()
	for _, key := range []string{"key-" + uuid.NewString(), ""} { // the caller's key; derived
		t.Run(fmt.Sprintf("key=%t", key != ""), func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			failing := &failingStore{Store: f.st, failOn: 2}
			cr := f.creator(t, failing)
			ctx := context.Background()
			corr := "corr-" + uuid.NewString()

			_, err := cr.Create(ctx, initiator, key, request(corr, 3))
			wantErr(t, err, errStorage)
			left := storedIDs(t, f.st, corr)
			if len(left) != 1 {
				t.Fatalf("after the failure %d sessions stored, want the first recipient's only", len(left))
			}

			f.clk.add(time.Second)
			got, err := cr.Create(ctx, initiator, key, request(corr, 3))
			if err != nil {
				t.Fatal(err)
			}
			if got.Replayed || len(got.DeliveryIDs) != 3 || got.DeliveryIDs[0] != left[0] {
				t.Fatalf("retry answered %+v; the first session stored was %s", got, left[0])
			}
			if ids := storedIDs(t, f.st, corr); !slices.Equal(ids, sorted(got.DeliveryIDs)) {
				t.Fatalf("stored %v, answered %v: want one session per recipient", ids, got.DeliveryIDs)
			}
			for i, id := range got.DeliveryIDs {
				s, err := f.st.Load(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				if !s.ExpiresAt.Equal(got.ExpiresAt) || s.RecipientName != fmt.Sprintf("R %d", i) {
					t.Fatalf("session %d: %+v, answer expires %v", i, s, got.ExpiresAt)
				}
				d, err := f.codec.VerifyDelivery(deliveryToken(t, got.Links[i]))
				if err != nil || d.DeliveryID != id {
					t.Fatalf("link %d names %+v (%v), want %s", i, d, err, id)
				}
			}

			f.clk.add(time.Second)
			again, err := cr.Create(ctx, initiator, key, request(corr, 3))
			if err != nil {
				t.Fatal(err)
			}
			if !again.Replayed || !slices.Equal(again.DeliveryIDs, got.DeliveryIDs) || !slices.Equal(again.Links, got.Links) ||
				!again.ExpiresAt.Equal(got.ExpiresAt) {
				t.Fatalf("repeat answered %+v, want the replay of %+v", again, got)
			}
			if ids := storedIDs(t, f.st, corr); len(ids) != 3 {
				t.Fatalf("after the repeat %d sessions", len(ids))
			}
			if n := failing.calls.Load(); n != 5 {
				t.Fatalf("%d session creates, want 2 (failed run) + 3 (retry) and none for the repeat", n)
			}
		})
	}
}

func deliveryToken(t *testing.T, link string) string {
	t.Helper()
	i := len("https://portal.example.test/deliver/") + 36 + len("?t=")
	if len(link) <= i {
		t.Fatalf("link %q", link)
	}
	return link[i:]
}

func TestCreateKeyWithAnotherRequest(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	failing := &failingStore{Store: f.st, failOn: 1}
	cr := f.creator(t, failing)
	ctx := context.Background()
	key := "key-" + uuid.NewString()
	corr := "corr-" + uuid.NewString()

	// A failed run's plan belongs to its request too.
	_, err := cr.Create(ctx, initiator, key, request(corr, 2))
	wantErr(t, err, errStorage)
	_, err = cr.Create(ctx, initiator, key, request(corr, 3))
	wantErr(t, err, delivery.ErrKeyReused)

	first, err := cr.Create(ctx, initiator, key, request(corr, 2))
	if err != nil {
		t.Fatal(err)
	}
	other := request(corr, 2)
	other.Message = "another message"
	_, err = cr.Create(ctx, initiator, key, other)
	wantErr(t, err, delivery.ErrKeyReused)
	someoneElse := initiator
	someoneElse.CallerID = "oid-2"
	_, err = cr.Create(ctx, someoneElse, key, request(corr, 2))
	wantErr(t, err, delivery.ErrKeyReused)

	// Without a key the request is its own key: another body is another create.
	second, err := cr.Create(ctx, initiator, "", other)
	if err != nil || second.Replayed || slices.Contains(first.DeliveryIDs, second.DeliveryIDs[0]) {
		t.Fatalf("keyless other body: %+v %v", second, err)
	}
	if ids := storedIDs(t, f.st, corr); len(ids) != 4 {
		t.Fatalf("%d sessions, want 2 + 2", len(ids))
	}

	// A key of another tenant is another key.
	elsewhere := initiator
	elsewhere.TenantID = "t2"
	other.PDFBlobPath = "documents/t2/uploads/a.pdf"
	if got, err := cr.Create(ctx, elsewhere, key, other); err != nil || got.Replayed {
		t.Fatalf("other tenant: %+v %v", got, err)
	}
}

func TestCreateConcurrentSameKey(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cr := f.creator(t, f.st)
	key := "key-" + uuid.NewString()
	corr := "corr-" + uuid.NewString()
	const n = 30
	type result struct {
		c   delivery.Created
		err error
	}
	out := make([]result, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range out {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			c, err := cr.Create(context.Background(), initiator, key, request(corr, 3))
			out[i] = result{c, err}
		}()
	}
	close(start)
	wg.Wait()
	var made *delivery.Created
	for i, r := range out {
		switch {
		case r.err == nil && !r.c.Replayed:
			if made != nil {
				t.Fatalf("two requests created: %v and %v", made.DeliveryIDs, r.c.DeliveryIDs)
			}
			made = &out[i].c
		case r.err != nil && !errors.Is(r.err, delivery.ErrCreateInProgress):
			t.Fatalf("request %d: %v", i, r.err)
		}
	}
	if made == nil {
		t.Fatal("no request created the deliveries")
	}
	for _, r := range out {
		if r.err == nil && r.c.Replayed && !slices.Equal(r.c.DeliveryIDs, made.DeliveryIDs) {
			t.Fatalf("a replay answered %v, the create %v", r.c.DeliveryIDs, made.DeliveryIDs)
		}
	}
	if ids := storedIDs(t, f.st, corr); !slices.Equal(ids, sorted(made.DeliveryIDs)) {
		t.Fatalf("stored %v, want %v", ids, made.DeliveryIDs)
	}
}

func TestCreateRunThatDied(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	// The run stores the first session and dies: nothing records its end.
	dying := &failingStore{Store: f.st, failOn: 2, failFinish: true}
	ctx := context.Background()
	key := "key-" + uuid.NewString()
	corr := "corr-" + uuid.NewString()
	_, err := f.creator(t, dying).Create(ctx, initiator, key, request(corr, 3))
	wantErr(t, err, errStorage)
	left := storedIDs(t, f.st, corr)

	cr := f.creator(t, f.st)
	f.clk.add(deliverystore.CreateLease - time.Second)
	_, err = cr.Create(ctx, initiator, key, request(corr, 3))
	wantErr(t, err, delivery.ErrCreateInProgress)

	f.clk.add(2 * time.Second)
	got, err := cr.Create(ctx, initiator, key, request(corr, 3))
	if err != nil || got.Replayed {
		t.Fatalf("after the lease: %+v %v", got, err)
	}
	if len(left) != 1 || got.DeliveryIDs[0] != left[0] {
		t.Fatalf("answered %v; the died run stored %v", got.DeliveryIDs, left)
	}
	if ids := storedIDs(t, f.st, corr); !slices.Equal(ids, sorted(got.DeliveryIDs)) {
		t.Fatalf("stored %v, answered %v", ids, got.DeliveryIDs)
	}
}

func TestCreateKeyLapses(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cr := f.creator(t, f.st)
	ctx := context.Background()
	key := "key-" + uuid.NewString()
	corr := "corr-" + uuid.NewString()
	first, err := cr.Create(ctx, initiator, key, request(corr, 1))
	if err != nil {
		t.Fatal(err)
	}
	f.clk.add(delivery.KeyRetention - time.Second)
	if again, err := cr.Create(ctx, initiator, key, request(corr, 1)); err != nil || !again.Replayed {
		t.Fatalf("within the retention: %+v %v", again, err)
	}
	f.clk.add(time.Second)
	other := request(corr, 2)
	got, err := cr.Create(ctx, initiator, key, other)
	if err != nil || got.Replayed || got.DeliveryIDs[0] == first.DeliveryIDs[0] {
		t.Fatalf("after the retention another request: %+v %v", got, err)
	}

	// A plan whose sessions expired frees its key too.
	short := request("corr-"+uuid.NewString(), 1)
	hour := 1
	short.ExpiresInHours = &hour
	a, err := cr.Create(ctx, initiator, "", short)
	if err != nil {
		t.Fatal(err)
	}
	f.clk.add(time.Hour)
	b, err := cr.Create(ctx, initiator, "", short)
	if err != nil || b.Replayed || b.DeliveryIDs[0] == a.DeliveryIDs[0] {
		t.Fatalf("after the sessions expired: %+v %v", b, err)
	}
}

func TestCreateRefusesABadKey(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cr := f.creator(t, f.st)
	for _, key := range []string{"has space", "tab\t", "é", strings.Repeat("k", delivery.MaxIdempotencyKey+1)} {
		_, err := cr.Create(context.Background(), initiator, key, request("corr-"+uuid.NewString(), 1))
		e, ok := apperr.As(err)
		if !ok || e.Kind != apperr.KindInvalid || len(e.Fields) != 1 || e.Fields[0].Field != delivery.FieldIdempotencyKey {
			t.Fatalf("key %q: %v", key, err)
		}
	}
}

// A delivery may send a document or a signed document of the caller's own tenant (the seal job writes
// signed/<tenant>/<groupId>/signed.pdf); another tenant's is 400 invalid_blob_path, whatever
// is stored there, and nothing is stored.
func TestCreateSignedDocumentOfTheOwnTenantOnly(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cr := f.creator(t, f.st)
	ctx := context.Background()
	own := request("corr-"+uuid.NewString(), 1)
	own.PDFBlobPath = "signed/" + initiator.TenantID + "/" + uuid.NewString() + "/signed.pdf"
	got, err := cr.Create(ctx, initiator, "", own)
	if err != nil {
		t.Fatalf("own tenant's signed document: %v", err)
	}
	s, err := f.st.Load(ctx, got.DeliveryIDs[0])
	if err != nil || s.PDFBlobPath != own.PDFBlobPath {
		t.Fatalf("stored %+v, %v", s, err)
	}
	// The same for documents/: only the caller's folder (DESIGN 14), so another tenant's render
	// is refused like a missing one, before any read.
	for _, path := range []string{"signed/t2/" + uuid.NewString() + "/signed.pdf", "signed/" + uuid.NewString() + ".pdf",
		"documents/t2/rendered/" + uuid.NewString() + ".pdf", "documents/rendered/" + uuid.NewString() + ".pdf",
		"documents/t1x/" + uuid.NewString() + ".pdf", "documents/t1/../t2/a.pdf"} {
		req := request("corr-"+uuid.NewString(), 1)
		req.PDFBlobPath = path
		_, err := cr.Create(ctx, initiator, "", req)
		e, ok := apperr.As(err)
		if !ok || e.Kind != apperr.KindInvalid || e.Code != "invalid_blob_path" || len(e.Fields) != 1 || e.Fields[0].Field != "pdfBlobPath" {
			t.Fatalf("%s: %v, want 400 invalid_blob_path on pdfBlobPath", path, err)
		}
		if ids := storedIDs(t, f.st, req.CorrelationID); len(ids) != 0 {
			t.Fatalf("%s: stored %v", path, ids)
		}
	}
}
