package portalapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/apptest"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/effects"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/esign/sessionstore"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/tokens"
)

func TestMain(m *testing.M) { azuritetest.Main(m) }

const testOrigin = "https://portal.example.test"

// pdfFixture is a tiny PDF; the proxy must stream it byte for byte.
var pdfFixture = []byte("%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n")

type env struct {
	*apptest.Env
	api       *API
	store     *sessionstore.Store
	clock     *apptest.Clock
	handler   http.Handler // router: forwarded routes and the invoked PortalDecline
	container string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	x := apptest.New(t)
	container := x.Container("pdocs")
	x.Put(container+"/doc.pdf", pdfFixture)
	st := x.Sessions()
	api := &API{Reads: &esign.SessionReads{Store: st, Now: x.Now}, Sessions: &esign.Sessions{Store: st, Effects: effects.SessionOutputs{}, Now: x.Now},
		Blobs: x.Blobs, Tokens: x.Tokens, Lapsed: LapsedCodec(x.Ring, tokens.WithClock(x.Now)), PortalOrigin: testOrigin}
	mux := http.NewServeMux()
	api.Routes(mux)
	router := funcproto.NewRouter(mux)
	router.Handle("PortalDecline", funcproto.HTTPInvocation(mux))
	return &env{Env: x, api: api, store: st, clock: x.Clock, handler: router, container: container}
}

type sessionOpts struct {
	mode      esign.SigningMode
	slots     int
	optional  map[int]bool
	otp       map[int]bool
	requester bool
	ttl       time.Duration
	manifest  []esign.ManifestField
}

type fixture struct {
	s     *esign.Session
	slots []esign.Slot
	links []string // slot tokens of the portalUrls
}

func (e *env) newSession(t *testing.T, o sessionOpts) *fixture {
	t.Helper()
	if o.slots == 0 {
		o.slots = 1
	}
	if o.mode == "" {
		o.mode = esign.ModeParallel
	}
	if o.ttl == 0 {
		o.ttl = 2 * time.Hour
	}
	now := e.clock.Now()
	s := &esign.Session{GroupID: uuid.NewString(), TenantID: "tenant-1", CorrelationID: "C-" + uuid.NewString(),
		DocumentID: "Lease agreement 2026/11.pdf", DocType: "lease", PDFBlobPath: e.container + "/doc.pdf",
		PDFHash: "sha256:" + strings.Repeat("0", 64), SigningMode: o.mode, State: esign.SessionPending, CreatedAt: now,
		ExpiresAt: now.Add(o.ttl), ConsentVersion: esign.ConsentVersion, Manifest: o.manifest, ManifestSource: esign.ManifestNone}
	if o.requester {
		s.RequestedByEmailEnc = "opaque-ciphertext" // effects only check that one is set
	}
	slots := make([]esign.Slot, o.slots)
	for i := range slots {
		slots[i] = esign.Slot{Index: i, SessionID: uuid.NewString(), Role: "signer", EmailHash: fmt.Sprintf("hash%d", i),
			NamePrefill: "Signer " + fmt.Sprint(i), Condition: esign.Required, OTPChannel: esign.OTPNone, LinkJTI: uuid.NewString()}
		if i > 0 {
			slots[i].Role = fmt.Sprintf("witness%d", i)
		}
		if o.optional[i] {
			slots[i].Condition = esign.Optional
		}
		if o.otp[i] {
			slots[i].OTPChannel = esign.OTPEmail
		}
	}
	ch := esign.Start(s, slots, now)
	ch.By(esign.Actor{Kind: "initiator", ID: "oid"})
	if err := e.store.Create(context.Background(), s, slots, ch, now); err != nil {
		t.Fatal(err)
	}
	f := &fixture{s: s, slots: slots}
	for i := range slots {
		f.links = append(f.links, e.link(t, s, &slots[i]))
	}
	return f
}

func (e *env) link(t *testing.T, s *esign.Session, sl *esign.Slot) string {
	t.Helper()
	tok, _, err := e.api.Tokens.IssueSlot(tokens.Slot{GroupID: s.GroupID, SlotIndex: sl.Index, ID: sl.LinkJTI, ExpiresAt: s.ExpiresAt})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// update runs a raw step on the stored session (test set-up of states the portal cannot reach).
func (e *env) update(t *testing.T, groupID string, step func(s *esign.Session, slots []esign.Slot) esign.Change) {
	t.Helper()
	_, _, err := e.store.Update(context.Background(), groupID, func(s *esign.Session, slots []esign.Slot) (esign.Change, esign.Extras, error) {
		return step(s, slots), esign.Extras{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func (e *env) load(t *testing.T, groupID string) (*esign.Session, []esign.Slot) {
	t.Helper()
	s, slots, err := e.store.Load(context.Background(), groupID)
	if err != nil {
		t.Fatal(err)
	}
	return s, slots
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("status %d, body not JSON: %v: %s", r.status, err, r.body)
	}
	return m
}

func (r reply) code(t *testing.T) string {
	t.Helper()
	c, _ := r.json(t)["code"].(string)
	return c
}

// want fails unless the reply has status (and, for errors, the problem code).
func (r reply) want(t *testing.T, status int, code string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	if code != "" {
		if got := r.code(t); got != code {
			t.Fatalf("code %q, want %q: %s", got, code, r.body)
		}
	}
}

// do sends a forwarded request. token != "" sets the bearer token.
func (e *env) do(t *testing.T, method, path, token, body string, hdr ...string) reply {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, rd)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	e.handler.ServeHTTP(rec, req)
	return reply{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
}

// invokeDecline runs POST /api/esign/portal/decline as the PortalDecline invocation and
// returns the HTTP reply and the queue outputs.
func (e *env) invokeDecline(t *testing.T, token, body string) (reply, map[string]json.RawMessage) {
	t.Helper()
	bodyJSON, _ := json.Marshal(body)
	payload := `{"Data":{"req":{"Url":"http://localhost:7071/api/esign/portal/decline","Method":"POST",` +
		`"Headers":{"Authorization":["Bearer ` + token + `"],"Content-Type":["application/json"]},"Params":{},"Body":` +
		string(bodyJSON) + `}},"Metadata":{"sys":{"MethodName":"PortalDecline"}}}`
	req := httptest.NewRequest(http.MethodPost, "/PortalDecline", strings.NewReader(payload))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	e.handler.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("invocation status %d: %s", rec.Code, rec.Body)
	}
	var out struct {
		Outputs map[string]json.RawMessage
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	var res funcproto.HTTPResponseData
	if err := json.Unmarshal(out.Outputs["res"], &res); err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	for k, v := range res.Headers {
		h.Set(k, v)
	}
	delete(out.Outputs, "res")
	return reply{status: res.StatusCode, header: h, body: []byte(res.Body)}, out.Outputs
}

// activate activates slot i's link and returns the access token.
func (e *env) activate(t *testing.T, f *fixture, i int) string {
	t.Helper()
	r := e.do(t, http.MethodPost, PathActivate, "", `{"token":"`+f.links[i]+`"}`)
	r.want(t, http.StatusOK, "")
	tok, _ := r.json(t)["accessToken"].(string)
	if tok == "" {
		t.Fatalf("no access token: %s", r.body)
	}
	return tok
}
