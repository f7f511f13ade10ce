package portalpurge

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/apptest"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/callbacksig"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/esign/sessionstore"
	"github.com/esign-svc/esign/shared/portalclient"
)

func TestMain(m *testing.M) { azuritetest.Main(m) }

const secret = "portal-purge-test-secret-0123456789abcdef"

// portalStandIn is an httptest signing portal: it verifies each purge's signature with the
// callback code, records the request, and answers status.
type portalStandIn struct {
	srv    *httptest.Server
	mu     sync.Mutex
	status int
	got    []purgeCall
}

type purgeCall struct {
	path, idem string
	sigErr     error
	req        portalclient.PurgeRequest
}

func newPortal(t *testing.T, status int) *portalStandIn {
	t.Helper()
	p := &portalStandIn{status: status}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		c := purgeCall{path: r.URL.Path, idem: r.Header.Get(portalclient.IdempotencyHeader),
			sigErr: callbacksig.Verify(r.Header.Get(callbacksig.Header), raw, time.Now(), []string{secret})}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c.req); err != nil {
			c.sigErr = err
		}
		p.mu.Lock()
		p.got = append(p.got, c)
		status := p.status
		p.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *portalStandIn) calls() []purgeCall {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]purgeCall(nil), p.got...)
}

func (p *portalStandIn) setStatus(s int) { p.mu.Lock(); p.status = s; p.mu.Unlock() }

// env is one test's tables and job.
type env struct {
	store *sessionstore.Store
	job   *Job
}

// newEnv makes fresh tables and a job; portal nil means no portal API configured.
func newEnv(t *testing.T, portal *portalStandIn) *env {
	t.Helper()
	st := apptest.New(t).Sessions()
	d := Deps{Sessions: &esign.SessionJobs{Store: st}}
	if portal != nil {
		c, err := portalclient.New(portal.srv.URL, secret)
		if err != nil {
			t.Fatal(err)
		}
		d.Portal = c
	}
	j, err := New(d)
	if err != nil {
		t.Fatal(err)
	}
	return &env{store: st, job: j}
}

// session stores a two-slot session; complete walks both signers through and completes it.
func (e *env) session(t *testing.T, complete bool) (*esign.Session, []esign.Slot) {
	t.Helper()
	ctx := context.Background()
	gid := uuid.NewString()
	now := time.Now().UTC()
	sess := &esign.Session{GroupID: gid, TenantID: "tenant-" + gid[:6], CorrelationID: "corr-" + gid[:8],
		DocumentID: "DOC-1", DocType: "agreement", PDFBlobPath: "documents/x.pdf", PDFHash: "sha256:" + strings.Repeat("ab", 32),
		SigningMode: esign.ModeParallel, State: esign.SessionPending, CreatedAt: now, ExpiresAt: now.Add(time.Hour),
		ConsentVersion: esign.ConsentVersion}
	slots := []esign.Slot{
		{Index: 0, SessionID: uuid.NewString(), Role: "buyer", EmailHash: strings.Repeat("01", 32), Condition: esign.Required, OTPChannel: esign.OTPNone},
		{Index: 1, SessionID: uuid.NewString(), Role: "seller", EmailHash: strings.Repeat("02", 32), Condition: esign.Required, OTPChannel: esign.OTPNone},
	}
	ch := esign.Start(sess, slots, now)
	ch.By(esign.Actor{Kind: "initiator", ID: "oid-1"})
	if err := e.store.Create(ctx, sess, slots, ch, now); err != nil {
		t.Fatal(err)
	}
	if !complete {
		return e.load(t, gid)
	}
	for i := range slots {
		at := now.Add(time.Duration(i+1) * time.Second)
		steps := []func(*esign.Session, []esign.Slot) (esign.Change, error){
			func(s *esign.Session, sl []esign.Slot) (esign.Change, error) {
				return esign.Activate(s, sl, i, at, nil)
			},
			func(s *esign.Session, sl []esign.Slot) (esign.Change, error) {
				return esign.MarkViewed(s, sl, i, at.Add(time.Millisecond), nil)
			},
			func(s *esign.Session, sl []esign.Slot) (esign.Change, error) {
				return esign.Consent(s, sl, i, at.Add(2*time.Millisecond), []string{"document_reviewed", "electronic_signature", "legally_binding"})
			},
			func(s *esign.Session, sl []esign.Slot) (esign.Change, error) {
				return esign.Sign(s, sl, i, at.Add(3*time.Millisecond), esign.SignInput{SignerName: "Signer", IP: "203.0.113.7", UserAgent: "test"})
			},
		}
		for _, step := range steps {
			e.apply(t, gid, step)
		}
	}
	e.apply(t, gid, func(s *esign.Session, sl []esign.Slot) (esign.Change, error) {
		return esign.Complete(s, sl, now.Add(time.Minute), "signed/a.pdf", "signed/c.pdf", "evidence/e.jsonl")
	})
	sess, slots = e.load(t, gid)
	if sess.State != esign.SessionComplete {
		t.Fatalf("fixture session is %s", sess.State)
	}
	return sess, slots
}

func (e *env) apply(t *testing.T, gid string, step func(*esign.Session, []esign.Slot) (esign.Change, error)) {
	t.Helper()
	sess, slots := e.load(t, gid)
	c, err := step(sess, slots)
	if err != nil {
		t.Fatal(err)
	}
	c.By(esign.Actor{Kind: "portal", ID: "p"})
	if err := e.store.Apply(context.Background(), sess, slots, c); err != nil {
		t.Fatal(err)
	}
}

func (e *env) load(t *testing.T, gid string) (*esign.Session, []esign.Slot) {
	t.Helper()
	sess, slots, err := e.store.Load(context.Background(), gid)
	if err != nil {
		t.Fatal(err)
	}
	return sess, slots
}

// events are the session's events of kind.
func (e *env) events(t *testing.T, gid, kind string) []sessionstore.AuditEvent {
	t.Helper()
	evs, err := e.store.Events(context.Background(), gid)
	if err != nil {
		t.Fatal(err)
	}
	var out []sessionstore.AuditEvent
	for _, ev := range evs {
		if ev.Kind == kind {
			out = append(out, ev)
		}
	}
	return out
}
