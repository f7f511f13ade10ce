package render

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/azure/blobstore"
	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/delivery/deliverystore"
	deliverystoretest "github.com/esign-svc/esign/shared/delivery/deliverystore/storetest"
	"github.com/esign-svc/esign/shared/document"
	"github.com/esign-svc/esign/shared/document/documentstore"
	docstoretest "github.com/esign-svc/esign/shared/document/documentstore/storetest"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/esign/sessionstore"
	sessionstoretest "github.com/esign-svc/esign/shared/esign/sessionstore/storetest"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/licence/licencetest"
	"github.com/esign-svc/esign/shared/pii"
	"github.com/esign-svc/esign/shared/template"
	"github.com/esign-svc/esign/shared/tokens"
)

func TestMain(m *testing.M) { azuritetest.Main(m) }

// fixture is one test's stores on Azurite (fresh tables; the shared documents and templates
// containers, under names of its own) and the use cases wired as dispatcher/app/routes.go wires
// them, with test keys.
type fixture struct {
	blobs      *blobstore.Store
	docs       *documentstore.Store
	sessions   *sessionstore.Store
	deliveries *deliverystore.Store
	esign      *esign.Creator
	delivery   *delivery.Creator
	r          *Renderer
	pkgPath    string // the sample package (examples/offer) as a folder under templates
	by         Caller
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	sfx := strings.ReplaceAll(uuid.NewString(), "-", "")[:10]
	f := &fixture{blobs: blobstore.New(azuritetest.Account(t)), docs: docstoretest.New(t), sessions: sessionstoretest.New(t),
		deliveries: deliverystoretest.New(t)}
	key := base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	ring, err := tokens.ParseKeyRing("k1:" + key)
	if err != nil {
		t.Fatal(err)
	}
	codec := tokens.NewCodec(ring)
	hasher, err := pii.NewHasher([]byte("fedcba9876543210fedcba9876543210"))
	if err != nil {
		t.Fatal(err)
	}
	cipher, err := pii.ParseCipher("e1:" + key)
	if err != nil {
		t.Fatal(err)
	}
	loader := &template.Loader{Blobs: f.blobs}
	f.esign = &esign.Creator{Store: f.sessions, Docs: f.blobs, Templates: loader, Tokens: codec,
		Hasher: hasher, Cipher: cipher, PortalURL: "https://portal.example.test", Now: time.Now}
	f.delivery = &delivery.Creator{Store: f.deliveries, Docs: f.blobs, Tokens: codec,
		Hasher: hasher, Cipher: cipher, PortalURL: "https://portal.example.test", Now: time.Now}
	f.r = &Renderer{Templates: loader, Blobs: f.blobs, Store: f.docs, Sessions: f.sessions,
		ESign: f.esign, Delivery: f.delivery, Now: time.Now}
	if err := f.blobs.EnsureContainer(ctx, template.Container); err != nil {
		t.Fatal(err)
	}
	dir := "shared/rtest/" + uuid.NewString() + "/"
	for name, b := range samplePackage(t) {
		if _, err := f.blobs.Put(ctx, template.Container, dir+name, bytes.NewReader(b), "application/octet-stream", nil); err != nil {
			t.Fatal(err)
		}
	}
	f.pkgPath = template.Container + "/" + dir
	f.by = Caller{TenantID: "t-" + sfx, CallerID: "oid-1", Actor: kernel.Actor{Kind: "initiator", ID: "oid-1"},
		Licence: licencetest.New(t)}
	return f
}

// samplePackage reads the sample template package's files (examples/offer).
func samplePackage(tb testing.TB) map[string][]byte {
	tb.Helper()
	files := map[string][]byte{}
	for _, name := range []string{template.FileYAML, template.FilePDF} {
		b, err := os.ReadFile(filepath.Join("..", "..", "examples", "offer", name))
		if err != nil {
			tb.Fatal(err)
		}
		files[name] = b
	}
	return files
}

// offerJSON is a valid record of the sample package (starting in a month) as JSON.
func offerJSON(tb testing.TB) json.RawMessage {
	tb.Helper()
	b, err := json.Marshal(map[string]any{
		"employeeName": "Zoë Ελένη", "employeeEmail": "employee@example.test", "position": "Engineer",
		"salary": 72000.5, "currency": "EUR", "startDate": time.Now().AddDate(0, 1, 0).Format("2006-01-02"),
		"remote": true, "notes": "Works remotely on Fridays.", "managerName": "Sam Lead",
	})
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// request is a render of the sample record under a new correlationId.
func (f *fixture) request(t *testing.T) Request {
	return Request{TemplatePath: f.pkgPath, DataSource: offerJSON(t),
		Options: Options{CorrelationID: "r-" + uuid.NewString(), GeneratedBy: "tests", SourceSystem: "render"}}
}

// signers are the sample package's two roles as templateSettings.esign.signers.
const signers = `[{"slotIndex":0,"role":"employee","email":"employee@example.test"},{"slotIndex":1,"role":"hr","email":"hr@example.test"}]`

// events are the kinds of the document's audit trail.
func (f *fixture) events(t *testing.T, cid string) []string {
	t.Helper()
	evs, err := f.docs.Events(context.Background(), f.by.TenantID, cid)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range evs {
		kinds = append(kinds, e.Kind)
	}
	return kinds
}

func count(kinds []string, kind string) int {
	n := 0
	for _, k := range kinds {
		if k == kind {
			n++
		}
	}
	return n
}

var errStorage = &apperr.Error{Kind: apperr.KindUnavailable, Code: "storage_unavailable", Detail: "injected"}

// failingDocs is the document store whose Create or Update fails the first time.
type failingDocs struct {
	*documentstore.Store
	failCreate, failUpdate bool
	creates, updates       atomic.Int64
}

func (d *failingDocs) Create(ctx context.Context, doc *document.Document, ch kernel.Change) error {
	if d.creates.Add(1) == 1 && d.failCreate {
		return errStorage
	}
	return d.Store.Create(ctx, doc, ch)
}

func (d *failingDocs) Update(ctx context.Context, id string, step document.Step) (*document.Document, kernel.Change, error) {
	if d.updates.Add(1) == 1 && d.failUpdate {
		return nil, kernel.Change{}, errStorage
	}
	return d.Store.Update(ctx, id, step)
}

// failFirst renders req on docs, which fail, and checks the render failed with them.
func (f *fixture) failFirst(t *testing.T, req Request, docs *failingDocs) {
	t.Helper()
	failing := *f.r
	failing.Store = docs
	if _, err := failing.Render(context.Background(), f.by, req); !errors.Is(err, errStorage) {
		t.Fatalf("first run: %v, want the injected failure", err)
	}
}

// wantInvalid checks err is a 400 of code whose first field is field.
func wantInvalid(t *testing.T, err error, code, field string) {
	t.Helper()
	e, ok := apperr.As(err)
	if !ok || e.Kind != apperr.KindInvalid || e.Code != code || len(e.Fields) == 0 || e.Fields[0].Field != field {
		t.Fatalf("err = %#v, want %s on %s", err, code, field)
	}
}

// wantCode checks err is an apperr of kind and code.
func wantCode(t *testing.T, err error, kind apperr.Kind, code string) {
	t.Helper()
	if e, ok := apperr.As(err); !ok || e.Kind != kind || e.Code != code {
		t.Fatalf("err = %v, want %v %s", err, kind, code)
	}
}
