package seal

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"

	"github.com/esign-svc/esign/processor/internal/sealcfg"
	"github.com/esign-svc/esign/shared/apptest"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/azure/blobstore"
	"github.com/esign-svc/esign/shared/azure/tablestore"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/esign/sessionstore"
	"github.com/esign-svc/esign/shared/pdf/pdfdoc"
	"github.com/esign-svc/esign/shared/queues"
)

func TestMain(m *testing.M) { azuritetest.Main(m) }

// sealKey is the test seal key (apptest's, one per test binary) as the job takes it.
func sealKey(t testing.TB) sealcfg.Key {
	t.Helper()
	k, c := apptest.SealKey()
	return sealcfg.Key{Signer: k, Chain: []*x509.Certificate{c}}
}

// env is one test's environment: the session store in fresh tables, the shared documents
// container, and a job on them.
type env struct {
	*apptest.Env
	store *sessionstore.Store
	rows  *tablestore.Store // the sessions table, raw (to corrupt rows)
	blobs *blobstore.Store
	job   *Job
}

func newEnv(t testing.TB) *env {
	t.Helper()
	x := apptest.New(t)
	x.Containers("documents")
	e := &env{Env: x, store: x.Sessions(), rows: x.SessionTable(), blobs: x.Blobs}
	job, err := New(Deps{Sessions: &esign.SessionJobs{Store: e.store}, Blobs: e.blobs, Key: sealKey(t), EngineVersion: "test-1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	e.job = job
	return e
}

// sourcePDF is a plain pages-page A4 document.
func sourcePDF(t testing.TB, pages int) []byte {
	t.Helper()
	d := pdfdoc.New()
	helv := d.Add(types.Dict{"Type": types.Name("Font"), "Subtype": types.Name("Type1"), "BaseFont": types.Name("Helvetica"), "Encoding": types.Name("WinAnsiEncoding")})
	for i := 1; i <= pages; i++ {
		content := fmt.Sprintf("BT /F1 18 Tf 72 770 Td (Purchase agreement page %d of %d) Tj ET\n", i, pages)
		if _, err := d.AppendPage(595.28, 841.89, []byte(content), types.Dict{"Font": types.Dict{"F1": helv}}); err != nil {
			t.Fatal(err)
		}
	}
	b, err := d.Bytes(nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// drawing is a w x h PNG with a dark stroke.
func drawing(t testing.TB, w, h int) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for x := 0; x < w; x++ {
		y := h/2 + (x%40-20)*h/80
		for dy := -2; dy <= 2; dy++ {
			if yy := y + dy; yy >= 0 && yy < h {
				img.SetNRGBA(x, yy, color.NRGBA{R: 10, G: 20, B: 120, A: 255})
			}
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// signer is one slot of a fixture session.
type signer struct {
	role, name string
	fields     []esign.CompletedField
}

// fixture is a session driven to sealing through the state machine.
type fixture struct {
	sess  *esign.Session
	slots []esign.Slot
	pdf   []byte
}

// buyerManifest gives role buyer a signature, a date, a text and a checkbox field; other roles
// have none (their signatures go on the appended page).
var buyerManifest = []esign.ManifestField{
	{Name: "esign.buyer.signature", Role: "buyer", Kind: esign.FieldSignature, Page: 2, Rect: [4]float64{72, 150, 272, 210}},
	{Name: "esign.buyer.date", Role: "buyer", Kind: esign.FieldDate, Page: 2, Rect: [4]float64{300, 150, 420, 170}},
	{Name: "esign.buyer.text.title", Role: "buyer", Kind: esign.FieldText, Page: 1, Rect: [4]float64{72, 600, 300, 620}},
	{Name: "esign.buyer.checkbox.agree", Role: "buyer", Kind: esign.FieldCheckbox, Page: 1, Rect: [4]float64{72, 560, 88, 576}},
}

// sealingSession stores a session whose signers have all signed (so it is sealing), with its
// source PDF uploaded to documents/. hashOverride, when set, replaces the recorded pdfHash.
func (e *env) sealingSession(t testing.TB, signers []signer, hashOverride string) fixture {
	t.Helper()
	ctx := context.Background()
	gid, src, now := e.createSession(t, signers, hashOverride, esign.ModeParallel, nil)
	ip, ua := "203.0.113.7", "Mozilla/5.0 (test)"
	for i, s := range signers {
		at := now.Add(time.Duration(i+1) * time.Second)
		steps := []func(sess *esign.Session, slots []esign.Slot) (esign.Change, error){
			func(sess *esign.Session, slots []esign.Slot) (esign.Change, error) {
				return esign.Activate(sess, slots, i, at, nil)
			},
			func(sess *esign.Session, slots []esign.Slot) (esign.Change, error) {
				return esign.MarkViewed(sess, slots, i, at.Add(100*time.Millisecond), nil)
			},
			func(sess *esign.Session, slots []esign.Slot) (esign.Change, error) {
				return esign.Consent(sess, slots, i, at.Add(200*time.Millisecond), []string{"document_reviewed", "electronic_signature", "legally_binding"})
			},
		}
		for _, step := range steps {
			e.applyStep(t, gid, step)
		}
		e.signSlot(t, gid, i, s, at.Add(300*time.Millisecond), ip, ua)
	}
	sess, slots, err := e.store.Load(ctx, gid)
	if err != nil {
		t.Fatal(err)
	}
	if sess.State != esign.SessionSealing {
		t.Fatalf("fixture session is %s", sess.State)
	}
	return fixture{sess: sess, slots: slots, pdf: src}
}

// createSession stores a pending session of the given mode with one slot per signer (required,
// without OTP; adjust, when set, changes each slot before the start), with its source PDF
// uploaded to documents/. hashOverride, when set, replaces the recorded pdfHash.
func (e *env) createSession(t testing.TB, signers []signer, hashOverride string, mode esign.SigningMode, adjust func(*esign.Slot)) (string, []byte, time.Time) {
	t.Helper()
	ctx := context.Background()
	src := sourcePDF(t, 2)
	sum := sha256.Sum256(src)
	gid := uuid.NewString()
	name := "t-" + gid[:8] + "/" + gid + ".pdf"
	if _, err := e.blobs.Put(ctx, "documents", name, bytes.NewReader(src), "application/pdf", nil); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	sess := &esign.Session{GroupID: gid, TenantID: "tenant-" + gid[:6], CorrelationID: "corr-" + gid[:8],
		DocumentID: "DOC-4711", DocType: "purchase_agreement", PDFBlobPath: "documents/" + name,
		PDFHash: "sha256:" + hex.EncodeToString(sum[:]), SigningMode: mode,
		State: esign.SessionPending, CreatedAt: now, ExpiresAt: now.Add(time.Hour),
		ConsentVersion: esign.ConsentVersion, Manifest: buyerManifest, ManifestSource: esign.ManifestFromRendered}
	if hashOverride != "" {
		sess.PDFHash = hashOverride
	}
	slots := make([]esign.Slot, len(signers))
	for i, s := range signers {
		slots[i] = esign.Slot{Index: i, SessionID: uuid.NewString(), Role: s.role, EmailHash: fmt.Sprintf("%064x", i+1),
			NamePrefill: s.name, Condition: esign.Required, OTPChannel: esign.OTPNone}
		if adjust != nil {
			adjust(&slots[i])
		}
	}
	ch := esign.Start(sess, slots, now)
	ch.By(esign.Actor{Kind: "initiator", ID: "oid-1"})
	if err := e.store.Create(ctx, sess, slots, ch, now); err != nil {
		t.Fatal(err)
	}
	return gid, src, now
}

// signSlot stores slot i's drawing, fields and consents and signs it at at, as the signer
// from ip with ua (the callback's transaction).
func (e *env) signSlot(t testing.TB, gid string, i int, s signer, at time.Time, ip, ua string) {
	t.Helper()
	ctx := context.Background()
	fields, _ := json.Marshal(s.fields)
	sess, slots, err := e.store.Load(ctx, gid)
	if err != nil {
		t.Fatal(err)
	}
	consents, _ := json.Marshal(slots[i].Consents)
	op, err := sessionstore.SignatureOp(gid, i, sessionstore.Signature{PNG: drawing(t, 300, 100), Fields: string(fields), Consents: string(consents)})
	if err != nil {
		t.Fatal(err)
	}
	c, err := esign.Sign(sess, slots, i, at, esign.SignInput{SignerName: s.name, IP: ip, UserAgent: ua})
	if err != nil {
		t.Fatal(err)
	}
	c.By(esign.Actor{Kind: "signer", ID: slots[i].SessionID, IP: ip, UserAgent: ua})
	if err := e.store.Apply(ctx, sess, slots, c, op); err != nil {
		t.Fatal(err)
	}
}

func (e *env) applyStep(t testing.TB, gid string, step func(*esign.Session, []esign.Slot) (esign.Change, error)) {
	t.Helper()
	e.applyAs(t, gid, esign.Actor{Kind: "portal", ID: "p", IP: "203.0.113.7", UserAgent: "Mozilla/5.0 (test)"}, step)
}

// applyAs loads the session, runs step and stores its change, stamped with actor.
func (e *env) applyAs(t testing.TB, gid string, actor esign.Actor, step func(*esign.Session, []esign.Slot) (esign.Change, error)) {
	t.Helper()
	ctx := context.Background()
	sess, slots, err := e.store.Load(ctx, gid)
	if err != nil {
		t.Fatal(err)
	}
	c, err := step(sess, slots)
	if err != nil {
		t.Fatal(err)
	}
	c.By(actor)
	if err := e.store.Apply(ctx, sess, slots, c); err != nil {
		t.Fatal(err)
	}
}

// notices are the reply's notification messages.
func notices(t testing.TB, r apptest.Reply) []esign.NotifyMessage {
	t.Helper()
	var out []esign.NotifyMessage
	for _, raw := range r.Messages(queues.Notifications.Binding()) {
		var m esign.NotifyMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

func (e *env) readBlob(t testing.TB, container, name string) ([]byte, bool) {
	t.Helper()
	rc, _, err := e.blobs.Open(context.Background(), container, name)
	if err != nil {
		return nil, false
	}
	defer rc.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(rc); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), true
}

// --- PDF tools (as shared/pdf's tests run them) ---

var (
	toolsOnce sync.Once
	toolsErr  string
)

func requireTools(t testing.TB) {
	t.Helper()
	toolsOnce.Do(func() {
		if missingTools() == "" {
			return
		}
		root, err := azuritetest.RepoRoot()
		if err != nil {
			toolsErr = err.Error()
			return
		}
		out, err := exec.Command("bash", filepath.Join(root, "scripts", "install-pdf-tools.sh")).CombinedOutput()
		if m := missingTools(); m != "" {
			toolsErr = fmt.Sprintf("PDF tools %s missing and could not be installed (%s, %v)", m, strings.TrimSpace(string(out)), err)
		}
	})
	if toolsErr != "" {
		if os.Getenv("CI") != "" {
			t.Fatal(toolsErr)
		}
		t.Skip(toolsErr)
	}
}

func missingTools() string {
	var m []string
	for _, tool := range []string{"pdfsig", "pdftotext", "qpdf"} {
		if _, err := exec.LookPath(tool); err != nil {
			m = append(m, tool)
		}
	}
	return strings.Join(m, ", ")
}

func writeTemp(t testing.TB, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func assertPdfsigValid(t testing.TB, pdf []byte) {
	t.Helper()
	out, _ := exec.Command("pdfsig", writeTemp(t, "in.pdf", pdf)).CombinedOutput()
	if !strings.Contains(string(out), "Signature is Valid.") || !strings.Contains(string(out), "Total document signed") {
		t.Fatalf("pdfsig does not report a valid whole-document signature:\n%s", out)
	}
}

func assertQpdfCheck(t testing.TB, pdf []byte) {
	t.Helper()
	out, err := exec.Command("qpdf", "--check", writeTemp(t, "in.pdf", pdf)).CombinedOutput()
	if err != nil {
		t.Fatalf("qpdf --check: %v\n%s", err, out)
	}
}

func pdftotext(t testing.TB, pdf []byte) string {
	t.Helper()
	out, err := exec.Command("pdftotext", "-enc", "UTF-8", writeTemp(t, "in.pdf", pdf), "-").CombinedOutput()
	if err != nil {
		t.Fatalf("pdftotext: %v\n%s", err, out)
	}
	return string(out)
}
