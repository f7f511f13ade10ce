package signeddelivery

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/apptest"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/delivery/deliverystore"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/esign/sessionstore"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/licence"
	"github.com/esign-svc/esign/shared/licence/licencetest"
	"github.com/esign-svc/esign/shared/pii"
	"github.com/esign-svc/esign/shared/queues"
	"github.com/esign-svc/esign/shared/render"
)

func TestMain(m *testing.M) { azuritetest.Main(m) }

// env is one test's environment on Azurite, the job on it with a real delivery.Creator, and the
// blob store holding the signed PDFs.
type env struct {
	*apptest.Env
	sessions   *sessionstore.Store
	deliveries *deliverystore.Store
	job        *Job
}

func newEnv(t *testing.T) *env {
	t.Helper()
	x := apptest.New(t)
	x.Containers(delivery.ContainerSigned)
	e := &env{Env: x, sessions: x.Sessions(), deliveries: x.Deliveries()}
	e.job = &Job{Deps: Deps{Sessions: &esign.SessionJobs{Store: e.sessions}, Cipher: x.Cipher, Now: time.Now, Licence: licencetest.New(t),
		Creator: &delivery.Creator{Store: e.deliveries, Docs: x.Blobs, Tokens: x.Tokens, Hasher: x.Hasher,
			Cipher: x.Cipher, PortalURL: "https://portal.example.test", Now: time.Now}}}
	return e
}

// plan is a delivery of the signed PDF to two recipients, as render plans it.
func plan(corr string) delivery.CreateRequest {
	otp := false
	hours := 24
	return delivery.CreateRequest{CorrelationID: corr, DocumentID: "DOC-1", DocumentName: "offer.pdf",
		PDFBlobPath: "documents/rendered/" + corr + ".pdf", Mode: delivery.ModeSecureEmail, RequireOTP: &otp,
		ExpiresInHours: &hours, Recipients: []delivery.Recipient{{Email: "a@example.test", Name: "A"}, {Email: "b@example.test"}}}
}

// planJSON is the plan as esign.Creator keeps it (before encryption).
func planJSON(t *testing.T, req delivery.CreateRequest) []byte {
	t.Helper()
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// completed stores a one-signer session carrying thenDeliver (encrypted as esign.Creator does;
// raw when encrypted is false) and walks it to complete with its signed PDF in the signed
// container.
func (e *env) completed(t *testing.T, thenDeliver []byte, encrypted bool) *esign.Session {
	t.Helper()
	ctx := context.Background()
	gid := uuid.NewString()
	tenant := "tenant-" + gid[:6]
	now := time.Now().UTC()
	s := &esign.Session{GroupID: gid, TenantID: tenant, CorrelationID: "corr-" + gid[:8], DocumentID: "DOC-1",
		DocType: "offer", PDFBlobPath: "documents/rendered/corr-" + gid[:8] + ".pdf", PDFHash: "sha256:" + strings.Repeat("ab", 32),
		SigningMode: esign.ModeParallel, State: esign.SessionPending, CreatedAt: now, ExpiresAt: now.Add(time.Hour),
		ConsentVersion: esign.ConsentVersion}
	if thenDeliver != nil {
		s.ThenDeliverEnc = string(thenDeliver)
		if encrypted {
			enc, err := e.Cipher.EncryptString(string(thenDeliver), pii.AAD(gid, "thenDeliver"))
			if err != nil {
				t.Fatal(err)
			}
			s.ThenDeliverEnc = enc
		}
	}
	slots := []esign.Slot{{Index: 0, SessionID: uuid.NewString(), Role: "employee", EmailHash: strings.Repeat("01", 32),
		Condition: esign.Required, OTPChannel: esign.OTPNone}}
	ch := esign.Start(s, slots, now)
	ch.By(esign.Actor{Kind: "initiator", ID: "oid-1"})
	if err := e.sessions.Create(ctx, s, slots, ch, now); err != nil {
		t.Fatal(err)
	}
	signed := tenant + "/" + gid + ".pdf"
	if _, err := e.Blobs.Put(ctx, delivery.ContainerSigned, signed, bytes.NewReader([]byte("%PDF-1.7 signed")), "application/pdf", nil); err != nil {
		t.Fatal(err)
	}
	at := now.Add(time.Second)
	for _, step := range []func(*esign.Session, []esign.Slot) (esign.Change, error){
		func(s *esign.Session, sl []esign.Slot) (esign.Change, error) {
			return esign.Activate(s, sl, 0, at, nil)
		},
		func(s *esign.Session, sl []esign.Slot) (esign.Change, error) {
			return esign.MarkViewed(s, sl, 0, at, nil)
		},
		func(s *esign.Session, sl []esign.Slot) (esign.Change, error) {
			return esign.Consent(s, sl, 0, at, []string{"document_reviewed", "electronic_signature", "legally_binding"})
		},
		func(s *esign.Session, sl []esign.Slot) (esign.Change, error) {
			return esign.Sign(s, sl, 0, at, esign.SignInput{SignerName: "Signer", IP: "203.0.113.7", UserAgent: "test"})
		},
		func(s *esign.Session, sl []esign.Slot) (esign.Change, error) {
			return esign.Complete(s, sl, at, delivery.ContainerSigned+"/"+signed, "certificates/c.pdf", "evidence/e.jsonl")
		},
	} {
		s, sl, err := e.sessions.Load(ctx, gid)
		if err != nil {
			t.Fatal(err)
		}
		c, err := step(s, sl)
		if err != nil {
			t.Fatal(err)
		}
		c.By(esign.Actor{Kind: "portal", ID: "p"})
		if err := e.sessions.Apply(ctx, s, sl, c); err != nil {
			t.Fatal(err)
		}
	}
	s, _, err := e.sessions.Load(ctx, gid)
	if err != nil || s.State != esign.SessionComplete || (thenDeliver != nil) != (s.ThenDeliverEnc != "") {
		t.Fatalf("fixture session %+v (%v)", s, err)
	}
	return s
}

// invites are the reply's invitation messages (one object or an array of them).
func invites(t *testing.T, r apptest.Reply) []delivery.InviteMessage {
	t.Helper()
	var list []delivery.InviteMessage
	for _, raw := range r.Messages(queues.DeliveryInvite.Binding()) {
		var one delivery.InviteMessage
		if err := json.Unmarshal(raw, &one); err != nil {
			t.Fatal(err)
		}
		list = append(list, one)
	}
	return list
}

// events are the session's audit events of kind.
func (e *env) events(t *testing.T, gid, kind string) []sessionstore.AuditEvent {
	t.Helper()
	evs, err := e.sessions.Events(context.Background(), gid)
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

func msgOf(s *esign.Session) Message { return Message{GroupID: s.GroupID, TenantID: s.TenantID} }

// TestHandleDeliversTheSignedPDF: the plan's deliveries are made on the session's signed PDF,
// one invitation per recipient is queued, session.delivery_started is recorded and the plan
// dropped; the message redelivered makes and queues nothing.
func TestHandleDeliversTheSignedPDF(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	corr := "corr-" + uuid.NewString()
	p := planJSON(t, plan(corr))
	s := e.completed(t, p, true)
	r := apptest.InvokeJSON(t, e.job.Handle, msgOf(s))
	if r.Status != http.StatusOK {
		t.Fatalf("handle: %d %v", r.Status, r.Logs)
	}
	invites := invites(t, r)
	made, err := e.deliveries.ListByCorrelation(ctx, s.TenantID, corr)
	if err != nil {
		t.Fatal(err)
	}
	if len(invites) != 2 || len(made) != 2 {
		t.Fatalf("%d invitations, %d delivery sessions, want 2 and 2", len(invites), len(made))
	}
	ids := map[string]bool{}
	for _, d := range made {
		if d.PDFBlobPath != s.SignedPath || d.TenantID != s.TenantID {
			t.Fatalf("delivery %s of %s (tenant %s), want the signed PDF %s", d.DeliveryID, d.PDFBlobPath, d.TenantID, s.SignedPath)
		}
		ids[d.DeliveryID] = true
	}
	for _, m := range invites {
		if !ids[m.DeliveryID] || m.TenantID != s.TenantID {
			t.Fatalf("invitation %+v names no delivery made", m)
		}
	}
	started := e.events(t, s.GroupID, esign.EvDeliveryStarted)
	if len(started) != 1 || started[0].Data["signedPath"] != s.SignedPath {
		t.Fatalf("session.delivery_started %+v", started)
	}
	after, _, err := e.sessions.Load(ctx, s.GroupID)
	if err != nil || after.ThenDeliverEnc != "" {
		t.Fatalf("the plan is kept: %q (%v)", after.ThenDeliverEnc, err)
	}
	for _, line := range r.Logs {
		if strings.Contains(line, "@example.test") {
			t.Fatalf("a log line names an address: %s", line)
		}
	}
	again := apptest.InvokeJSON(t, e.job.Handle, msgOf(s))
	if again.Status != http.StatusOK || len(again.Outputs) != 0 {
		t.Fatalf("redelivered: %d outputs %v", again.Status, again.Outputs)
	}
	if made, err := e.deliveries.ListByCorrelation(ctx, s.TenantID, corr); err != nil || len(made) != 2 {
		t.Fatalf("after the redelivery %d sessions (%v)", len(made), err)
	}
	if n := len(e.events(t, s.GroupID, esign.EvDeliveryStarted)); n != 1 {
		t.Fatalf("%d session.delivery_started", n)
	}
}

// TestHandleUnreadablePlan: a plan that does not decrypt (or decode) is recorded as
// session.delivery_failed delivery_plan_unreadable and the message acknowledged.
func TestHandleUnreadablePlan(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, c := range []struct {
		name      string
		plan      []byte
		encrypted bool
	}{
		{"not encrypted", []byte("not a ciphertext"), false},
		{"not a request", []byte("[1,2,3]"), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := e.completed(t, c.plan, c.encrypted)
			r := apptest.InvokeJSON(t, e.job.Handle, msgOf(s))
			if r.Status != http.StatusOK || len(r.Outputs) != 0 {
				t.Fatalf("handle: %d outputs %v", r.Status, r.Outputs)
			}
			failed := e.events(t, s.GroupID, esign.EvDeliveryFailed)
			if len(failed) != 1 || failed[0].Data["code"] != render.CodePlanUnreadable {
				t.Fatalf("session.delivery_failed %+v", failed)
			}
			if after, _, err := e.sessions.Load(context.Background(), s.GroupID); err != nil || after.ThenDeliverEnc != "" {
				t.Fatalf("the plan is kept (%v)", err)
			}
		})
	}
}

// TestHandleRefusedPlan: a plan delivery's validation refuses is recorded as
// session.delivery_failed with delivery's code, and nothing is made.
func TestHandleRefusedPlan(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	corr := "corr-" + uuid.NewString()
	bad := plan(corr)
	bad.Recipients = nil
	p := planJSON(t, bad)
	s := e.completed(t, p, true)
	if r := apptest.InvokeJSON(t, e.job.Handle, msgOf(s)); r.Status != http.StatusOK || len(r.Outputs) != 0 {
		t.Fatalf("handle: %d outputs %v", r.Status, r.Outputs)
	}
	failed := e.events(t, s.GroupID, esign.EvDeliveryFailed)
	if len(failed) != 1 || failed[0].Data["code"] != apperr.CodeInvalidRequest {
		t.Fatalf("session.delivery_failed %+v", failed)
	}
	if made, err := e.deliveries.ListByCorrelation(context.Background(), s.TenantID, corr); err != nil || len(made) != 0 {
		t.Fatalf("%d sessions made (%v)", len(made), err)
	}
}

// TestHandleTheLicenceNoLongerAllows: the render was accepted with delivery, the licence lost
// the feature before the session completed: session.delivery_failed licence_feature_missing,
// nothing made, the message acknowledged.
func TestHandleTheLicenceNoLongerAllows(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	job := *e.job
	job.Licence = licencetest.New(t, licence.FeatureEsign)
	corr := "corr-" + uuid.NewString()
	s := e.completed(t, planJSON(t, plan(corr)), true)
	if r := apptest.InvokeJSON(t, job.Handle, msgOf(s)); r.Status != http.StatusOK || len(r.Outputs) != 0 {
		t.Fatalf("handle: %d outputs %v", r.Status, r.Outputs)
	}
	failed := e.events(t, s.GroupID, esign.EvDeliveryFailed)
	if len(failed) != 1 || failed[0].Data["code"] != licence.CodeFeatureMissing {
		t.Fatalf("session.delivery_failed %+v", failed)
	}
	if made, err := e.deliveries.ListByCorrelation(context.Background(), s.TenantID, corr); err != nil || len(made) != 0 {
		t.Fatalf("%d sessions made (%v)", len(made), err)
	}
}

// TestHandlePoison: the host gave up: session.delivery_failed retries_exhausted, once; after
// the deliveries were recorded the poison message records nothing.
func TestHandlePoison(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := planJSON(t, plan("corr-"+uuid.NewString()))
	s := e.completed(t, p, true)
	for i := 0; i < 2; i++ {
		if r := apptest.InvokeJSON(t, e.job.HandlePoison, msgOf(s)); r.Status != http.StatusOK || len(r.Outputs) != 0 {
			t.Fatalf("poison %d: %d outputs %v", i, r.Status, r.Outputs)
		}
	}
	failed := e.events(t, s.GroupID, esign.EvDeliveryFailed)
	if len(failed) != 1 || failed[0].Data["code"] != "retries_exhausted" {
		t.Fatalf("session.delivery_failed %+v", failed)
	}
	delivered := e.completed(t, p, true)
	if r := apptest.InvokeJSON(t, e.job.Handle, msgOf(delivered)); r.Status != http.StatusOK || len(invites(t, r)) != 2 {
		t.Fatalf("handle: %d %v", r.Status, r.Outputs)
	}
	if r := apptest.InvokeJSON(t, e.job.HandlePoison, msgOf(delivered)); r.Status != http.StatusOK {
		t.Fatalf("poison after the delivery: %d", r.Status)
	}
	if n := len(e.events(t, delivered.GroupID, esign.EvDeliveryFailed)); n != 0 {
		t.Fatalf("%d session.delivery_failed after the delivery", n)
	}
}

// TestHandleRefusesAndAcknowledges: a message of another tenant or without ids is Permanent;
// a session without a plan, or none at all, is acknowledged without outputs.
func TestHandleRefusesAndAcknowledges(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := planJSON(t, plan("corr-"+uuid.NewString()))
	s := e.completed(t, p, true)
	for _, m := range []Message{{GroupID: s.GroupID, TenantID: "another-tenant"}, {GroupID: s.GroupID}, {TenantID: s.TenantID}} {
		body, _ := json.Marshal(m)
		err := e.job.Handle(context.Background(), funcproto.QueueMessage{Body: body})
		if !funcproto.IsPermanent(err) {
			t.Fatalf("message %+v: %v, want a permanent refusal", m, err)
		}
	}
	if _, _, err := e.sessions.Load(context.Background(), s.GroupID); err != nil {
		t.Fatal(err)
	}
	if n := len(e.events(t, s.GroupID, esign.EvDeliveryStarted)) + len(e.events(t, s.GroupID, esign.EvDeliveryFailed)); n != 0 {
		t.Fatalf("%d delivery events after refused messages", n)
	}
	plain := e.completed(t, nil, false)
	for _, m := range []Message{msgOf(plain), {GroupID: uuid.NewString(), TenantID: plain.TenantID}} {
		if r := apptest.InvokeJSON(t, e.job.Handle, m); r.Status != http.StatusOK || len(r.Outputs) != 0 {
			t.Fatalf("message %+v: %d outputs %v", m, r.Status, r.Outputs)
		}
	}
	if n := len(e.events(t, plain.GroupID, esign.EvDeliveryFailed)); n != 0 {
		t.Fatalf("%d session.delivery_failed on a session without a plan", n)
	}
}
