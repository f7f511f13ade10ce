package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/azure/blobstore"
	"github.com/esign-svc/esign/shared/azure/queuestore"
	"github.com/esign-svc/esign/shared/azure/tablestore"
	"github.com/esign-svc/esign/shared/callbacksig"
)

// inFlight is how many requests the benchmarks keep in flight (the client pool keeps as many
// connections).
const inFlight = 4

// The create and callback benchmarks run twice: on the run's fresh, empty Azurite, and after
// 50,000 unrelated rows were added to the sessions and index tables (a load is a point read,
// so the rate should not move). In each, the processor's queue triggers are paused while the
// service is timed (its jobs would otherwise compete for this 2-core machine and Azurite's one
// thread; they stay paused for the floor too and drain afterwards), and the same storage calls
// are timed straight against Azurite from this process, in chunks alternating with the
// service's (the floor: what Azurite allows for that work, with no Functions host, handler, JWT,
// HMAC or JSON in the way). Each reports the service's rate, the floor's and their ratio.
var fills = []struct {
	name string
	rows int
}{{"empty", 0}, {"rows=50k", 50000}}

func BenchmarkCreateSession(b *testing.B) {
	for _, f := range fills {
		b.Run(f.name, func(b *testing.B) {
			fillUnrelated(b, f.rows)
			body := createBody(b, "parallel", 2)
			tok := bearer(svc.jwt(b, tenantA, "Esign.Initiator"))
			// One real create first: the floor copies its rows.
			first := call(b, "POST", svc.url("esign/session"), withCorrelation(body, "bench-"), tok)
			if first.Status != http.StatusCreated {
				b.Fatalf("create %d %s", first.Status, first.Raw)
			}
			fl := newFloor(b, first.str("groupId"))
			pdf := strings.SplitN(body["pdfBlobPath"].(string), "/", 2)
			svc.host.PauseQueues()
			defer svc.host.ResumeQueues()
			rate, floor := alternate(b, b.N, func(i int) error {
				r := call(b, "POST", svc.url("esign/session"), withCorrelation(body, "bench-"), tok)
				if r.Status != http.StatusCreated {
					return fmt.Errorf("create %d %s", r.Status, r.Raw)
				}
				return nil
			}, func(i int) error { return fl.create(pdf[0], pdf[1]) })
			report(b, "creates/s", rate, floor)
		})
	}
}

func BenchmarkCallback(b *testing.B) {
	for _, f := range fills {
		b.Run(f.name, func(b *testing.B) {
			fillUnrelated(b, f.rows)
			template := createBody(b, "parallel", 2)
			tok := bearer(svc.jwt(b, tenantA, "Esign.Initiator"))
			secret := callbackSecret(b)
			// b.N ready slots, slot 0 of every session first and slot 1 after, so two slots of
			// one session are never signed at the same moment (they would race for its row).
			var first, second [][]byte
			var sample string
			for len(first)+len(second) < b.N {
				r := call(b, "POST", svc.url("esign/session"), withCorrelation(template, "bench-cb-"), tok)
				if r.Status != http.StatusCreated {
					b.Fatalf("create %d %s", r.Status, r.Raw)
				}
				sample = r.str("groupId")
				for i, s := range slotsOf(b, r, "slots") {
					if len(first)+len(second) == b.N {
						break
					}
					raw, err := json.Marshal(callbackBody(walk(b, s.Link)))
					if err != nil {
						b.Fatal(err)
					}
					if i == 0 {
						first = append(first, raw)
					} else {
						second = append(second, raw)
					}
				}
			}
			work := append(first, second...)
			fl := newFloor(b, sample)
			ids := make([]string, b.N)
			for i := range ids {
				if ids[i], _ = fl.copySession(); ids[i] == "" {
					b.Fatal("floor: could not copy a session")
				}
			}
			svc.host.PauseQueues()
			defer svc.host.ResumeQueues()
			rate, floor := alternate(b, len(work), func(i int) error {
				r := postCallback(b, work[i], callbacksig.Sign(secret, time.Now(), work[i]))
				if r.Status != http.StatusOK {
					return fmt.Errorf("callback %d %s", r.Status, r.Raw)
				}
				return nil
			}, func(i int) error { return fl.callback(ids[i]) })
			report(b, "callbacks/s", rate, floor)
		})
	}
}

// withCorrelation is a copy of a create body with a fresh correlationId.
func withCorrelation(body map[string]any, prefix string) map[string]any {
	m := make(map[string]any, len(body))
	for k, v := range body {
		m[k] = v
	}
	m["correlationId"] = prefix + uuid.NewString()
	return m
}

// alternate times n service operations and n floor operations in alternating chunks of
// altChunk, each chunk with inFlight workers, and returns both rates (operations per second of
// the time spent in each). Azurite slows as it holds more rows; alternating makes the service
// and the floor meet the same Azurite, instead of the floor always running on the bigger one.
// The first error fails the benchmark.
func alternate(b *testing.B, n int, service, floor func(i int) error) (float64, float64) {
	b.Helper()
	var spent [2]time.Duration
	b.ResetTimer()
	for lo := 0; lo < n; lo += altChunk {
		hi := min(lo+altChunk, n)
		for k, op := range []func(int) error{service, floor} {
			d, err := chunk(lo, hi, op)
			if err != nil {
				b.Fatal(err)
			}
			spent[k] += d
		}
	}
	b.StopTimer()
	return float64(n) / spent[0].Seconds(), float64(n) / spent[1].Seconds()
}

// altChunk is how many operations of one kind run before the other kind's turn.
const altChunk = 50

// chunk runs op(lo..hi-1) with inFlight workers and returns the time it took.
func chunk(lo, hi int, op func(i int) error) (time.Duration, error) {
	var next atomic.Int64
	next.Store(int64(lo))
	var failed atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < inFlight; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= hi {
					return
				}
				if err := op(i); err != nil {
					failed.CompareAndSwap(nil, err)
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	err, _ := failed.Load().(error)
	return elapsed, err
}

func report(b *testing.B, unit string, rate, floor float64) {
	b.ReportMetric(rate, unit)
	b.ReportMetric(floor, "floor-"+unit)
	b.ReportMetric(rate/floor, "of-floor")
}

// floor replays, straight against Azurite, the storage calls the service makes: rows copied
// from a real session (its session row with the slots inside, its audit rows).
type floor struct {
	b        *testing.B
	sessions *tablestore.Store
	index    *tablestore.Store
	queue    *queuestore.Queue
	docs     *blobstore.Store
	root     tablestore.Entity
	events   []tablestore.Entity
}

func newFloor(b *testing.B, groupID string) *floor {
	b.Helper()
	acct, err := azconn.New(azconn.Config{ConnectionString: svc.azurite.ConnectionString()})
	if err != nil {
		b.Fatal(err)
	}
	sessions, _ := tablestore.New(acct, "esignsessions")
	index, _ := tablestore.New(acct, "esignindex")
	q, err := queuestore.New(acct, "benchfloor")
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if err := q.Ensure(ctx); err != nil {
		b.Fatal(err)
	}
	f := &floor{b: b, sessions: sessions, index: index, queue: q, docs: blobstore.New(acct)}
	if f.root, err = sessions.Get(ctx, groupID, "session"); err != nil {
		b.Fatal(err)
	}
	rows, err := sessions.Query(ctx, groupID, &tablestore.QueryOptions{RowKeyPrefix: "evt-"})
	if err != nil {
		b.Fatal(err)
	}
	f.events = rows
	return f
}

// create is a create's calls: the PDF read, the correlationId claim insert, the expiry,
// invitation-check and event-outbox schedule upserts, the transaction (session row, its Start
// events and the outbox row of session.created), and the one notification message the host
// writes for the change.
func (f *floor) create(container, name string) error {
	ctx := context.Background()
	if _, _, err := f.docs.ReadAll(ctx, container, name, 64<<20); err != nil {
		return err
	}
	id := uuid.NewString()
	if _, err := f.index.Insert(ctx, tablestore.Entity{PartitionKey: "floor-" + id, RowKey: "claim",
		Props: map[string]any{"owner": id, "claimedAtNs": time.Now().UnixNano()}}); err != nil {
		return err
	}
	for _, schedule := range []string{"floorexp-", "floorinv-", "floorout-"} { // the expiry, invitation-check and outbox entries
		if _, err := f.index.Upsert(ctx, tablestore.Entity{PartitionKey: schedule + id[:2], RowKey: id,
			Props: map[string]any{"id": id}}); err != nil {
			return err
		}
	}
	if _, err := f.copyTo(id); err != nil {
		return err
	}
	_, err := f.queue.Send(ctx, map[string]any{"kind": "invitation", "groupId": id, "tenantId": tenantA,
		"targets": []map[string]any{{"slot": 0, "linkJti": id}, {"slot": 1, "linkJti": id}}})
	return err
}

func (f *floor) copySession() (string, error) {
	id := uuid.NewString()
	return f.copyTo(id)
}

func (f *floor) copyTo(id string) (string, error) {
	root := f.root
	root.PartitionKey, root.ETag = id, ""
	ops := []tablestore.Op{tablestore.InsertOp(root)}
	for i, e := range f.events {
		if i == 3 {
			break // a create's Start change: session.created and the invitations
		}
		e.PartitionKey, e.ETag = id, ""
		ops = append(ops, tablestore.InsertOp(e))
	}
	ops = append(ops, tablestore.InsertOp(floorOutbox(id)))
	return id, f.sessions.Transact(context.Background(), id, ops)
}

// floorOutbox is an outbox row as a published event writes it (DESIGN 17).
func floorOutbox(id string) tablestore.Entity {
	return tablestore.Entity{PartitionKey: id, RowKey: "out-floor-" + uuid.NewString(), Props: map[string]any{
		"eventId": "evt_" + uuid.NewString(), "type": "slot.signed", "tenantId": tenantA, "object": "session",
		"aggregateId": id, "slot": int64(0), "state": "in_progress", "atNs": time.Now().UnixNano()}}
}

// callback is a callback's calls: the point read of the session row, the event outbox's
// schedule upsert and the transaction that replaces it on its ETag with the slot.signed row,
// its outbox row, the signature row and the callback id.
func (f *floor) callback(id string) error {
	ctx := context.Background()
	root, err := f.sessions.Get(ctx, id, "session")
	if err != nil {
		return err
	}
	if _, err := f.index.Upsert(ctx, tablestore.Entity{PartitionKey: "floorout-" + id[:2], RowKey: id + "-cb",
		Props: map[string]any{"id": id}}); err != nil {
		return err
	}
	ev := f.events[0]
	ev.PartitionKey, ev.RowKey, ev.ETag = id, "evt-floor-"+uuid.NewString(), ""
	sig := tablestore.Entity{PartitionKey: id, RowKey: "sig-00", Props: map[string]any{"png": []byte(signaturePNG), "fields": "[]"}}
	cb := tablestore.Entity{PartitionKey: id, RowKey: "cb-" + uuid.NewString(), Props: map[string]any{"seenAtNs": time.Now().UnixNano()}}
	return f.sessions.Transact(ctx, id, []tablestore.Op{tablestore.ReplaceOp(root), tablestore.InsertOp(ev),
		tablestore.InsertOp(floorOutbox(id)), tablestore.InsertOp(sig), tablestore.InsertOp(cb)})
}

var filled struct {
	sync.Mutex
	rows int
}

// fillUnrelated adds rows to the sessions and index tables (other partitions, 100 a
// transaction) until each holds at least n unrelated rows.
func fillUnrelated(b *testing.B, n int) {
	b.Helper()
	filled.Lock()
	defer filled.Unlock()
	if filled.rows >= n {
		return
	}
	acct, err := azconn.New(azconn.Config{ConnectionString: svc.azurite.ConnectionString()})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, table := range []string{"esignsessions", "esignindex"} {
		st, _ := tablestore.New(acct, table)
		for p := filled.rows / 100; p < n/100; p++ {
			ops := make([]tablestore.Op, 100)
			for i := range ops {
				ops[i] = tablestore.InsertOp(tablestore.Entity{RowKey: fmt.Sprintf("row-%03d", i),
					Props: map[string]any{"state": "pending", "n": int64(i), "filler": strings.Repeat("x", 200)}})
			}
			if err := st.Transact(ctx, fmt.Sprintf("filler-%06d", p), ops); err != nil {
				b.Fatal(err)
			}
		}
	}
	filled.rows = n
}
