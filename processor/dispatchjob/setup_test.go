package dispatchjob

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/apptest"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/dispatch"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/licence/licencetest"
	"github.com/esign-svc/esign/shared/queues"
	"github.com/esign-svc/esign/shared/render"
	"github.com/esign-svc/esign/shared/template"
)

func TestMain(m *testing.M) { azuritetest.Main(m) }

const tenant = "t1"

// env is one test's environment (stores, blobs, cipher, clock), its template package and the
// job built on them.
type env struct {
	*apptest.Env
	job *Job
	pkg string // templates/<name>.zip
}

// must is v, or a panic (a failed test) on err: for the setup's calls that cannot fail on a
// working Azurite.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func newEnv(t *testing.T) *env {
	t.Helper()
	x := apptest.New(t)
	x.Containers("documents")
	e := &env{Env: x, pkg: x.PackageZip(nil)}
	templates := &template.Loader{Blobs: x.Blobs}
	e.job = &Job{Deps: Deps{Batches: x.Batches(), Templates: templates, Blobs: x.Blobs, Cipher: x.Cipher, Email: x.Outbox(), Now: x.Now,
		Licence: licencetest.New(t),
		Producer: &render.Renderer{Templates: templates, Blobs: x.Blobs, Store: x.Documents(), Now: x.Now, WriteFirst: true,
			SharedManifests: &render.ManifestNames{}},
		Creator: &delivery.Creator{Store: x.Deliveries(), Docs: x.Blobs, Tokens: x.Tokens, Hasher: x.Hasher,
			Cipher: x.Cipher, PortalURL: "https://portal.example.test", Now: x.Now}}}
	return e
}

// offer is a valid record of the sample package for person i, starting in a month.
func (e *env) offer(i int) map[string]any {
	return map[string]any{"employeeName": "Person " + strconv.Itoa(i), "employeeEmail": "p" + strconv.Itoa(i) + "@x.test",
		"position": "Engineer", "salary": 50000 + i, "currency": "EUR", "startDate": e.Now().AddDate(0, 1, 0).Format("2006-01-02")}
}

// batch stores a batch of records (encrypted as the intake does), queued unless approval is
// required; mutate may change the batch and records first.
func (e *env) batch(t *testing.T, records []map[string]any, s dispatch.Settings, requireApproval bool, mutate func(*dispatch.Batch, []dispatch.Record)) *dispatch.Batch {
	t.Helper()
	b := &dispatch.Batch{BatchID: uuid.NewString(), TenantID: tenant, CorrelationID: "batch-" + uuid.NewString()[:8],
		Title: "Offers", TemplatePath: e.pkg, TemplateName: "Offer letter", TemplateVersion: 1, SubmittedBy: "oid-sub", Settings: s}
	recs := make([]dispatch.Record, len(records))
	for i, rec := range records {
		raw := must(json.Marshal(rec))
		recs[i] = dispatch.Record{BatchID: b.BatchID, Index: i, Status: dispatch.RecordReady, State: dispatch.RecordPending,
			DataEnc: must(e.Cipher.Encrypt(raw, dispatch.RecordAAD(b.BatchID, i)))}
	}
	if mutate != nil {
		mutate(b, recs)
	}
	ch := dispatch.Submit(b, recs, requireApproval, e.Now())
	if err := e.Batches().Create(context.Background(), b, recs, ch); err != nil {
		t.Fatal(err)
	}
	return b
}

// deliver runs msg through funcproto.QueueHandler as the host does; the reply must be a 200.
func deliver(t *testing.T, fn func(context.Context, funcproto.QueueMessage) error, msg any) apptest.Reply {
	t.Helper()
	r := apptest.InvokeJSON(t, fn, msg)
	if r.Status != http.StatusOK {
		t.Fatalf("status %d: %v", r.Status, r.Logs)
	}
	return r
}

// run carries the batch through the queues as the host would: the dispatch message, its pages,
// every record (concurrently), the finish and the notices. It returns the replies by function
// and the invitations queued.
func (e *env) run(t *testing.T, b *dispatch.Batch) (finishes []apptest.Reply, invites int) {
	t.Helper()
	var records []json.RawMessage
	pages := []any{dispatch.BatchMessage{BatchID: b.BatchID, TenantID: b.TenantID}}
	var finishMsgs []json.RawMessage
	for len(pages) > 0 {
		r := deliver(t, e.job.HandleDispatch, pages[0])
		pages = pages[1:]
		records = append(records, r.Messages(queues.DispatchRecord.Binding())...)
		for _, n := range r.Messages(queues.Dispatch.Binding()) {
			pages = append(pages, n)
		}
		finishMsgs = append(finishMsgs, r.Messages(queues.DispatchFinish.Binding())...)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, m := range records {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := deliver(t, e.job.HandleRecord, m)
			mu.Lock()
			defer mu.Unlock()
			finishMsgs = append(finishMsgs, r.Messages(queues.DispatchFinish.Binding())...)
			invites += len(r.Messages(queues.DeliveryInvite.Binding()))
		}()
	}
	wg.Wait()
	for _, m := range finishMsgs {
		r := deliver(t, e.job.HandleFinish, m)
		finishes = append(finishes, r)
		for _, n := range r.Messages(queues.DispatchNotify.Binding()) {
			deliver(t, e.job.HandleNotify, n)
		}
	}
	return finishes, invites
}
