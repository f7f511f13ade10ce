package notifyjob

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apptest"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/azure/tablestore"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/esign/sessionstore"
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/notify/outbox"
	"github.com/esign-svc/esign/shared/pii"
)

func TestMain(m *testing.M) { azuritetest.Main(m) }

const portal = "https://portal.example.test"

// env is one test's environment (storage, keys, clock, outbox) and job.
type env struct {
	*apptest.Env
	st  *sessionstore.Store
	raw *tablestore.Store // the sessions table, raw (to corrupt rows)
	box *outbox.Outbox
	job *Job
}

// newEnv sets everything up; sender replaces the outbox as the e-mail provider when not nil.
func newEnv(t *testing.T, sender notify.Sender) *env {
	t.Helper()
	x := apptest.New(t)
	e := &env{Env: x, st: x.Sessions(), raw: x.SessionTable(), box: x.Outbox()}
	if sender == nil {
		sender = e.box
	}
	var err error
	e.job, err = New(Deps{Sessions: &esign.SessionJobs{Store: e.st}, Tokens: x.Tokens, Cipher: x.Cipher, Email: sender, PortalURL: portal, Now: x.Now})
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
	g := apptest.Hex(16)
	s := &esign.Session{GroupID: g, TenantID: "t1", CorrelationID: "C-" + g, DocumentID: "Contract 7", DocType: "contract",
		PDFBlobPath: "documents/a.pdf", PDFHash: "sha256:00", SigningMode: esign.ModeParallel, State: esign.SessionPending,
		CreatedAt: e.Now(), ExpiresAt: e.Now().Add(time.Hour), RequestedBy: "Ann Requester", OrganizationName: "Acme",
		SendPerSignerNotices: true}
	if requester {
		enc, err := e.Cipher.EncryptString(requesterEmail, pii.AAD(g, "requestedBy"))
		if err != nil {
			t.Fatal(err)
		}
		s.RequestedByEmailEnc = enc
	}
	slots := make([]esign.Slot, n)
	for i := range slots {
		enc, err := e.Cipher.EncryptString(signerEmail(i), pii.AAD(g, "slot", strconv.Itoa(i)))
		if err != nil {
			t.Fatal(err)
		}
		slots[i] = esign.Slot{Index: i, SessionID: apptest.Hex(16), Role: "role" + strconv.Itoa(i), EmailHash: "h" + strconv.Itoa(i),
			EmailEnc: enc, NamePrefill: "Signer " + strconv.Itoa(i), Condition: esign.Required, OTPChannel: esign.OTPNone,
			LinkJTI: apptest.Hex(16)}
	}
	ch := esign.Start(s, slots, e.Now())
	ch.By(esign.Actor{Kind: "initiator", ID: "oid"})
	if mutate != nil {
		mutate(s, slots)
	}
	if err := e.st.Create(context.Background(), s, slots, ch, e.Now()); err != nil {
		t.Fatal(err)
	}
	return s, slots
}

// checkLogsClean fails when a log line carries an address or a token.
func checkLogsClean(t *testing.T, r apptest.Reply, secrets ...string) {
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
