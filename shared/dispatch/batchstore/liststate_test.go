package batchstore_test

// The batch list by state (issue 26): the member rows carry a state hint that Update moves
// after each state change; a list with a state reads no batch row of a member whose hint is
// final, reads the others (and repairs a hint that is behind), and its total and pages stay
// exact.

import (
	"context"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/dispatch"
	"github.com/esign-svc/esign/shared/dispatch/batchstore"
	"github.com/esign-svc/esign/shared/dispatch/batchstore/storetest"
	"github.com/esign-svc/esign/shared/kernel"
)

var approver = kernel.Actor{Kind: "user", ID: "oid-approver"}

// batchReads counts the point reads of batch rows (RowKey 'batch') by batch id.
type batchReads struct {
	mu    sync.Mutex
	reads map[string]int
}

var batchRowRead = regexp.MustCompile(`\(PartitionKey='([^']*)',RowKey='batch'\)$`)

func (c *batchReads) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.reads
	c.reads = map[string]int{}
	return r
}

// countingStore is a batch store whose table calls pass a proxy that counts the batch row
// reads.
func countingStore(t *testing.T) (*batchstore.Store, *batchReads) {
	t.Helper()
	az := azuritetest.Shared(t)
	u, err := url.Parse(az.TableEndpoint)
	if err != nil {
		t.Fatal(err)
	}
	c := &batchReads{reads: map[string]int{}}
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m := batchRowRead.FindStringSubmatch(r.URL.Path); r.Method == http.MethodGet && m != nil {
			c.mu.Lock()
			c.reads[m[1]]++
			c.mu.Unlock()
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	acct, err := azconn.New(azconn.Config{ConnectionString: azuritetest.ConnectionString(az.BlobEndpoint, az.QueueEndpoint, srv.URL+u.Path)})
	if err != nil {
		t.Fatal(err)
	}
	sfx := azuritetest.Name("")
	st, err := batchstore.New(acct, "dsp"+sfx, "dspidx"+sfx)
	return azuritetest.Ensured(t, st, err), c
}

func hintOf(t *testing.T, st *batchstore.Store, tenant, id string) string {
	t.Helper()
	hints, _, err := st.Hints(context.Background(), tenant)
	if err != nil {
		t.Fatal(err)
	}
	return hints[id]
}

func ids(bs []*dispatch.Batch) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = b.BatchID
	}
	return out
}

// TestStateHintFollowsTheBatch: the member row holds the initial state from the create (none
// for a batch created invalid: a final hint is written only once its batch row is seen) and
// every state Decide, Start, Finish and Cancel move the batch to.
func TestStateHintFollowsTheBatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	uc := &dispatch.Batches{Store: st, Now: func() time.Time { return now }}
	want := func(id string, s dispatch.State) {
		t.Helper()
		if h := hintOf(t, st, "t1", id); h != string(s) {
			t.Fatalf("hint of %s: %q, want %q", id, h, s)
		}
	}

	a, recs := newBatch(t, st, "t1", 3, true, false)
	want(a.BatchID, dispatch.StatePendingApproval)
	if _, err := uc.Decide(ctx, "t1", a.BatchID, approver, dispatch.DecisionApprove, ""); err != nil {
		t.Fatal(err)
	}
	want(a.BatchID, dispatch.StateQueued)
	started, _, err := uc.Start(ctx, "t1", a.BatchID, jobActor)
	if err != nil {
		t.Fatal(err)
	}
	want(a.BatchID, dispatch.StateProcessing)
	for _, r := range recs {
		rec, err := uc.Record(ctx, a.BatchID, r.Index)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := uc.Processed(ctx, "t1", started, rec, dispatch.Outcome{CorrelationID: rec.CorrelationID}); err != nil {
			t.Fatal(err)
		}
	}
	want(a.BatchID, dispatch.StateProcessing) // a record's outcome changes no state
	if _, _, err := uc.Finish(ctx, "t1", a.BatchID, jobActor, dispatch.Artifacts{}); err != nil {
		t.Fatal(err)
	}
	want(a.BatchID, dispatch.StateCompleted)
	if _, _, err := uc.Finish(ctx, "t1", a.BatchID, jobActor, dispatch.Artifacts{}); err == nil {
		t.Fatal("a second finish was accepted")
	}
	want(a.BatchID, dispatch.StateCompleted) // a refused step writes nothing

	c, _ := newBatch(t, st, "t1", 2, true, false)
	if _, err := uc.Cancel(ctx, "t1", c.BatchID, approver); err != nil {
		t.Fatal(err)
	}
	want(c.BatchID, dispatch.StateCancelled)

	r, _ := newBatch(t, st, "t1", 2, true, false)
	if _, err := uc.Decide(ctx, "t1", r.BatchID, approver, dispatch.DecisionRequestChanges, "fix row 2"); err != nil {
		t.Fatal(err)
	}
	want(r.BatchID, dispatch.StateChangesRequested)
	if _, err := uc.Decide(ctx, "t1", r.BatchID, approver, dispatch.DecisionReject, ""); err != nil {
		t.Fatal(err)
	}
	want(r.BatchID, dispatch.StateRejected)

	q, _ := newBatch(t, st, "t1", 2, false, false)
	want(q.BatchID, dispatch.StateQueued)

	inv, _ := newBatch(t, st, "t1", 10, true, true)
	if inv.State != dispatch.StateInvalid {
		t.Fatalf("created %s, want invalid", inv.State)
	}
	want(inv.BatchID, "")
	p, err := uc.List(ctx, "t1", dispatch.StateInvalid, "", 10)
	if err != nil || p.Total != 1 || !slices.Equal(ids(p.Batches), []string{inv.BatchID}) {
		t.Fatalf("invalid list: %v %+v", err, p)
	}
	want(inv.BatchID, dispatch.StateInvalid) // repaired by the read
}

// TestListByStateReadsNoBatchRowOfAFinalHint lists a tenant's 35 batches (20 cancelled, 10
// rejected, 3 pending approval, 2 invalid) by state through the use case, counting the batch
// rows each list reads: only the members whose hint is not final (the pending ones, and the
// invalid ones until their first read hints them) and the page's, each once; the totals,
// pages and continuation tokens are exact.
func TestListByStateReadsNoBatchRowOfAFinalHint(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, reads := countingStore(t)
	uc := &dispatch.Batches{Store: st, Now: func() time.Time { return now }}
	var cancelled, rejected, pending, invalid []string // newest first
	for i := range 35 {
		at := now.Add(time.Duration(i) * time.Second)
		n := 2
		if i >= 33 {
			n = 10 // its tenth record invalid
		}
		b, _ := newBatchAt(t, st, "t1", n, true, i >= 33, at)
		switch {
		case i >= 33:
			invalid = append([]string{b.BatchID}, invalid...)
		case i >= 30:
			pending = append([]string{b.BatchID}, pending...)
		case i%3 == 0:
			if _, err := uc.Decide(ctx, "t1", b.BatchID, approver, dispatch.DecisionReject, ""); err != nil {
				t.Fatal(err)
			}
			rejected = append([]string{b.BatchID}, rejected...)
		default:
			if _, err := uc.Cancel(ctx, "t1", b.BatchID, approver); err != nil {
				t.Fatal(err)
			}
			cancelled = append([]string{b.BatchID}, cancelled...)
		}
	}
	newBatch(t, st, "t2", 2, true, false) // another tenant's
	reads.take()

	// wantReads: each of these batch rows read once, no other
	wantReads := func(what string, sets ...[]string) {
		t.Helper()
		want := map[string]int{}
		for _, s := range sets {
			for _, id := range s {
				want[id] = 1
			}
		}
		if got := reads.take(); !maps.Equal(got, want) {
			t.Fatalf("%s read %d batch rows %v, want %d %v", what, len(got), got, len(want), want)
		}
	}
	page := func(state dispatch.State, after string, limit, total int, want []string) string {
		t.Helper()
		p, err := uc.List(ctx, "t1", state, after, limit)
		if err != nil {
			t.Fatal(err)
		}
		if p.Total != total || !slices.Equal(ids(p.Batches), want) {
			t.Fatalf("%s after %q: total %d, page %v; want %d, %v", state, after, p.Total, ids(p.Batches), total, want)
		}
		for _, b := range p.Batches {
			if b.State != state {
				t.Fatalf("listed %s as %s", b.BatchID, b.State)
			}
		}
		return p.Next
	}

	next := page(dispatch.StateCancelled, "", 7, 20, cancelled[:7])
	wantReads("the first cancelled page", pending, invalid, cancelled[:7])
	for _, id := range invalid {
		if h := hintOf(t, st, "t1", id); h != string(dispatch.StateInvalid) {
			t.Fatalf("the invalid batch %s was read and left with hint %q", id, h)
		}
	}
	reads.take()
	next = page(dispatch.StateCancelled, next, 7, 20, cancelled[7:14])
	wantReads("the second cancelled page", pending, cancelled[7:14])
	if next = page(dispatch.StateCancelled, next, 7, 20, cancelled[14:]); next != "" {
		t.Fatalf("the last page's token %q", next)
	}
	wantReads("the last cancelled page", pending, cancelled[14:])

	page(dispatch.StateRejected, "", 100, 10, rejected)
	wantReads("the rejected list", pending, rejected)
	page(dispatch.StateInvalid, "", 100, 2, invalid)
	wantReads("the invalid list", pending, invalid)
	page(dispatch.StatePendingApproval, "", 2, 3, pending[:2])
	wantReads("the pending list", pending) // the page's rows were read for the selection
	page(dispatch.StateCompleted, "", 10, 0, nil)
	wantReads("the completed list", pending)

	all, err := uc.List(ctx, "t1", "", "", 5)
	if err != nil || all.Total != 35 || len(all.Batches) != 5 || all.Batches[0].BatchID != invalid[0] {
		t.Fatalf("the list without a state: %v total %d %v", err, all.Total, ids(all.Batches))
	}
	wantReads("the list without a state", invalid[:2], pending[:3])
}

// TestListByStateReadsStaleAndMissingHints: a hint left behind (a merge that never landed) and
// member rows from before the hint (with and without the creation time) list by the batch
// rows' states, and each is repaired.
func TestListByStateReadsStaleAndMissingHints(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	uc := &dispatch.Batches{Store: st, Now: func() time.Time { return now }}
	mk := func(i int) *dispatch.Batch {
		b, _ := newBatchAt(t, st, "t1", 2, true, false, now.Add(time.Duration(i)*time.Minute))
		return b
	}
	queued, cancelled, old, older := mk(0), mk(1), mk(2), mk(3)
	if _, err := uc.Decide(ctx, "t1", queued.BatchID, approver, dispatch.DecisionApprove, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := uc.Cancel(ctx, "t1", cancelled.BatchID, approver); err != nil {
		t.Fatal(err)
	}
	if _, err := uc.Decide(ctx, "t1", older.BatchID, approver, dispatch.DecisionReject, ""); err != nil {
		t.Fatal(err)
	}
	for _, b := range []*dispatch.Batch{queued, cancelled} {
		if err := st.SetHint(ctx, "t1", b.BatchID, dispatch.StatePendingApproval); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.OldMember(ctx, old, true); err != nil {
		t.Fatal(err)
	}
	if err := st.OldMember(ctx, older, false); err != nil {
		t.Fatal(err)
	}

	p, err := uc.List(ctx, "t1", dispatch.StatePendingApproval, "", 10)
	if err != nil || p.Total != 1 || !slices.Equal(ids(p.Batches), []string{old.BatchID}) {
		t.Fatalf("pending-approval: %v total %d %v, want only %s", err, p.Total, ids(p.Batches), old.BatchID)
	}
	hints, timed, err := st.Hints(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{queued.BatchID: "queued", cancelled.BatchID: "cancelled", old.BatchID: "pending-approval", older.BatchID: "rejected"}
	if !maps.Equal(hints, want) || !timed[older.BatchID] {
		t.Fatalf("hints after the list %v (timed %v), want %v and the old row's time", hints, timed, want)
	}
	for _, c := range []struct {
		state dispatch.State
		b     *dispatch.Batch
	}{{dispatch.StateQueued, queued}, {dispatch.StateCancelled, cancelled}, {dispatch.StateRejected, older}} {
		p, err := uc.List(ctx, "t1", c.state, "", 10)
		if err != nil || p.Total != 1 || !slices.Equal(ids(p.Batches), []string{c.b.BatchID}) {
			t.Fatalf("%s: %v total %d %v, want %s", c.state, err, p.Total, ids(p.Batches), c.b.BatchID)
		}
	}
	all, err := uc.List(ctx, "t1", "", "", 10)
	if err != nil || all.Total != 4 || !slices.Equal(ids(all.Batches), []string{older.BatchID, old.BatchID, cancelled.BatchID, queued.BatchID}) {
		t.Fatalf("the list without a state: %v %d %v", err, all.Total, ids(all.Batches))
	}
}
