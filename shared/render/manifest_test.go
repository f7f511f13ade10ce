package render

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/blobpath"
	"github.com/esign-svc/esign/shared/document"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/pdf/stamp"
	"github.com/esign-svc/esign/shared/template"
)

// Shared manifests (SharedManifests, issue 26): the batch record job's renderer stores one field
// manifest per content in a batch folder, named by that content, instead of one per record.

// putCounting counts the create-only writes of each blob name and those that conflicted.
type putCounting struct {
	Blobs
	mu        sync.Mutex
	puts      map[string]int
	conflicts map[string]int
}

func (b *putCounting) PutIfAbsent(ctx context.Context, container, name string, r io.Reader, ctype string, meta map[string]string) (string, error) {
	etag, err := b.Blobs.PutIfAbsent(ctx, container, name, r, ctype, meta)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.puts == nil {
		b.puts, b.conflicts = map[string]int{}, map[string]int{}
	}
	b.puts[name]++
	if apperr.KindOf(err) == apperr.KindConflict {
		b.conflicts[name]++
	}
	return etag, err
}

// manifestPuts are the counts of the writes of manifests (any name but a PDF's).
func (b *putCounting) manifestPuts() (puts, conflicts map[string]int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	puts, conflicts = map[string]int{}, map[string]int{}
	for n, c := range b.puts {
		if !strings.HasSuffix(n, ".pdf") {
			puts[n], conflicts[n] = c, b.conflicts[n]
		}
	}
	return puts, conflicts
}

// shared is f's renderer with SharedManifests (a fresh set: a new process), WriteFirst and
// counted blob writes, as the batch record job's; the documents container exists.
func (f *fixture) shared(t *testing.T) (*Renderer, *putCounting) {
	t.Helper()
	if err := f.blobs.EnsureContainer(context.Background(), ContainerDocuments); err != nil {
		t.Fatal(err) // a first write into no container is counted twice
	}
	blobs := &putCounting{Blobs: f.blobs}
	r := *f.r
	r.Blobs, r.WriteFirst, r.SharedManifests = blobs, true, &ManifestNames{}
	return &r, blobs
}

// batchRecord is the sample package and record, and a document of them in folder as the batch
// record job makes one (documents/<tid>/dispatch/<batchId>/<name>.pdf).
func (f *fixture) batchRecord(t *testing.T, folder, name string) (*template.Package, map[string]any, *document.Document) {
	t.Helper()
	pkg, err := f.r.Templates.Load(context.Background(), "templatePath", f.pkgPath)
	if err != nil {
		t.Fatal(err)
	}
	var record map[string]any
	if err := json.Unmarshal(offerJSON(t), &record); err != nil {
		t.Fatal(err)
	}
	cid := "b-" + uuid.NewString()
	return pkg, record, &document.Document{CorrelationID: cid, TenantID: f.by.TenantID, CreatedBy: "oid-1",
		DocumentID: cid, DocType: pkg.Name, Title: pkg.Name, TemplatePath: f.pkgPath, TemplateName: pkg.Name,
		TemplateVersion: pkg.Version, ReferenceID: folder, RequestHash: hexSum([]byte(cid)),
		PDFBlobPath: ContainerDocuments + "/" + blobpath.TenantName(f.by.TenantID, "dispatch/", folder, "/", name)}
}

// pdfManifest is the manifest blob name the PDF at path names in its metadata.
func (f *fixture) pdfManifest(t *testing.T, path string) string {
	t.Helper()
	meta, err := f.blobs.Metadata(context.Background(), ContainerDocuments, strings.TrimPrefix(path, ContainerDocuments+"/"))
	if err != nil {
		t.Fatal(err)
	}
	name, err := url.PathUnescape(meta[esign.MetaManifest])
	if err != nil || name == "" {
		t.Fatalf("the PDF names manifest %q (%v)", meta[esign.MetaManifest], err)
	}
	return name
}

// TestSharedManifestOncePerFolder: two records of one folder write one manifest blob, named by
// its content in the folder, which both PDFs and documents name; a second renderer (another
// process) finds it by the create's conflict and names it too; no <pdf>.manifest.json is
// written; a signing session on a record's PDF reads it (manifestSource "rendered").
func TestSharedManifestOncePerFolder(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	r, blobs := f.shared(t)
	folder := uuid.NewString()
	var docs []*document.Document
	for i := range 2 {
		pkg, record, d := f.batchRecord(t, folder, "record "+strconv.Itoa(i+1)+".pdf")
		got, created, err := r.Produce(ctx, pkg, record, d)
		if err != nil || !created {
			t.Fatalf("record %d: created %t (%v)", i+1, created, err)
		}
		docs = append(docs, got)
	}
	puts, conflicts := blobs.manifestPuts()
	if len(puts) != 1 {
		t.Fatalf("manifest writes %v, want one blob written once", puts)
	}
	var name string
	for n, c := range puts {
		name = n
		if c != 1 || conflicts[n] != 0 {
			t.Fatalf("manifest %s written %d times, %d conflicts", n, c, conflicts[n])
		}
	}
	raw, meta, err := f.blobs.ReadAll(ctx, ContainerDocuments, name, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	sum := hexSum(raw)
	want := blobpath.TenantName(f.by.TenantID, "dispatch/", folder, "/", "manifest-"+sum[:32]+".json")
	if name != want || meta[metaManifestHash] != sum {
		t.Fatalf("manifest %s (metadata %v), want %s with its full hash", name, meta, want)
	}
	var m struct{ Fields []esign.ManifestField }
	if err := json.Unmarshal(raw, &m); err != nil || len(m.Fields) == 0 {
		t.Fatalf("manifest %s: %+v (%v)", raw, m, err)
	}
	for _, d := range docs {
		if got := f.pdfManifest(t, d.PDFBlobPath); got != want {
			t.Fatalf("%s names manifest %s, want %s", d.PDFBlobPath, got, want)
		}
		stored, err := f.docs.Load(ctx, f.by.TenantID, d.CorrelationID)
		if err != nil || d.ManifestPath != ContainerDocuments+"/"+want || stored.ManifestPath != d.ManifestPath {
			t.Fatalf("manifestPath %q, stored %+v (%v), want %s", d.ManifestPath, stored, err, want)
		}
		if _, err := f.blobs.Metadata(ctx, ContainerDocuments, strings.TrimPrefix(d.PDFBlobPath, ContainerDocuments+"/")+".manifest.json"); apperr.KindOf(err) != apperr.KindNotFound {
			t.Fatalf("a per-record manifest beside %s: %v", d.PDFBlobPath, err)
		}
	}

	again, blobs2 := f.shared(t)
	pkg, record, d := f.batchRecord(t, folder, "record 3.pdf")
	if _, _, err := again.Produce(ctx, pkg, record, d); err != nil {
		t.Fatal(err)
	}
	if puts, conflicts := blobs2.manifestPuts(); len(puts) != 1 || puts[want] != 1 || conflicts[want] != 1 {
		t.Fatalf("another process: manifest writes %v, conflicts %v, want one conflicting create of %s", puts, conflicts, want)
	}
	if got := f.pdfManifest(t, d.PDFBlobPath); got != want || d.ManifestPath != ContainerDocuments+"/"+want {
		t.Fatalf("another process's record names %s (manifestPath %s), want %s", got, d.ManifestPath, want)
	}
	if after, _, err := f.blobs.ReadAll(ctx, ContainerDocuments, want, 1<<20); err != nil || !bytes.Equal(after, raw) {
		t.Fatalf("the manifest changed (%v)", err)
	}

	var sg []esign.SignerRequest
	if err := json.Unmarshal([]byte(signers), &sg); err != nil {
		t.Fatal(err)
	}
	minutes := 60
	made, err := f.esign.Create(ctx, f.by.TenantID, f.by.Actor, esign.CreateRequest{CorrelationID: docs[1].CorrelationID,
		DocumentID: docs[1].DocumentID, DocType: "offer", PDFBlobPath: docs[1].PDFBlobPath, PDFHash: docs[1].PDFHash,
		SigningMode: esign.ModeParallel, ExpiresInMinutes: &minutes, Signers: sg})
	if err != nil {
		t.Fatal(err)
	}
	if made.Session.ManifestSource != esign.ManifestFromRendered || len(made.Session.Manifest) != len(m.Fields) {
		t.Fatalf("session manifest source %q with %d fields, want %q with %d", made.Session.ManifestSource,
			len(made.Session.Manifest), esign.ManifestFromRendered, len(m.Fields))
	}
}

// TestSharedManifestByContent: another manifest in the same folder is another blob; a blob at a
// manifest's name whose metadata says it is another content is refused (409 document_exists,
// left as it was, no PDF written naming it).
func TestSharedManifestByContent(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	r, _ := f.shared(t)
	folder := uuid.NewString()
	pkg, record, d := f.batchRecord(t, folder, "a.pdf")
	filled, err := stamp.FillOptions{Title: d.Title}.Fill(pkg.PDF, values(pkg, record))
	if err != nil || len(filled.Manifest) < 2 {
		t.Fatalf("fill: %d fields (%v)", len(filled.Manifest), err)
	}
	d.PDFHash, d.Pages = "sha256:"+hexSum(filled.PDF), filled.Pages
	if err := r.writeBlobs(ctx, d, filled); err != nil {
		t.Fatal(err)
	}
	_, _, other := f.batchRecord(t, folder, "b.pdf")
	fewer := filled
	fewer.Manifest = filled.Manifest[:1]
	other.PDFHash, other.Pages = d.PDFHash, d.Pages
	if err := r.writeBlobs(ctx, other, fewer); err != nil {
		t.Fatal(err)
	}
	if d.ManifestPath == other.ManifestPath || f.pdfManifest(t, other.PDFBlobPath) != strings.TrimPrefix(other.ManifestPath, ContainerDocuments+"/") {
		t.Fatalf("manifests %s and %s, want two (the second PDF naming its own)", d.ManifestPath, other.ManifestPath)
	}
	raw, _, err := f.blobs.ReadAll(ctx, ContainerDocuments, strings.TrimPrefix(other.ManifestPath, ContainerDocuments+"/"), 1<<20)
	var m struct{ Fields []esign.ManifestField }
	if err != nil || json.Unmarshal(raw, &m) != nil || len(m.Fields) != 1 {
		t.Fatalf("the second manifest %s (%v)", raw, err)
	}

	// a blob at the name a manifest would take, saying it is something else
	_, _, third := f.batchRecord(t, folder+"-x", "c.pdf")
	name, _, _ := r.manifestBlob(strings.TrimPrefix(third.PDFBlobPath, ContainerDocuments+"/"), third, raw)
	if _, err := f.blobs.Put(ctx, ContainerDocuments, name, bytes.NewReader([]byte(`{"fields":[]}`)), "application/json",
		map[string]string{metaManifestHash: "another"}); err != nil {
		t.Fatal(err)
	}
	third.PDFHash, third.Pages = d.PDFHash, d.Pages
	wantCode(t, r.writeBlobs(ctx, third, fewer), apperr.KindConflict, "document_exists")
	if got, meta, err := f.blobs.ReadAll(ctx, ContainerDocuments, name, 1<<20); err != nil || string(got) != `{"fields":[]}` || meta[metaManifestHash] != "another" {
		t.Fatalf("the other blob changed: %s %v (%v)", got, meta, err)
	}
	if _, err := f.blobs.Metadata(ctx, ContainerDocuments, strings.TrimPrefix(third.PDFBlobPath, ContainerDocuments+"/")); apperr.KindOf(err) != apperr.KindNotFound {
		t.Fatalf("a PDF naming the refused manifest: %v", err)
	}
}

// TestSharedManifestRetryAdopts: a record whose document row failed after its blobs is retried
// by the same renderer (its manifest known, not written again) and adopts its PDF; a record
// whose blobs an earlier renderer without SharedManifests wrote (a deployment before issue 26)
// keeps the <pdf>.manifest.json its PDF names.
func TestSharedManifestRetryAdopts(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	r, blobs := f.shared(t)
	folder := uuid.NewString()
	for _, c := range []struct {
		name   string
		shared bool // the crashed run's renderer had SharedManifests
	}{{"shared", true}, {"per document", false}} {
		t.Run(c.name, func(t *testing.T) {
			pkg, record, d := f.batchRecord(t, folder, c.name+".pdf")
			failing := *f.r
			if c.shared {
				failing = *r
			}
			failing.Store = &failingDocs{Store: f.docs, failCreate: true}
			if _, _, err := failing.Produce(ctx, pkg, record, d); err == nil {
				t.Fatal("the crashed run succeeded")
			}
			before, _ := blobs.manifestPuts()
			_, _, retry := f.batchRecord(t, folder, c.name+".pdf")
			retry.CorrelationID, retry.DocumentID, retry.RequestHash = d.CorrelationID, d.DocumentID, d.RequestHash
			got, created, err := r.Produce(ctx, pkg, record, retry)
			if err != nil || !created || got.PDFHash != d.PDFHash {
				t.Fatalf("retry: %+v created %t (%v), want the first run's %s", got, created, err, d.PDFHash)
			}
			if after, _ := blobs.manifestPuts(); sumOf(after) != sumOf(before) {
				t.Fatalf("the retry wrote the folder's known manifest again: %v -> %v", before, after)
			}
			want := f.pdfManifest(t, d.PDFBlobPath)
			if got.ManifestPath != ContainerDocuments+"/"+want || c.shared != strings.Contains(want, "/manifest-") {
				t.Fatalf("manifestPath %s, the adopted PDF names %s", got.ManifestPath, want)
			}
			stored, err := f.docs.Load(ctx, f.by.TenantID, d.CorrelationID)
			if err != nil || stored.ManifestPath != got.ManifestPath || stored.PDFHash != d.PDFHash {
				t.Fatalf("stored %+v (%v)", stored, err)
			}
		})
	}
}

func sumOf(m map[string]int) int {
	n := 0
	for _, c := range m {
		n += c
	}
	return n
}

// TestManifestNamesBounded: the set of known manifests starts again past its bound; a nil set
// knows none.
func TestManifestNamesBounded(t *testing.T) {
	var m ManifestNames
	for i := range maxManifestNames + 1 {
		m.add("n" + strconv.Itoa(i))
	}
	if len(m.known) > maxManifestNames || !m.has("n"+strconv.Itoa(maxManifestNames)) || m.has("n0") {
		t.Fatalf("%d names known", len(m.known))
	}
	var none *ManifestNames
	none.add("x")
	if none.has("x") {
		t.Fatal("a nil set knows a name")
	}
}
