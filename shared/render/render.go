// Package render is the render use case (DESIGN 9): one record rendered from a template package
// into documents/rendered/<correlationId>.pdf, once, with its field manifest beside it and the
// document.rendered audit row; then auto-trigger: a signing session on it (templateSettings.esign)
// through the same use case as POST /api/esign/session, delivery sessions (templateSettings.
// delivery) through delivery's, or, with both, a delivery of the signed PDF once the session
// completes. The dispatcher's render route and the batch record job render through it.
package render

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"github.com/esign-svc/esign/shared/blobpath"
	"io"
	"net/url"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/document"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/licence"
	"github.com/esign-svc/esign/shared/licensing"
	"github.com/esign-svc/esign/shared/pdf/stamp"
	"github.com/esign-svc/esign/shared/template"
)

// Where rendered documents go (DESIGN 9).
const (
	ContainerDocuments = esign.ContainerDocuments
	RenderedPrefix     = "rendered/"
	// Blob metadata of a rendered PDF: the render's request hash and the PDF's own hash, so that
	// a retry after a crash between the blob write and the document row can adopt the blob.
	metaRequestHash = "renderrequest"
	metaPDFHash     = "pdfhash"
	metaPages       = "pages"
	// metaManifestHash is a shared manifest's full SHA-256 (SharedManifests): a create that
	// conflicts adopts the blob only when it says the same.
	metaManifestHash = "manifesthash"
)

// Templates loads template packages (template.Loader).
type Templates interface {
	Load(ctx context.Context, field, templatePath string) (*template.Package, error)
}

// Blobs writes and reads the rendered blobs (blobstore.Store).
type Blobs interface {
	PutIfAbsent(ctx context.Context, container, name string, r io.Reader, contentType string, metadata map[string]string) (string, error)
	Metadata(ctx context.Context, container, name string) (map[string]string, error)
	EnsureContainer(ctx context.Context, name string) error
}

// Documents keeps the rendered-document aggregate (documentstore.Store); the renderer changes
// it through the document use cases (document.Documents) only.
type Documents = document.Store

// Sessions finds the signing session an earlier run of the same render created
// (sessionstore.Store).
type Sessions interface {
	Load(ctx context.Context, groupID string) (*esign.Session, []esign.Slot, error)
	GroupByCorrelation(ctx context.Context, tenantID, correlationID string) (string, error)
}

// SessionCreator is esign.Creator.
type SessionCreator interface {
	Create(ctx context.Context, tenant string, actor esign.Actor, req esign.CreateRequest) (esign.Created, error)
	Links(s *esign.Session, slots []esign.Slot) ([]string, error)
}

// DeliveryCreator is delivery.Creator.
type DeliveryCreator interface {
	Create(ctx context.Context, by delivery.Requester, key string, req delivery.CreateRequest) (delivery.Created, error)
}

// Renderer is the render use case. Safe for concurrent use.
type Renderer struct {
	Templates Templates
	Blobs     Blobs
	Store     Documents
	Sessions  Sessions
	ESign     SessionCreator
	Delivery  DeliveryCreator
	Now       func() time.Time
	// Licensing is asked, after the offline licence, for each feature an auto-trigger needs
	// before the document is stored (DESIGN 19), so a refusal leaves nothing behind; nil: the
	// offline licence alone.
	Licensing licensing.Validator
	// WriteFirst makes Produce write the document before it looks for an earlier run of the
	// same render: one read fewer for each new document, and a retry still finds its earlier
	// run (the blobs are adopted, the row's create conflicts and is read). The batch record
	// job's renderer (issue 26): its records are almost always new.
	WriteFirst bool
	// SharedManifests, when set, stores a document's field manifest once per content in its
	// PDF's folder, <folder>/manifest-<first 32 hex of the manifest JSON's SHA-256>.json, instead
	// of <pdf>.manifest.json beside each PDF: the batch record job's renderer (issue 26), whose
	// records, all rendered from one template, have the same manifest. The PDF's esignmanifest
	// metadata and the document's ManifestPath name that blob. Nil: one manifest per document.
	SharedManifests *ManifestNames
}

// Caller is who renders: the tenant, the caller's id, the audit actor and the deployment's
// licence, which must allow what the render makes (Trigger.Plan).
type Caller struct {
	TenantID string
	CallerID string
	Actor    kernel.Actor
	Licence  *licence.Licence
}

// Result is a rendered document and what auto-trigger started on it.
type Result struct {
	Document *document.Document
	Warnings []template.Result // warning and info results of the record's validation
	// Created is false for an idempotent retry: the document was rendered before from the same
	// record and template (200 instead of 201).
	Created bool
	Started // what auto-trigger started
}

// plan is a validated render: everything decided before anything is written.
type plan struct {
	pkg      *template.Package
	record   map[string]any
	warnings []template.Result
	doc      *document.Document
	target   Target // the document as auto-trigger sees it, its hash known once stored
	trigger  Trigger
}

// Render renders req's one record for caller. Errors: 400 naming the field at fault
// (invalid_request, invalid_blob_path, template_not_found, template_invalid, record_invalid with
// each failed rule, the auto-trigger settings' own validation under templateSettings.*); 403
// licence_missing, licence_expired, or licence_feature_missing when the licence lacks esign for
// an auto-triggered signing session or delivery for auto-triggered deliveries; 409
// document_exists for another render under the correlationId; the stores'.
func (r *Renderer) Render(ctx context.Context, by Caller, req Request) (Result, error) {
	p, err := r.plan(ctx, by, req)
	if err != nil {
		return Result{}, err
	}
	doc, created, err := r.store(ctx, p)
	if err != nil {
		return Result{}, err
	}
	out := Result{Document: doc, Warnings: p.warnings, Created: created}
	if err := r.trigger(ctx, by, p, &out); err != nil {
		return Result{}, err
	}
	return out, nil
}

// plan validates the request, the record and the auto-trigger settings, and decides the
// document's ids, all before anything is written.
func (r *Renderer) plan(ctx context.Context, by Caller, req Request) (*plan, error) {
	if req.TemplatePath == "" {
		return nil, apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field("templatePath", "is required"))
	}
	if req.Batch() { // the route hands an array to batch dispatch (dispatch.Intake)
		return nil, apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field("dataSource", "must be one record (an object)"))
	}
	if err := req.Options.Validate(); err != nil {
		return nil, err
	}
	record, err := req.Record()
	if err != nil {
		return nil, err
	}
	if err := template.Confine("templatePath", req.TemplatePath, by.TenantID); err != nil {
		return nil, err
	}
	pkg, err := r.Templates.Load(ctx, "templatePath", req.TemplatePath)
	if err != nil {
		return nil, err
	}
	settings, err := pkg.Merge("templateSettings", req.TemplateSettings)
	if err != nil {
		return nil, err
	}
	now := r.Now().UTC()
	results := pkg.Validate(record, now)
	if err := template.Errors("dataSource", results); err != nil {
		return nil, err
	}
	p := &plan{pkg: pkg, record: record, warnings: results}
	if p.doc, err = newDocument(by, req, pkg, record, now); err != nil {
		return nil, err
	}
	if p.doc.RequestHash, err = requestHash(req, pkg, record); err != nil {
		return nil, err
	}
	d := p.doc
	p.target = Target{TenantID: d.TenantID, CorrelationID: d.CorrelationID, DocumentID: d.DocumentID, DocType: d.DocType,
		DocumentName: documentName(req.Options, pkg, record, d), Title: d.Title, PDFBlobPath: d.PDFBlobPath}
	if p.trigger, err = PlanTrigger(settings.ESign, settings.Delivery, p.target); err != nil {
		return nil, err
	}
	if err := by.Licence.Allow(p.trigger.Plan()); err != nil {
		return nil, err
	}
	for _, f := range p.trigger.Plan().Features() {
		if err := licensing.Check(ctx, r.Licensing, by.TenantID, f, d.CorrelationID); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func newDocument(by Caller, req Request, pkg *template.Package, record map[string]any, now time.Time) (*document.Document, error) {
	o := req.Options
	text := func(key string) string { return pkg.Text(record, key) }
	cid := o.CorrelationID
	if cid == "" {
		cid = uuid.NewString()
	} else if !esign.ValidCorrelationID(cid) {
		return nil, apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field("options.correlationId",
			"must be 1 to 128 letters, digits or . _ : ~ - and start with a letter or digit"))
	}
	d := &document.Document{
		CorrelationID: cid, TenantID: by.TenantID, CreatedBy: by.CallerID, DocumentID: o.DocumentID,
		DocType: o.DocType, Title: o.Title, TemplatePath: req.TemplatePath, TemplateName: pkg.Name,
		TemplateVersion: pkg.Version, PDFBlobPath: ContainerDocuments + "/" + blobpath.TenantName(by.TenantID, RenderedPrefix, cid, ".pdf"),
		GeneratedBy: o.GeneratedBy, SourceSystem: o.SourceSystem, CreatedAt: now,
	}
	if d.DocumentID == "" {
		if t := cmp.Or(o.DocumentIDTemplate, pkg.DocumentIDTemplate); t != "" {
			d.DocumentID = template.Expand(t, text)
		}
	}
	if d.DocumentID == "" {
		d.DocumentID = cid
	}
	if d.Title == "" {
		d.Title = cmp.Or(template.Expand(pkg.Title, text), pkg.Name)
	}
	if d.DocType == "" {
		d.DocType = pkg.Name
	}
	// what a template made of the record meets the options' own limits, before anything is
	// written (a documentId of a long text field was refused by the table after the blobs)
	var errs []apperr.FieldError
	if o.DocumentID == "" && d.DocumentID != cid {
		field := "templatePath"
		if o.DocumentIDTemplate != "" {
			field = "options.documentIdTemplate"
		}
		errs = appendDerived(errs, field, "documentId", d.DocumentID, maxOption)
	}
	if o.Title == "" {
		errs = appendDerived(errs, "templatePath", "title", d.Title, maxTitle)
	}
	if len(errs) > 0 {
		return nil, apperr.Invalid(apperr.CodeInvalidRequest, errs...)
	}
	return d, nil
}

// requestHash identifies a render: the template package (path, name, version and its PDF's
// hash) and the request's record, options and settings, in canonical JSON (object keys sorted).
func requestHash(req Request, pkg *template.Package, record map[string]any) (string, error) {
	var settings any
	if len(bytes.TrimSpace(req.TemplateSettings)) > 0 {
		if err := json.Unmarshal(req.TemplateSettings, &settings); err != nil {
			return "", apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field("templateSettings", "must be a JSON object"))
		}
	}
	pdf := sha256.Sum256(pkg.PDF)
	b, err := json.Marshal(map[string]any{
		"template": map[string]any{"path": req.TemplatePath, "name": pkg.Name, "version": pkg.Version, "pdf": hex.EncodeToString(pdf[:])},
		"record":   record, "options": req.Options, "settings": settings,
	})
	if err != nil {
		return "", apperr.Wrap(err, apperr.KindInternal, "render_hash", "could not hash the render request")
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// store renders and stores p's document once (Produce).
func (r *Renderer) store(ctx context.Context, p *plan) (*document.Document, bool, error) {
	return r.Produce(ctx, p.pkg, p.record, p.doc)
}

// Produce renders record (validated against pkg) into d.PDFBlobPath, create-only, with its field
// manifest beside it (or, with SharedManifests, the folder's manifest of the same content), and
// stores d with document.rendered: the one-record render and the batch record job both produce
// their documents through it. d carries the ids, the path and the RequestHash; Produce fills in
// the hash, the page count and the manifest's path. A document already stored under
// d's correlationId is this render when its request hash matches (created false), else 409
// document_exists (with WriteFirst found when the create conflicts).
func (r *Renderer) Produce(ctx context.Context, pkg *template.Package, record map[string]any, d *document.Document) (*document.Document, bool, error) {
	if !r.WriteFirst {
		if have, err := r.existing(ctx, d); err != nil || have != nil {
			return have, false, err
		}
	}
	filled, err := stamp.FillOptions{Title: d.Title}.Fill(pkg.PDF, values(pkg, record))
	if err != nil {
		return nil, false, err
	}
	d.Pages, d.PDFHash = filled.Pages, "sha256:"+sha256Hex(filled.PDF)
	if err := r.writeBlobs(ctx, d, filled); err != nil {
		return nil, false, err
	}
	err = r.documents().Create(ctx, d)
	if apperr.KindOf(err) == apperr.KindConflict {
		if have, err := r.existing(ctx, d); err != nil || have != nil {
			return have, false, err
		}
	}
	if err != nil {
		return nil, false, err
	}
	return d, true, nil
}

// existing is the stored document of want's correlationId when it is the same render; nil when
// there is none. Errors: 409 document_exists for another render (or another tenant's).
func (r *Renderer) existing(ctx context.Context, want *document.Document) (*document.Document, error) {
	d, err := r.documents().Load(ctx, want.TenantID, want.CorrelationID)
	if apperr.KindOf(err) == apperr.KindNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if d.TenantID != want.TenantID || d.RequestHash != want.RequestHash {
		return nil, document.ErrExists(d.CorrelationID)
	}
	return d, nil
}

// writeBlobs writes the manifest (manifestBlob), then the PDF naming it, each create-only, and
// sets d.ManifestPath. A blob left by an earlier run of the same render (crashed before its
// document row) is adopted, with the manifest its PDF names; one of another render is 409
// document_exists.
func (r *Renderer) writeBlobs(ctx context.Context, d *document.Document, f stamp.Filled) error {
	manifest, err := json.Marshal(struct {
		Fields []esign.ManifestField `json:"fields"`
	}{esign.ManifestOf(f.Manifest)})
	if err != nil {
		return apperr.Wrap(err, apperr.KindInternal, "render_manifest", "could not encode the field manifest")
	}
	name := d.PDFBlobPath[len(ContainerDocuments)+1:]
	mname, mmeta, key := r.manifestBlob(name, d, manifest)
	if !r.SharedManifests.has(mname) {
		if err := r.putOnce(ctx, d, mname, manifest, "application/json", mmeta, key); err != nil {
			return err
		}
		r.SharedManifests.add(mname)
	}
	d.ManifestPath = ContainerDocuments + "/" + mname
	meta := map[string]string{metaRequestHash: d.RequestHash, metaPDFHash: d.PDFHash,
		esign.MetaManifest: esign.ManifestMeta(mname), metaPages: strconv.Itoa(d.Pages)}
	err = r.putOnce(ctx, d, name, f.PDF, "application/pdf", meta, metaRequestHash)
	var adopted *adoptedBlob
	if errors.As(err, &adopted) {
		d.PDFHash = adopted.meta[metaPDFHash]
		d.Pages, _ = strconv.Atoi(adopted.meta[metaPages])
		if m, err := url.PathUnescape(adopted.meta[esign.MetaManifest]); err == nil && m != "" {
			d.ManifestPath = ContainerDocuments + "/" + m // an earlier run's, e.g. before SharedManifests
		}
		return nil
	}
	return err
}

type adoptedBlob struct{ meta map[string]string }

func (*adoptedBlob) Error() string { return "render: blob of an earlier run adopted" }

// putOnce writes a blob create-only. When it exists and its metadata under key is meta's, it
// is adopted (*adoptedBlob for the PDF, nil for a manifest); else 409 document_exists.
func (r *Renderer) putOnce(ctx context.Context, d *document.Document, name string, data []byte, ctype string, meta map[string]string, key string) error {
	_, err := r.Blobs.PutIfAbsent(ctx, ContainerDocuments, name, bytes.NewReader(data), ctype, meta)
	if apperr.KindOf(err) == apperr.KindNotFound { // a new deployment's first render: no container yet
		if err := r.Blobs.EnsureContainer(ctx, ContainerDocuments); err != nil {
			return err
		}
		_, err = r.Blobs.PutIfAbsent(ctx, ContainerDocuments, name, bytes.NewReader(data), ctype, meta)
	}
	if apperr.KindOf(err) != apperr.KindConflict {
		return err
	}
	have, err := r.Blobs.Metadata(ctx, ContainerDocuments, name)
	if err != nil {
		return err
	}
	if meta[key] == "" || have[key] != meta[key] {
		return document.ErrExists(d.CorrelationID)
	}
	if ctype == "application/pdf" {
		return &adoptedBlob{meta: have}
	}
	return nil
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
