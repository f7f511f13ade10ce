package workflowseal

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/processor/internal/sealcfg"
	"github.com/esign-svc/esign/shared/apptest"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/azure/blobstore"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/evidence"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/queues"
	"github.com/esign-svc/esign/shared/template"
	"github.com/esign-svc/esign/shared/workflow"
	"github.com/esign-svc/esign/shared/workflow/workflowstore"
)

func TestMain(m *testing.M) { azuritetest.Main(m) }

// schemaYAML: the sample offer package's fields over two steps, a rule the test data fail,
// governance, and two stages.
const schemaYAML = `title: Offer approval
governance: true
steps:
  - id: who
    title: Employee
    fields:
      - { key: employeeName, type: string, required: true, label: Employee name }
      - { key: position, type: string, required: true }
  - id: pay
    title: Pay
    fields:
      - { key: salary, type: number, required: true, label: Annual salary }
      - { key: notes, type: text }
rules:
  - { id: cap, expr: "data.salary <= 100000", message: "Salary above the band", fieldKey: salary }
approval:
  stages:
    - { name: Finance, approvers: [f@example.com] }
    - { name: Legal, approvers: [l@example.com] }
`

// sealKey is the test seal key (apptest's, one per test binary) as the job takes it.
func sealKey() sealcfg.Key {
	k, c := apptest.SealKey()
	return sealcfg.Key{Signer: k, Chain: []*x509.Certificate{c}}
}

type env struct {
	store  *workflowstore.Store
	blobs  *blobstore.Store
	job    *Job
	schema *workflow.Schema
	pkg    string // the template package's path
	tenant string
	// schemaPath, when set, is the workflows' templateSettings.workflow.schemaPath
	schemaPath string
	// esign, when set, is the workflows' kept templateSettings.esign
	esign json.RawMessage
}

func newEnv(t *testing.T) *env {
	t.Helper()
	x := apptest.New(t)
	s, err := workflow.ParseSchema("schema", []byte(schemaYAML))
	if err != nil {
		t.Fatal(err)
	}
	job := &Job{Deps: Deps{Workflows: x.Workflows(), Templates: &template.Loader{Blobs: x.Blobs}, Blobs: x.Blobs, Key: sealKey()}}
	return &env{store: x.Workflows(), blobs: x.Blobs, job: job, schema: s,
		pkg: x.Package(map[string][]byte{template.FileSchema: []byte(schemaYAML)}), tenant: azuritetest.Name("t-")}
}

const justification = "Approved above the band: a scarce skill.\n  Kept verbatim — «как есть»."

// sealing creates a workflow with data that fail the rule and takes it through both stages
// (Finance: approve-with-exception with a justification; Legal the same) to sealing.
func (e *env) sealing(t *testing.T, templatePath string, callbackURL ...string) *workflow.Workflow {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC()
	w := &workflow.Workflow{ID: uuid.NewString(), Tenant: e.tenant, CorrelationID: "corr-" + uuid.NewString()[:8], TemplatePath: templatePath, CreatedBy: "oid"}
	w.Setup.CallbackURL = strings.Join(callbackURL, "")
	w.Setup.SchemaPath = e.schemaPath
	w.Setup.ESign = e.esign
	ch, err := workflow.Create(w, e.schema, map[string]any{"employeeName": "Zoë Ελένη", "position": "Engineer",
		"salary": json.Number("120000"), "notes": "Remote on Fridays."}, now)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.store.Create(ctx, w, ch, now); err != nil {
		t.Fatal(err)
	}
	steps := []func(*workflow.Workflow) (kernel.Change, error){
		func(w *workflow.Workflow) (kernel.Change, error) { return w.Advance(e.schema, now) },
		func(w *workflow.Workflow) (kernel.Change, error) { return w.Advance(e.schema, now) },
		func(w *workflow.Workflow) (kernel.Change, error) {
			return w.GovernanceDecision(workflow.Approver{Index: 0, Hash: "hash-finance", Name: "Fiona Finanz"}, workflow.DecisionApproveWithException, justification, now)
		},
		func(w *workflow.Workflow) (kernel.Change, error) {
			// an admin stands in for Legal's named approver (DESIGN 14): the reason goes on the record
			return w.GovernanceDecision(workflow.Approver{Index: -1, OID: "oid-admin", Hash: "hash-legal", Admin: true,
				Reason: "Legal approver on leave."}, workflow.DecisionApproveWithException, "Legal agrees.", now)
		},
		func(w *workflow.Workflow) (kernel.Change, error) {
			return w.Seal(e.schema, workflow.Sealer{Reason: "Resealed after the outage."}, now)
		},
	}
	for i, step := range steps {
		if w, _, err = e.store.Update(ctx, w.ID, step); err != nil {
			t.Fatalf("step %d (%s): %v", i, w.State, err)
		}
	}
	if w.State != workflow.StateSealing {
		t.Fatalf("state %s, want sealing", w.State)
	}
	return w
}

func message(t *testing.T, w *workflow.Workflow, tenant string) funcproto.QueueMessage {
	t.Helper()
	b, err := json.Marshal(Message{WorkflowID: w.ID, TenantID: tenant})
	if err != nil {
		t.Fatal(err)
	}
	return funcproto.QueueMessage{ID: "m", Body: b}
}

func (e *env) kinds(t *testing.T, id string) map[string]int {
	t.Helper()
	evs, err := e.store.Events(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, ev := range evs {
		n[ev.Kind]++
	}
	return n
}

func (e *env) blob(t *testing.T, container, name string) []byte {
	t.Helper()
	b, _, err := e.blobs.ReadAll(context.Background(), container, name, 64<<20)
	if err != nil {
		t.Fatalf("%s/%s: %v", container, name, err)
	}
	return b
}

func TestSealCompletesWithRecordPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	w := e.sealing(t, e.pkg)
	if err := e.job.Handle(ctx, message(t, w, e.tenant)); err != nil {
		t.Fatal(err)
	}
	got, err := e.store.Load(ctx, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != workflow.StateComplete || got.SealedPath != "signed/"+e.tenant+"/workflows/"+w.ID+".pdf" {
		t.Fatalf("state %s, sealed path %q", got.State, got.SealedPath)
	}
	pdf := e.blob(t, ContainerSigned, e.tenant+"/workflows/"+w.ID+".pdf")
	sum := sha256.Sum256(pdf)
	// the template's esign.* positions are stored beside the sealed PDF, which names them, so
	// that a signing session on it (the auto-trigger) places its fields as on a rendered PDF
	meta, err := e.blobs.Metadata(ctx, ContainerSigned, e.tenant+"/workflows/"+w.ID+".pdf")
	if err != nil || meta[esign.MetaManifest] != e.tenant+"/workflows/"+w.ID+".pdf.manifest.json" {
		t.Fatalf("sealed PDF metadata %v (%v)", meta, err)
	}
	var manifest struct{ Fields []esign.ManifestField }
	if err := json.Unmarshal(e.blob(t, ContainerSigned, meta[esign.MetaManifest]), &manifest); err != nil || len(manifest.Fields) == 0 {
		t.Fatalf("manifest %+v (%v)", manifest, err)
	}
	if got.SealedHash != "sha256:"+hex.EncodeToString(sum[:]) {
		t.Fatalf("sealed hash %s does not match the stored PDF", got.SealedHash)
	}
	bundle := e.blob(t, ContainerEvidence, e.tenant+"/workflows/"+w.ID+".jsonl")
	head, lines, err := evidence.Verify(bytes.NewReader(bundle))
	if err != nil || lines < 5 {
		t.Fatalf("evidence bundle: %d lines, %v", lines, err)
	}
	for _, want := range []string{`"workflow.created"`, `"workflow.governance_decision"`, `"hash-finance"`, `"workflow.sealing"`} {
		if !bytes.Contains(bundle, []byte(want)) {
			t.Errorf("evidence bundle lacks %s:\n%s", want, bundle)
		}
	}
	if k := e.kinds(t, w.ID); k[workflow.EvCompleted] != 1 {
		t.Fatalf("events %v", k)
	}

	// redelivered: acknowledged, nothing sealed or recorded again
	if err := e.job.Handle(ctx, message(t, w, e.tenant)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(e.blob(t, ContainerSigned, e.tenant+"/workflows/"+w.ID+".pdf"), pdf) || e.kinds(t, w.ID)[workflow.EvCompleted] != 1 {
		t.Fatal("a redelivered message sealed or completed again")
	}

	requireTools(t)
	out, err := exec.Command("pdfsig", writeTemp(t, pdf)).CombinedOutput()
	if !strings.Contains(string(out), "Signature is Valid.") || !strings.Contains(string(out), "Total document signed") {
		t.Fatalf("pdfsig: %v\n%s", err, out)
	}
	if out, err := exec.Command("qpdf", "--check", writeTemp(t, pdf)).CombinedOutput(); err != nil {
		t.Fatalf("qpdf --check: %v\n%s", err, out)
	}
	out, err = exec.Command("pdftotext", "-enc", "UTF-8", writeTemp(t, pdf), "-").CombinedOutput()
	if err != nil {
		t.Fatalf("pdftotext: %v\n%s", err, out)
	}
	text := string(out)
	flat := regexp.MustCompile(`\s+`).ReplaceAllString(text, " ")
	for _, want := range []string{"Workflow record", "Zoë Ελένη", "Engineer", "120000", "Remote on Fridays.",
		"Salary above the band", "approve-with-exception at stage 1 (Finance), round 1", "approve-with-exception at stage 2 (Legal), round 1",
		"hash-finance", "hash-legal", "Approver: Fiona Finanz", "Legal agrees.",
		"Admin standing in for the named approver, reason: Legal approver on leave.", "Manual seal, reason: Resealed after the outage.", "Approved above the band: a scarce skill.", "Kept verbatim — «как есть».", head[:16]} {
		if !strings.Contains(flat, want) {
			t.Errorf("sealed text lacks %q:\n%s", want, text)
		}
	}
}

// Two attempts at once (a redelivery while the first runs) seal one PDF: the workflow records
// the stored one's hash and completes once.
func TestConcurrentAttemptsSealOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	w := e.sealing(t, e.pkg)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = e.job.Handle(ctx, message(t, w, e.tenant)) }()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	got, err := e.store.Load(ctx, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(e.blob(t, ContainerSigned, e.tenant+"/workflows/"+w.ID+".pdf"))
	if got.State != workflow.StateComplete || got.SealedHash != "sha256:"+hex.EncodeToString(sum[:]) {
		t.Fatalf("state %s, hash %s, stored PDF sha256:%x", got.State, got.SealedHash, sum)
	}
	if n := e.kinds(t, w.ID)[workflow.EvCompleted]; n != 1 {
		t.Fatalf("%d workflow.completed events, want 1", n)
	}
}

// A package that is gone is a failure the retry cannot mend: seal_failed recorded, still
// sealing, acknowledged. The poison handler records retries_exhausted.
func TestSealFailures(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	w := e.sealing(t, "templates/no-such-package/")
	if err := e.job.Handle(ctx, message(t, w, e.tenant)); err != nil {
		t.Fatalf("a seal that cannot succeed is acknowledged: %v", err)
	}
	if err := e.job.HandlePoison(ctx, message(t, w, e.tenant)); err != nil {
		t.Fatal(err)
	}
	got, err := e.store.Load(ctx, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := e.store.Events(ctx, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, ev := range evs {
		if ev.Kind == workflow.EvSealFailed {
			reasons = append(reasons, ev.Data["reason"].(string))
		}
	}
	if got.State != workflow.StateSealing || strings.Join(reasons, ",") != "template_unavailable,retries_exhausted" {
		t.Fatalf("state %s, seal_failed reasons %v", got.State, reasons)
	}
	if _, _, err := e.blobs.ReadAll(ctx, ContainerSigned, e.tenant+"/workflows/"+w.ID+".pdf", 1<<20); err == nil {
		t.Fatal("a failed seal wrote a PDF")
	}

	// another tenant's message is permanent; a complete or unknown workflow is acknowledged
	if err := e.job.Handle(ctx, message(t, w, "other")); !funcproto.IsPermanent(err) {
		t.Fatalf("tenant mismatch: %v", err)
	}
	if err := e.job.Handle(ctx, message(t, &workflow.Workflow{ID: uuid.NewString()}, e.tenant)); err != nil {
		t.Fatalf("unknown workflow: %v", err)
	}
	if err := e.job.Handle(ctx, funcproto.QueueMessage{Body: []byte(`{"workflowId":""}`)}); !funcproto.IsPermanent(err) {
		t.Fatalf("empty ids: %v", err)
	}
}

// The completion queues the terminal callback through the invocation's output binding, once: a
// redelivered message for the complete workflow queues nothing.
func TestSealQueuesTheCallback(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	w := e.sealing(t, e.pkg, "https://receiver.example/hook")
	invoke := func() map[string]json.RawMessage { return e.invoke(t, w) }
	out := invoke()
	var m workflow.CallbackMessage
	if err := json.Unmarshal(out[queues.WorkflowCallback.Binding()], &m); err != nil || m != (workflow.CallbackMessage{WorkflowID: w.ID, TenantID: e.tenant, Attempt: 1}) {
		t.Fatalf("callback output %s (%v)", out[queues.WorkflowCallback.Binding()], err)
	}
	if len(out[queues.WorkflowTrigger.Binding()]) != 0 && string(out[queues.WorkflowTrigger.Binding()]) != "null" {
		t.Fatalf("a workflow without esign or delivery settings queued the auto-trigger: %s", out[queues.WorkflowTrigger.Binding()])
	}
	// redelivered before any attempt: the first invocation's outputs may have been lost with it,
	// so the callback is queued again
	if out := invoke(); string(out[queues.WorkflowCallback.Binding()]) != string(mustJSON(t, m)) {
		t.Fatalf("a redelivery before any attempt did not queue the callback again: %s", out[queues.WorkflowCallback.Binding()])
	}
	// once an attempt is recorded, a redelivery queues nothing
	if _, _, err := e.store.Update(context.Background(), w.ID, func(w *workflow.Workflow) (kernel.Change, error) {
		return w.Callback(workflow.CallbackAttempt{Attempt: 1, Status: 200, End: workflow.CallbackDelivered}, time.Now())
	}); err != nil {
		t.Fatal(err)
	}
	if out := invoke(); len(out[queues.WorkflowCallback.Binding()]) != 0 && string(out[queues.WorkflowCallback.Binding()]) != "null" {
		t.Fatalf("a redelivery after the callback's attempt queued it again: %s", out[queues.WorkflowCallback.Binding()])
	}
}

// A workflow with templateSettings.esign or .delivery queues the auto-trigger with its
// completion, and again on a redelivery until the trigger is recorded.
func TestSealQueuesTheAutoTrigger(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.esign = json.RawMessage(`{"enabled":true,"signers":[{"slotIndex":0,"role":"employee","email":"z@example.com"}]}`)
	w := e.sealing(t, e.pkg)
	want := string(mustJSON(t, Message{WorkflowID: w.ID, TenantID: e.tenant}))
	for i := range 2 {
		if out := e.invoke(t, w); string(out[queues.WorkflowTrigger.Binding()]) != want {
			t.Fatalf("invocation %d: trigger output %s, want %s", i, out[queues.WorkflowTrigger.Binding()], want)
		}
	}
	if _, _, err := e.store.Update(context.Background(), w.ID, func(w *workflow.Workflow) (kernel.Change, error) {
		return w.TriggerStarted("g-1", nil, time.Now())
	}); err != nil {
		t.Fatal(err)
	}
	if out := e.invoke(t, w); len(out[queues.WorkflowTrigger.Binding()]) != 0 && string(out[queues.WorkflowTrigger.Binding()]) != "null" {
		t.Fatalf("a redelivery after the trigger started queued it again: %s", out[queues.WorkflowTrigger.Binding()])
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// invoke runs the job on w's message as the host does and returns the queue outputs.
func (e *env) invoke(t *testing.T, w *workflow.Workflow) map[string]json.RawMessage {
	t.Helper()
	r := apptest.InvokeJSON(t, e.job.Handle, Message{WorkflowID: w.ID, TenantID: e.tenant})
	if r.Status != http.StatusOK {
		t.Fatalf("reply %d %v", r.Status, r.Logs)
	}
	return r.Outputs
}

func requireTools(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"pdfsig", "pdftotext", "qpdf"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s missing", tool)
			}
			t.Skipf("%s missing (scripts/install-pdf-tools.sh)", tool)
		}
	}
}

func writeTemp(t *testing.T, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "in.pdf")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// A workflow created with a schemaPath is sealed with that schema: its package holds no
// schema.yaml.
func TestSealWithSchemaPath(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	dir := strings.TrimPrefix(e.pkg, template.Container+"/")
	bare := strings.TrimSuffix(dir, "/") + "-bare/"
	for _, name := range []string{template.FileYAML, template.FilePDF} {
		if _, err := e.blobs.Put(ctx, template.Container, bare+name, bytes.NewReader(e.blob(t, template.Container, dir+name)), "application/octet-stream", nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.blobs.Put(ctx, template.Container, strings.TrimSuffix(dir, "/")+"-schema.yaml", bytes.NewReader([]byte(schemaYAML)), "application/yaml", nil); err != nil {
		t.Fatal(err)
	}
	e.schemaPath = template.Container + "/" + strings.TrimSuffix(dir, "/") + "-schema.yaml"
	w := e.sealing(t, template.Container+"/"+bare)
	if err := e.job.Handle(ctx, message(t, w, e.tenant)); err != nil {
		t.Fatal(err)
	}
	got, err := e.store.Load(ctx, w.ID)
	if err != nil || got.State != workflow.StateComplete {
		t.Fatalf("load %v, events %v", err, e.kinds(t, w.ID))
	}
}
