// Package workflowseal is the processor's workflow-seal job (DESIGN 10, spec "Workflow"): for a
// workflow in sealing it fills the template package's template.pdf from the collected data,
// appends the workflow record page (every step's values, the validation results, every decision
// with its stage, approver hash, comment, time and the exception's justification verbatim),
// PAdES-seals the result with the deployment's seal key (and optional TSA), writes the sealed
// PDF to signed/<tenantId>/workflows/<workflowId>.pdf (with the field manifest of the
// template's esign.* fields beside it, for a signing session on it) and the JSONL evidence
// bundle of the workflow's audit trail to evidence/<tenantId>/workflows/<workflowId>.jsonl,
// and completes the workflow (workflow.completed), queueing the terminal callback and the
// auto-trigger (queue workflow-trigger).
//
// Seal once: both blobs are written create-only. The bundle is written first; a retry that
// finds it reuses it (its head hash goes in the PDF), and a retry that finds the PDF completes
// the workflow with the stored PDF's hash. So two attempts, a redelivered message or a crash
// between the writes and the completion give one sealed PDF, the one the workflow records. A
// message for a complete workflow queues again what its completion's outputs may have lost (the
// host drops them with a failed invocation): the auto-trigger when it has not ended, the
// callback when it was never attempted. Any other state is acknowledged.
package workflowseal

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/esign-svc/esign/processor/internal/jobkit"
	"github.com/esign-svc/esign/processor/internal/sealcfg"
	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/azure/blobstore"
	"github.com/esign-svc/esign/shared/blobpath"
	"github.com/esign-svc/esign/shared/effects"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/evidence"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/licensing"
	"github.com/esign-svc/esign/shared/pdf"
	"github.com/esign-svc/esign/shared/pdf/certificate"
	"github.com/esign-svc/esign/shared/pdf/ltv"
	"github.com/esign-svc/esign/shared/pdf/pades"
	"github.com/esign-svc/esign/shared/pdf/pdfdoc"
	"github.com/esign-svc/esign/shared/pdf/stamp"
	"github.com/esign-svc/esign/shared/render"
	"github.com/esign-svc/esign/shared/template"
	"github.com/esign-svc/esign/shared/workflow"
)

// Function names and the queue (processor/functions/<Name>/function.json).
const (
	FunctionName       = "WorkflowSeal"
	PoisonFunctionName = "WorkflowSealPoison"
	QueueName          = workflow.QueueSeal
)

// Containers the job writes to (DESIGN 3), as the esign seal job.
const (
	ContainerSigned   = blobpath.ContainerSigned
	ContainerEvidence = blobpath.ContainerEvidence
)

// Message names the workflow to seal (what the dispatcher queues).
type Message = workflow.SealMessage

// Templates loads a template package (*template.Loader).
type Templates interface {
	Load(ctx context.Context, field, templatePath string) (*template.Package, error)
}

// Blobs is what the job needs of the blob store (*blobstore.Store).
type Blobs interface {
	ReadAll(ctx context.Context, container, name string, limit int64) ([]byte, map[string]string, error)
	PutIfAbsent(ctx context.Context, container, name string, r io.Reader, contentType string, metadata map[string]string) (string, error)
	EnsureContainer(ctx context.Context, name string) error
}

var (
	_ Templates = (*template.Loader)(nil)
	_ Blobs     = (*blobstore.Store)(nil)
)

// Deps are the dependencies of the workflow-seal job. Workflows, Templates, Blobs and Key are required.
type Deps struct {
	// Workflows is the workflow store (*workflowstore.Store), reached only through the use
	// cases (workflow.Workflows).
	Workflows workflow.Repo
	Templates Templates
	Blobs     Blobs
	Key       sealcfg.Key
	TSAURL    string           // optional RFC 3161 authority (SEAL_TSA_URL)
	Level     ltv.Level        // SEAL_LEVEL (sealcfg.Config.Level); zero: pdf.ResolveLevel's default
	Now       func() time.Time // default time.Now
	// Meter queues workflow.sealed with the completion's outputs (DESIGN 19); off without
	// LICENSING_URL.
	Meter licensing.Meter
}

// Job is the workflow-seal job (New builds it).
type Job struct{ Deps }

// New makes the job. It does no I/O. Errors: a missing dependency.
func New(d Deps) (*Job, error) {
	if d.Workflows == nil || d.Templates == nil || d.Blobs == nil || d.Key.Signer == nil || len(d.Key.Chain) == 0 {
		return nil, errors.New("workflowseal: Workflows, Templates, Blobs and Key are required")
	}
	return &Job{Deps: d}, nil
}

// Functions is the job's function table: the workflow-seal queue and its poison queue.
func (j *Job) Functions() []jobkit.Function {
	return []jobkit.Function{
		{Name: FunctionName, Handler: funcproto.QueueHandler(j.Handle)},
		{Name: PoisonFunctionName, Handler: funcproto.QueueHandler(j.HandlePoison)},
	}
}

var systemActor = kernel.Actor{Kind: "system", ID: "workflow-seal"}

// Names of a workflow's outputs inside their containers (workflow.SealedPath, EvidencePath).
func sealedName(w *workflow.Workflow) string {
	return strings.TrimPrefix(workflow.SealedPath(w.Tenant, w.ID), ContainerSigned+"/")
}

func evidenceName(w *workflow.Workflow) string {
	return strings.TrimPrefix(workflow.EvidencePath(w.Tenant, w.ID), ContainerEvidence+"/")
}

func manifestName(w *workflow.Workflow) string { return sealedName(w) + ".manifest.json" }

// failure is a seal that can never succeed as things stand (the template package is gone or
// broken, the PDF cannot be filled): recorded with SealFailed, the message acknowledged.
// reason is a short code, never personal data.
type failure struct {
	reason string
	cause  error
}

func (f *failure) Error() string { return "workflow-seal: " + f.reason + ": " + f.cause.Error() }
func (f *failure) Unwrap() error { return f.cause }

func fail(reason string, cause error) error { return &failure{reason: reason, cause: cause} }

// workflows is the workflow use-case service the job's reads and transitions call.
func (j *Job) workflows() *workflow.Workflows {
	return &workflow.Workflows{Store: j.Workflows, Now: j.now}
}

func (j *Job) now() time.Time {
	if j.Now == nil {
		return time.Now().UTC()
	}
	return j.Now().UTC()
}

// Handle is the WorkflowSeal queue function. Replies: nil once the workflow is sealed and
// complete; nil without effect for a workflow that is gone or not sealing; nil after recording
// workflow.seal_failed for a seal that can never succeed (the workflow stays sealing, for a
// retry through the seal route once the package is fixed); Permanent for a message without ids
// or of another tenant; a plain error (retried by the host, then poisoned) for storage, signer
// or timestamp failures.
func (j *Job) Handle(ctx context.Context, qm funcproto.QueueMessage) error {
	w, err := j.load(ctx, qm)
	if err != nil || w == nil {
		return err
	}
	if w.State == workflow.StateComplete {
		return j.resume(ctx, w)
	}
	path, hash, err := j.seal(ctx, w)
	var f *failure
	if errors.As(err, &f) {
		funcproto.Logf(ctx, "workflow-seal: %s cannot be sealed (%s)", w.ID, f.reason)
		return j.workflows().SealFailed(ctx, w.Tenant, w.ID, systemActor, f.reason)
	}
	if err != nil {
		return err
	}
	done, ch, err := j.workflows().Complete(ctx, w.Tenant, w.ID, systemActor, path, hash)
	if errors.Is(err, workflow.ErrInvalidState) { // another attempt completed it first
		return nil
	}
	if err != nil {
		return err
	}
	funcproto.Logf(ctx, "workflow-seal: %s sealed and complete", w.ID)
	asks := func(k kernel.EffectKind) bool {
		return slices.ContainsFunc(ch.Effects, func(e kernel.Effect) bool { return e.Kind == k })
	}
	return j.outputs(ctx, done, asks(workflow.EffectCallback), asks(workflow.EffectAutoTrigger))
}

// outputs queues the usage record, the terminal callback (queues.WorkflowCallback) when asked
// and the workflow has a callbackUrl, and the auto-trigger (queues.WorkflowTrigger) when asked
// and the workflow has one to start (effects.EmitWorkflowSealed): the host writes them only
// with this reply's success, so they go out exactly when the completion is stored.
func (j *Job) outputs(ctx context.Context, w *workflow.Workflow, callback, trigger bool) error {
	// a resumed completion queues it again: the id is the workflow's, the service keeps one
	if err := effects.Meter(ctx, j.Meter, licensing.KindWorkflowSealed, w.Tenant, w.ID); err != nil {
		return err
	}
	return effects.EmitWorkflowSealed(ctx, w, callback, trigger)
}

// resume queues again, for a complete workflow, what its completion's outputs may have lost:
// the auto-trigger unless it ended, the callback unless an attempt was recorded (a callback
// queued and not yet attempted then goes out twice, under one Idempotency-Key).
func (j *Job) resume(ctx context.Context, w *workflow.Workflow) error {
	callback, err := j.workflows().CallbackUnattempted(ctx, w)
	if err != nil {
		return err
	}
	return j.outputs(ctx, w, callback, true)
}

// HandlePoison is the WorkflowSealPoison queue function: the host gave up on the message. It
// records workflow.seal_failed (reason retries_exhausted) on a workflow still sealing.
func (j *Job) HandlePoison(ctx context.Context, qm funcproto.QueueMessage) error {
	w, err := j.load(ctx, qm)
	if err != nil || w == nil {
		return err
	}
	return j.workflows().SealFailed(ctx, w.Tenant, w.ID, systemActor, "retries_exhausted")
}

// load reads the message's workflow: nil when it is gone or neither sealing nor complete
// (acknowledged).
func (j *Job) load(ctx context.Context, qm funcproto.QueueMessage) (*workflow.Workflow, error) {
	var m Message
	if err := qm.Decode(&m); err != nil {
		return nil, err
	}
	w, err := jobkit.Workflow(ctx, j.workflows(), "workflow-seal", m.WorkflowID, m.TenantID)
	if err != nil || w == nil {
		return nil, err
	}
	if w.State != workflow.StateSealing && w.State != workflow.StateComplete {
		funcproto.Logf(ctx, "workflow-seal: %s is %s, not sealing; message acknowledged", w.ID, w.State)
		return nil, nil
	}
	return w, nil
}

// seal writes (or finds) the evidence bundle and the sealed PDF and returns the PDF's path and
// "sha256:<hex>".
func (j *Job) seal(ctx context.Context, w *workflow.Workflow) (path, hash string, err error) {
	pkg, err := j.Templates.Load(ctx, "templatePath", w.TemplatePath)
	if k := apperr.KindOf(err); k == apperr.KindInvalid || k == apperr.KindNotFound {
		return "", "", fail("template_unavailable", err)
	}
	if err != nil {
		return "", "", err
	}
	if pkg.Schema == nil && w.Setup.SchemaPath == "" {
		return "", "", fail("schema_missing", errors.New("the template package has no schema.yaml"))
	}
	schema, err := workflow.SchemaOf(ctx, j.Blobs, pkg, w.Setup.SchemaPath) // the schema the workflow was created with
	if k := apperr.KindOf(err); k == apperr.KindInvalid || k == apperr.KindNotFound {
		return "", "", fail("schema_invalid", err)
	}
	if err != nil {
		return "", "", err
	}
	head, err := j.evidence(ctx, w)
	if err != nil {
		return "", "", err
	}
	path = workflow.SealedPath(w.Tenant, w.ID)
	existing, err := j.read(ctx, ContainerSigned, sealedName(w))
	if err != nil {
		return "", "", err
	}
	if existing != nil { // an earlier attempt sealed it and did not complete the workflow
		return path, digest(existing), nil
	}
	signed, manifest, err := j.produce(ctx, w, pkg, schema, head)
	if err != nil {
		return "", "", err
	}
	// the manifest first: a PDF that names it finds it (an earlier attempt's is the same)
	if err := j.create(ctx, ContainerSigned, manifestName(w), "application/json", manifest, nil); err != nil && !exists(err) {
		return "", "", err
	}
	err = j.create(ctx, ContainerSigned, sealedName(w), "application/pdf", signed,
		map[string]string{esign.MetaManifest: manifestName(w)})
	if exists(err) { // a concurrent attempt won: its PDF counts
		if signed, err = j.read(ctx, ContainerSigned, sealedName(w)); err == nil && signed == nil {
			err = errors.New("workflow-seal: the sealed PDF vanished")
		}
	}
	if err != nil {
		return "", "", err
	}
	return path, digest(signed), nil
}

// produce fills the template, appends the record page and signs; it returns the sealed PDF and
// the field manifest of the template's esign.* fields (JSON, as a render stores it).
func (j *Job) produce(ctx context.Context, w *workflow.Workflow, pkg *template.Package, s *workflow.Schema, head string) ([]byte, []byte, error) {
	data := w.AllData()
	filled, err := stamp.FillOptions{Title: s.Title}.Fill(pkg.PDF, render.FieldValues(pkg, data))
	if err != nil {
		return nil, nil, fail("pdf_unfillable", err)
	}
	manifest, err := json.Marshal(struct {
		Fields []esign.ManifestField `json:"fields"`
	}{esign.ManifestOf(filled.Manifest)})
	if err != nil {
		return nil, nil, err
	}
	d, err := pdfdoc.Open(filled.PDF)
	if err != nil {
		return nil, nil, fail("pdf_unreadable", err)
	}
	font, err := pdfdoc.NewFont(d)
	if err != nil {
		return nil, nil, err
	}
	info, err := certificate.AppendRecord(d, font, Record(w, s, head, j.now()))
	if err != nil {
		return nil, nil, fail("record_page", err)
	}
	level, err := pdf.ResolveLevel(j.Level, j.TSAURL)
	if err != nil {
		return nil, nil, err
	}
	mdp, tsaURL := 1, ""
	if level >= ltv.LevelLT {
		mdp = 2 // the DSS and archive timestamp revisions come after the certification
	}
	if level >= ltv.LevelT {
		tsaURL = j.TSAURL
	}
	signed, err := pades.SignDoc(ctx, d, pades.Options{Signer: j.Key.Signer, Chain: j.Key.Chain, TSAURL: tsaURL,
		Name: "esign seal", Reason: "Workflow record sealed", Info: &info, DocMDP: mdp,
		// a record the auto-trigger signs next is sealed with an approval signature: a
		// certification (no changes allowed) would void the signatures that follow
		Approval: len(w.Setup.ESign) > 0})
	if err != nil {
		return nil, nil, fmt.Errorf("workflow-seal: signing: %w", err)
	}
	// B-LT/B-LTA: the DSS and the archive timestamp; a missing revocation answer fails the
	// attempt (retried), as a missing timestamp does
	if signed, err = pdf.Extend(ctx, signed, level, j.TSAURL, nil); err != nil {
		return nil, nil, fmt.Errorf("workflow-seal: long-term validation data: %w", err)
	}
	return signed, manifest, nil
}

// evidence writes the bundle of the workflow's audit trail, create-only, and returns its head
// hash; a bundle an earlier attempt wrote is kept and its head returned.
func (j *Job) evidence(ctx context.Context, w *workflow.Workflow) (string, error) {
	if b, err := j.read(ctx, ContainerEvidence, evidenceName(w)); err != nil || b != nil {
		if err != nil {
			return "", err
		}
		head, _, err := evidence.Verify(bytes.NewReader(b))
		return head, err
	}
	events, err := j.workflows().Events(ctx, w.ID)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	ew := evidence.NewWriter(&buf)
	for _, ev := range events {
		data := map[string]any{"actorKind": ev.ActorKind}
		// workflow events carry indexes, counts, decisions and hashes only; cleaned all the same,
		// as the session bundle is (no address, phone number, token or code)
		if d, ok := evidence.Clean(ev.Data).(map[string]any); ok && len(d) > 0 {
			data["data"] = d
		}
		if _, err := ew.Append(ev.Kind, ev.At, data); err != nil {
			return "", fail("evidence", err)
		}
	}
	err = j.create(ctx, ContainerEvidence, evidenceName(w), "application/x-ndjson", buf.Bytes(), nil)
	if exists(err) {
		return j.evidence(ctx, w)
	}
	return ew.Head(), err
}

// read is a blob's content, nil when it does not exist.
func (j *Job) read(ctx context.Context, container, name string) ([]byte, error) {
	b, _, err := j.Blobs.ReadAll(ctx, container, name, pdf.MaxSourceBytes)
	if apperr.KindOf(err) == apperr.KindNotFound {
		return nil, nil
	}
	return b, err
}

// create writes a blob create-only, with its metadata, making its container when missing.
func (j *Job) create(ctx context.Context, container, name, ctype string, data []byte, meta map[string]string) error {
	_, err := j.Blobs.PutIfAbsent(ctx, container, name, bytes.NewReader(data), ctype, meta)
	if apperr.KindOf(err) == apperr.KindNotFound {
		if err := j.Blobs.EnsureContainer(ctx, container); err != nil {
			return err
		}
		_, err = j.Blobs.PutIfAbsent(ctx, container, name, bytes.NewReader(data), ctype, meta)
	}
	return err
}

// exists reports a create-only write that found the blob.
func exists(err error) bool {
	e, ok := apperr.As(err)
	return ok && e.Code == blobstore.CodeBlobExists
}

func digest(b []byte) string {
	h := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(h[:])
}
