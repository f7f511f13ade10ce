package dispatchjob

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/azure/blobstore"
	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/delivery/deliverystore"
	"github.com/esign-svc/esign/shared/dispatch"
	"github.com/esign-svc/esign/shared/dispatch/batchstore"
	"github.com/esign-svc/esign/shared/document/documentstore"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/licence/licencetest"
	"github.com/esign-svc/esign/shared/notify/outbox"
	"github.com/esign-svc/esign/shared/pii"
	"github.com/esign-svc/esign/shared/queues"
	"github.com/esign-svc/esign/shared/render"
	"github.com/esign-svc/esign/shared/template"
	"github.com/esign-svc/esign/shared/tokens"
)

func TestMain(m *testing.M) { azuritetest.Main(m) }

const tenant = "t1"

// env is one test's tables, blobs, outbox, template package and job.
type env struct {
	job        *Job
	batches    *batchstore.Store
	deliveries *deliverystore.Store
	docs       *documentstore.Store
	blobs      *blobstore.Store
	box        *outbox.Outbox
	cipher     *pii.Cipher
	pkg        string // templates/dispatchjob/<uuid>.zip
	now        time.Time
}

func randKey() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

// must is v, or a panic (a failed test) on err: for the setup's calls that cannot fail on a
// working Azurite.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

var offerZip = sync.OnceValues(func() ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range []string{"template.yaml", "template.pdf"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "examples", "offer", name))
		if err != nil {
			return nil, err
		}
		w, err := zw.Create(name)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(b); err != nil {
			return nil, err
		}
	}
	err := zw.Close()
	return buf.Bytes(), err
})

func newEnv(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	acct := must(azconn.New(azconn.Config{ConnectionString: azuritetest.Shared(t).ConnectionString()}))
	sfx := hex.EncodeToString(must(uuid.New().MarshalBinary()))[:10]
	e := &env{now: time.Now().UTC(), blobs: blobstore.New(acct)}
	e.batches = must(batchstore.New(acct, "dsp"+sfx, "dspidx"+sfx))
	e.deliveries = must(deliverystore.New(acct, "dlv"+sfx, "dlvidx"+sfx))
	e.docs = must(documentstore.New(acct, "docs"+sfx))
	e.box = must(outbox.New(acct, "outbox"+sfx))
	for _, ensure := range []func(context.Context) error{e.batches.Ensure, e.deliveries.Ensure, e.docs.Ensure, e.box.Ensure} {
		if err := ensure(ctx); err != nil {
			t.Fatal(err)
		}
	}
	e.cipher = must(pii.ParseCipher("e1:" + randKey()))
	ring := must(tokens.ParseKeyRing("k1:" + randKey()))
	hasher := must(pii.NewHasher([]byte(randKey())))
	for _, c := range []string{"templates", "documents"} {
		if err := e.blobs.EnsureContainer(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	e.pkg = "templates/dispatchjob/" + uuid.NewString() + ".zip"
	if _, err := e.blobs.Put(ctx, "templates", e.pkg[len("templates/"):], bytes.NewReader(must(offerZip())), "application/zip", nil); err != nil {
		t.Fatal(err)
	}
	now := func() time.Time { return e.now }
	templates := &template.Loader{Blobs: e.blobs}
	e.job = &Job{Deps: Deps{Batches: e.batches, Templates: templates, Blobs: e.blobs, Cipher: e.cipher, Email: e.box, Now: now,
		Licence:  licencetest.New(t),
		Producer: &render.Renderer{Templates: templates, Blobs: e.blobs, Store: e.docs, Now: now},
		Creator: &delivery.Creator{Store: e.deliveries, Docs: e.blobs, Tokens: tokens.NewCodec(ring), Hasher: hasher,
			Cipher: e.cipher, PortalURL: "https://portal.example.test", Now: now}}}
	return e
}

// offer is a valid record of the sample package for person i, starting in a month.
func (e *env) offer(i int) map[string]any {
	return map[string]any{"employeeName": "Person " + strconv.Itoa(i), "employeeEmail": "p" + strconv.Itoa(i) + "@x.test",
		"position": "Engineer", "salary": 50000 + i, "currency": "EUR", "startDate": e.now.AddDate(0, 1, 0).Format("2006-01-02")}
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
			DataEnc: must(e.cipher.Encrypt(raw, dispatch.RecordAAD(b.BatchID, i)))}
	}
	if mutate != nil {
		mutate(b, recs)
	}
	ch := dispatch.Submit(b, recs, requireApproval, e.now)
	if err := e.batches.Create(context.Background(), b, recs, ch); err != nil {
		t.Fatal(err)
	}
	return b
}

// reply is what the host gets from an invocation.
type reply struct {
	status  int
	Outputs map[string]json.RawMessage
	Logs    []string
}

// outputs is binding's messages (one object or an array of them).
func (r reply) outputs(binding string) []json.RawMessage {
	raw, ok := r.Outputs[binding]
	if !ok {
		return nil
	}
	if raw[0] == '[' {
		var list []json.RawMessage
		_ = json.Unmarshal(raw, &list)
		return list
	}
	return []json.RawMessage{raw}
}

func (r reply) count() int {
	n := 0
	for b := range r.Outputs {
		n += len(r.outputs(b))
	}
	return n
}

// deliver runs msg through funcproto.QueueHandler with the host's payload shape (the message
// JSON-encoded twice).
func deliver(t *testing.T, fn func(context.Context, funcproto.QueueMessage) error, msg any) reply {
	t.Helper()
	once, _ := json.Marshal(string(must(json.Marshal(msg))))
	twice, _ := json.Marshal(string(once))
	payload := `{"Data":{"msg":` + string(twice) + `},"Metadata":{"DequeueCount":"1","Id":"\"m1\""}}`
	rec := httptest.NewRecorder()
	funcproto.QueueHandler(fn).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/x", bytes.NewReader([]byte(payload))))
	var r reply
	if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
		t.Fatalf("reply %q: %v", rec.Body.String(), err)
	}
	r.status = rec.Code
	if r.status != http.StatusOK {
		t.Fatalf("status %d: %v", r.status, r.Logs)
	}
	return r
}

// run carries the batch through the queues as the host would: the dispatch message, its pages,
// every record (concurrently), the finish and the notices. It returns the replies by function
// and the invitations queued.
func (e *env) run(t *testing.T, b *dispatch.Batch) (finishes []reply, invites int) {
	t.Helper()
	var records []json.RawMessage
	pages := []any{dispatch.BatchMessage{BatchID: b.BatchID, TenantID: b.TenantID}}
	var finishMsgs []json.RawMessage
	for len(pages) > 0 {
		r := deliver(t, e.job.HandleDispatch, pages[0])
		pages = pages[1:]
		records = append(records, r.outputs(queues.DispatchRecord.Binding())...)
		for _, n := range r.outputs(queues.Dispatch.Binding()) {
			pages = append(pages, n)
		}
		finishMsgs = append(finishMsgs, r.outputs(queues.DispatchFinish.Binding())...)
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
			finishMsgs = append(finishMsgs, r.outputs(queues.DispatchFinish.Binding())...)
			invites += len(r.outputs(queues.DeliveryInvite.Binding()))
		}()
	}
	wg.Wait()
	for _, m := range finishMsgs {
		r := deliver(t, e.job.HandleFinish, m)
		finishes = append(finishes, r)
		for _, n := range r.outputs(queues.DispatchNotify.Binding()) {
			deliver(t, e.job.HandleNotify, n)
		}
	}
	return finishes, invites
}
