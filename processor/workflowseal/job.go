// Package workflowseal is the processor's workflow-seal job (DESIGN 10, spec "Workflow"): for a
// workflow in sealing it fills the template package's template.pdf from the collected data,
// appends the workflow record page (every step's values, the validation results, every decision
// with its stage, approver hash, comment, time and the exception's justification verbatim),
// PAdES-seals the result with the deployment's seal key (and optional TSA), writes the sealed
// PDF to signed/workflows/<workflowId>.pdf and the JSONL evidence bundle of the workflow's
// audit trail to evidence/workflows/<workflowId>.jsonl, and completes the workflow
// (workflow.completed).
//
// Seal once: both blobs are written create-only. The bundle is written first; a retry that
// finds it reuses it (its head hash goes in the PDF), and a retry that finds the PDF completes
// the workflow with the stored PDF's hash. So two attempts, a redelivered message or a crash
// between the writes and the completion give one sealed PDF, the one the workflow records. A
// message for a workflow that is not sealing (complete already, or cancelled) is acknowledged.
package workflowseal

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/esign-svc/esign/processor/seal"
	"github.com/esign-svc/esign/processor/workflowcallback"
	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/audit"
	"github.com/esign-svc/esign/shared/azure/blobstore"
	"github.com/esign-svc/esign/shared/evidence"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/pdf"
	"github.com/esign-svc/esign/shared/pdf/certificate"
	"github.com/esign-svc/esign/shared/pdf/pades"
	"github.com/esign-svc/esign/shared/pdf/pdfdoc"
	"github.com/esign-svc/esign/shared/pdf/stamp"
	"github.com/esign-svc/esign/shared/render"
	"github.com/esign-svc/esign/shared/template"
	"github.com/esign-svc/esign/shared/workflow"
	"github.com/esign-svc/esign/shared/workflow/workflowstore"
)

// Function names and the queue (processor/functions/<Name>/function.json).
const (
	FunctionName       = "WorkflowSeal"
	PoisonFunctionName = "WorkflowSealPoison"
	QueueName          = "workflow-seal"
	// BindingCallback is the output binding of the terminal callback (queue workflow-callback).
	BindingCallback = "callback"
)

// Containers the job writes to (DESIGN 3), as the esign seal job.
const (
	ContainerSigned   = seal.ContainerSigned
	ContainerEvidence = seal.ContainerEvidence
)

// Message names the workflow to seal.
type Message struct {
	WorkflowID string `json:"workflowId"`
	TenantID   string `json:"tenantId"`
}

// Workflows is what the job needs of the workflow store (*workflowstore.Store).
type Workflows interface {
	Load(ctx context.Context, id string) (*workflow.Workflow, error)
	Update(ctx context.Context, id string, step func(*workflow.Workflow) (kernel.Change, error)) (*workflow.Workflow, kernel.Change, error)
	Events(ctx context.Context, id string) ([]audit.Record, error)
}

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
	_ Workflows = (*workflowstore.Store)(nil)
	_ Templates = (*template.Loader)(nil)
	_ Blobs     = (*blobstore.Store)(nil)
)

// Job is the workflow-seal job. Workflows, Templates, Blobs and Key are required.
type Job struct {
	Workflows Workflows
	Templates Templates
	Blobs     Blobs
	Key       seal.SealKey
	TSAURL    string           // optional RFC 3161 authority (SEAL_TSA_URL)
	Now       func() time.Time // default time.Now
}

var systemActor = kernel.Actor{Kind: "system", ID: "workflow-seal"}

// Paths of a workflow's outputs inside their containers.
func sealedName(id string) string   { return "workflows/" + id + ".pdf" }
func evidenceName(id string) string { return "workflows/" + id + ".jsonl" }

// SealedPath is the blob path ("<container>/<name>") the workflow records for its sealed PDF.
func SealedPath(id string) string { return ContainerSigned + "/" + sealedName(id) }

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
	path, hash, err := j.seal(ctx, w)
	var f *failure
	if errors.As(err, &f) {
		funcproto.Logf(ctx, "workflow-seal: %s cannot be sealed (%s)", w.ID, f.reason)
		return j.failed(ctx, w.ID, f.reason)
	}
	if err != nil {
		return err
	}
	done, ch, err := j.Workflows.Update(ctx, w.ID, func(w *workflow.Workflow) (kernel.Change, error) {
		ch, err := w.Complete(path, hash, j.now())
		ch.By(systemActor)
		return ch, err
	})
	if errors.Is(err, workflow.ErrInvalidState) { // another attempt completed it first
		return nil
	}
	if err != nil {
		return err
	}
	funcproto.Logf(ctx, "workflow-seal: %s sealed and complete", w.ID)
	return callback(ctx, done, ch)
}

// callback queues the terminal callback (output binding BindingCallback) when the change asks
// for it and the workflow has a callbackUrl: the host writes it only with this reply's success,
// so it goes out exactly when the completion is stored.
func callback(ctx context.Context, w *workflow.Workflow, ch kernel.Change) error {
	if w.Setup.CallbackURL == "" || !slices.ContainsFunc(ch.Effects, func(e kernel.Effect) bool { return e.Kind == workflow.EffectCallback }) {
		return nil
	}
	return funcproto.AddOutput(ctx, BindingCallback, workflowcallback.Message{WorkflowID: w.ID, TenantID: w.Tenant, Attempt: 1})
}

// HandlePoison is the WorkflowSealPoison queue function: the host gave up on the message. It
// records workflow.seal_failed (reason retries_exhausted) on a workflow still sealing.
func (j *Job) HandlePoison(ctx context.Context, qm funcproto.QueueMessage) error {
	w, err := j.load(ctx, qm)
	if err != nil || w == nil {
		return err
	}
	return j.failed(ctx, w.ID, "retries_exhausted")
}

// failed records workflow.seal_failed; a workflow no longer sealing is not an error.
func (j *Job) failed(ctx context.Context, id, reason string) error {
	_, _, err := j.Workflows.Update(ctx, id, func(w *workflow.Workflow) (kernel.Change, error) {
		ch, err := w.SealFailed(reason, j.now())
		ch.By(systemActor)
		return ch, err
	})
	if errors.Is(err, workflow.ErrInvalidState) {
		return nil
	}
	return err
}

// load reads the message's workflow: nil when it is gone or not sealing (acknowledged).
func (j *Job) load(ctx context.Context, qm funcproto.QueueMessage) (*workflow.Workflow, error) {
	var m Message
	if err := qm.Decode(&m); err != nil {
		return nil, err
	}
	if m.WorkflowID == "" || m.TenantID == "" {
		return nil, funcproto.Permanent(apperr.Invalid(funcproto.CodeInvalidMessage, apperr.Field("workflowId", "workflowId and tenantId are required")))
	}
	w, err := j.Workflows.Load(ctx, m.WorkflowID)
	if errors.Is(err, workflowstore.ErrNotFound) {
		funcproto.Logf(ctx, "workflow-seal: no workflow %s; message acknowledged", m.WorkflowID)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if w.Tenant != m.TenantID {
		return nil, funcproto.Permanent(apperr.New(apperr.KindInvalid, funcproto.CodeTenantMismatch, "the message's tenant is not the workflow's"))
	}
	if w.State != workflow.StateSealing {
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
	head, err := j.evidence(ctx, w.ID)
	if err != nil {
		return "", "", err
	}
	existing, err := j.read(ctx, ContainerSigned, sealedName(w.ID))
	if err != nil {
		return "", "", err
	}
	if existing != nil { // an earlier attempt sealed it and did not complete the workflow
		return SealedPath(w.ID), digest(existing), nil
	}
	signed, err := j.produce(ctx, w, pkg, schema, head)
	if err != nil {
		return "", "", err
	}
	err = j.create(ctx, ContainerSigned, sealedName(w.ID), "application/pdf", signed)
	if exists(err) { // a concurrent attempt won: its PDF counts
		if signed, err = j.read(ctx, ContainerSigned, sealedName(w.ID)); err == nil && signed == nil {
			err = errors.New("workflow-seal: the sealed PDF vanished")
		}
	}
	if err != nil {
		return "", "", err
	}
	return SealedPath(w.ID), digest(signed), nil
}

// produce fills the template, appends the record page and signs.
func (j *Job) produce(ctx context.Context, w *workflow.Workflow, pkg *template.Package, s *workflow.Schema, head string) ([]byte, error) {
	data := w.AllData()
	filled, err := stamp.FillOptions{Title: s.Title}.Fill(pkg.PDF, render.FieldValues(pkg, data))
	if err != nil {
		return nil, fail("pdf_unfillable", err)
	}
	d, err := pdfdoc.Open(filled.PDF)
	if err != nil {
		return nil, fail("pdf_unreadable", err)
	}
	font, err := pdfdoc.NewFont(d)
	if err != nil {
		return nil, err
	}
	info, err := certificate.AppendRecord(d, font, Record(w, s, head, j.now()))
	if err != nil {
		return nil, fail("record_page", err)
	}
	signed, err := pades.SignDoc(ctx, d, pades.Options{Signer: j.Key.Signer, Chain: j.Key.Chain, TSAURL: j.TSAURL,
		Name: "esign seal", Reason: "Workflow record sealed", Info: &info})
	if err != nil {
		return nil, fmt.Errorf("workflow-seal: signing: %w", err)
	}
	return signed, nil
}

// evidence writes the bundle of the workflow's audit trail, create-only, and returns its head
// hash; a bundle an earlier attempt wrote is kept and its head returned.
func (j *Job) evidence(ctx context.Context, id string) (string, error) {
	if b, err := j.read(ctx, ContainerEvidence, evidenceName(id)); err != nil || b != nil {
		if err != nil {
			return "", err
		}
		head, _, err := evidence.Verify(bytes.NewReader(b))
		return head, err
	}
	events, err := j.Workflows.Events(ctx, id)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	ew := evidence.NewWriter(&buf)
	for _, ev := range events {
		data := map[string]any{"actorKind": ev.ActorKind}
		// workflow events carry indexes, counts, decisions and hashes only; cleaned all the same,
		// as the session bundle is (no address, phone number, token or code)
		if d, ok := seal.Clean(ev.Data).(map[string]any); ok && len(d) > 0 {
			data["data"] = d
		}
		if _, err := ew.Append(ev.Kind, ev.At, data); err != nil {
			return "", fail("evidence", err)
		}
	}
	err = j.create(ctx, ContainerEvidence, evidenceName(id), "application/x-ndjson", buf.Bytes())
	if exists(err) {
		return j.evidence(ctx, id)
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

// create writes a blob create-only, making its container when missing.
func (j *Job) create(ctx context.Context, container, name, ctype string, data []byte) error {
	_, err := j.Blobs.PutIfAbsent(ctx, container, name, bytes.NewReader(data), ctype, nil)
	if apperr.KindOf(err) == apperr.KindNotFound {
		if err := j.Blobs.EnsureContainer(ctx, container); err != nil {
			return err
		}
		_, err = j.Blobs.PutIfAbsent(ctx, container, name, bytes.NewReader(data), ctype, nil)
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
