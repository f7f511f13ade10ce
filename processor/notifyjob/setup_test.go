package notifyjob

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/azure/tablestore"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/esign/sessionstore"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/notify/outbox"
	"github.com/esign-svc/esign/shared/pii"
	"github.com/esign-svc/esign/shared/tokens"
)

func TestMain(m *testing.M) { azuritetest.Main(m) }

const portal = "https://portal.example.test"

// env is one test's storage, keys, outbox and job.
type env struct {
	st     *sessionstore.Store
	raw    *tablestore.Store // the sessions table, raw (to corrupt rows)
	box    *outbox.Outbox
	codec  *tokens.Codec
	cipher *pii.Cipher
	job    *Job
	now    time.Time
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func randKey() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

// newEnv sets everything up; sender replaces the outbox as the e-mail provider when not nil.
func newEnv(t *testing.T, sender notify.Sender) *env {
	t.Helper()
	ctx := context.Background()
	acct, err := azconn.New(azconn.Config{ConnectionString: azuritetest.Shared(t).ConnectionString()})
	if err != nil {
		t.Fatal(err)
	}
	suffix := randHex(5)
	st, err := sessionstore.New(acct, "sess"+suffix, "idx"+suffix)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	box, err := outbox.New(acct, "outbox"+suffix)
	if err != nil {
		t.Fatal(err)
	}
	if err := box.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	ring, err := tokens.ParseKeyRing("k1:" + randKey())
	if err != nil {
		t.Fatal(err)
	}
	cipher, err := pii.ParseCipher("e1:" + randKey())
	if err != nil {
		t.Fatal(err)
	}
	raw, err := tablestore.New(acct, "sess"+suffix)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{st: st, raw: raw, box: box, codec: tokens.NewCodec(ring), cipher: cipher, now: time.Now().UTC()}
	if sender == nil {
		sender = box
	}
	e.job, err = New(Deps{Sessions: &esign.SessionJobs{Store: st}, Tokens: e.codec, Cipher: cipher, Email: sender, PortalURL: portal,
		Now: func() time.Time { return e.now }})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func signerEmail(i int) string { return "signer" + strconv.Itoa(i) + "@example.com" }

const requesterEmail = "requester@example.org"

// session creates a parallel session of n slots (each invited, with a link id). mutate may change
// the session and slots after Start and before they are stored.
func (e *env) session(t *testing.T, n int, requester bool, mutate func(*esign.Session, []esign.Slot)) (*esign.Session, []esign.Slot) {
	t.Helper()
	g := randHex(16)
	s := &esign.Session{GroupID: g, TenantID: "t1", CorrelationID: "C-" + g, DocumentID: "Contract 7", DocType: "contract",
		PDFBlobPath: "documents/a.pdf", PDFHash: "sha256:00", SigningMode: esign.ModeParallel, State: esign.SessionPending,
		CreatedAt: e.now, ExpiresAt: e.now.Add(time.Hour), RequestedBy: "Ann Requester", OrganizationName: "Acme",
		SendPerSignerNotices: true}
	if requester {
		enc, err := e.cipher.EncryptString(requesterEmail, pii.AAD(g, "requestedBy"))
		if err != nil {
			t.Fatal(err)
		}
		s.RequestedByEmailEnc = enc
	}
	slots := make([]esign.Slot, n)
	for i := range slots {
		enc, err := e.cipher.EncryptString(signerEmail(i), pii.AAD(g, "slot", strconv.Itoa(i)))
		if err != nil {
			t.Fatal(err)
		}
		slots[i] = esign.Slot{Index: i, SessionID: randHex(16), Role: "role" + strconv.Itoa(i), EmailHash: "h" + strconv.Itoa(i),
			EmailEnc: enc, NamePrefill: "Signer " + strconv.Itoa(i), Condition: esign.Required, OTPChannel: esign.OTPNone,
			LinkJTI: randHex(16)}
	}
	ch := esign.Start(s, slots, e.now)
	ch.By(esign.Actor{Kind: "initiator", ID: "oid"})
	if mutate != nil {
		mutate(s, slots)
	}
	if err := e.st.Create(context.Background(), s, slots, ch, e.now); err != nil {
		t.Fatal(err)
	}
	return s, slots
}

// reply is the invocation reply the host gets.
type reply struct {
	status int
	Logs   []string
}

// deliver runs msg through funcproto.QueueHandler with the host's observed payload shape (the
// message JSON-encoded twice, DequeueCount a string).
func deliver(t *testing.T, fn func(context.Context, funcproto.QueueMessage) error, msg esign.NotifyMessage) reply {
	t.Helper()
	b, err := json.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	once, _ := json.Marshal(string(b))
	twice, _ := json.Marshal(string(once))
	payload := `{"Data":{"msg":` + string(twice) + `},"Metadata":{"DequeueCount":"1","Id":"\"m1\""}}`
	req := httptest.NewRequest(http.MethodPost, "/"+FunctionName, bytes.NewReader([]byte(payload)))
	rec := httptest.NewRecorder()
	funcproto.QueueHandler(fn).ServeHTTP(rec, req)
	var r reply
	if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
		t.Fatalf("reply %q: %v", rec.Body.String(), err)
	}
	r.status = rec.Code
	return r
}

// checkLogsClean fails when a log line carries an address or a token.
func checkLogsClean(t *testing.T, r reply, secrets ...string) {
	t.Helper()
	all := strings.Join(r.Logs, "\n")
	for _, s := range append(secrets, "@example", "token=", "eyJ") {
		if s != "" && strings.Contains(all, s) {
			t.Fatalf("logs carry %q:\n%s", s, all)
		}
	}
}

// events returns the session's audit events of kind.
func (e *env) events(t *testing.T, groupID, kind string) []sessionstore.AuditEvent {
	t.Helper()
	evs, err := e.st.Events(context.Background(), groupID)
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

func (e *env) rows(t *testing.T) []outbox.Row {
	t.Helper()
	rows, err := e.box.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return rows
}
