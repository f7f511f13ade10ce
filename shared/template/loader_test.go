package template_test

import (
	"archive/zip"
	"bytes"
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/azure/blobstore"
	"github.com/esign-svc/esign/shared/template"
)

var _ template.Blobs = (*blobstore.Store)(nil)

var pdf = []byte("%PDF-1.7\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n")

// counting counts the reads that go past the cache.
type counting struct {
	*blobstore.Store
	reads atomic.Int64
}

func (c *counting) ReadAll(ctx context.Context, container, name string, limit int64) ([]byte, map[string]string, error) {
	c.reads.Add(1)
	return c.Store.ReadAll(ctx, container, name, limit)
}

func zipOf(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, body := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func yamlV(v int) string {
	return "name: T\nversion: " + strconv.Itoa(v) + "\nfields: [{key: a, type: string}]\n"
}

func TestLoader(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	acct := azuritetest.Start(t).Account(t)
	store := blobstore.New(acct)
	if err := store.EnsureContainer(ctx, template.Container); err != nil {
		t.Fatal(err)
	}
	put := func(name string, body []byte) {
		t.Helper()
		if _, err := store.Put(ctx, template.Container, name, bytes.NewReader(body), "application/octet-stream", nil); err != nil {
			t.Fatal(err)
		}
	}
	blobs := &counting{Store: store}
	l := &template.Loader{Blobs: blobs}
	sampleYAML, err := os.ReadFile("../../examples/offer/template.yaml")
	if err != nil {
		t.Fatal(err)
	}

	t.Run("zip at its root, cached by ETag", func(t *testing.T) {
		put("offer.zip", zipOf(t, map[string]string{"template.yaml": string(sampleYAML), "template.pdf": string(pdf), "readme.txt": "x"}))
		pkg, err := l.Load(ctx, "templatePath", "templates/offer.zip")
		if err != nil {
			t.Fatal(err)
		}
		if pkg.Path != "templates/offer.zip" || pkg.ETag == "" || pkg.Name != "Offer letter" || !bytes.Equal(pkg.PDF, pdf) || len(pkg.Fields) != 10 {
			t.Fatalf("package = %s %s %s", pkg.Path, pkg.ETag, pkg.Name)
		}
		before := blobs.reads.Load()
		again, err := l.Load(ctx, "templatePath", "templates/offer.zip")
		if err != nil || again != pkg || blobs.reads.Load() != before {
			t.Errorf("second load: same=%v reads %d -> %d, %v", again == pkg, before, blobs.reads.Load(), err)
		}
		put("offer.zip", zipOf(t, map[string]string{"template.yaml": yamlV(2), "template.pdf": string(pdf)}))
		changed, err := l.Load(ctx, "templatePath", "templates/offer.zip")
		if err != nil || changed.Version != 2 || changed.ETag == pkg.ETag || blobs.reads.Load() != before+1 {
			t.Errorf("after a change: %+v, reads %d, %v", changed, blobs.reads.Load()-before, err)
		}
	})

	t.Run("zip with one top folder", func(t *testing.T) {
		put("nested.zip", zipOf(t, map[string]string{"nested/template.yaml": yamlV(3), "nested/template.pdf": string(pdf), "nested/schema.yaml": "steps: []\n"}))
		pkg, err := l.Load(ctx, "templatePath", "templates/nested.zip")
		if err != nil || pkg.Version != 3 || string(pkg.Schema) != "steps: []\n" {
			t.Fatalf("package = %+v, %v", pkg, err)
		}
	})

	t.Run("folder, cached by its blobs' ETags", func(t *testing.T) {
		put("folder/template.yaml", []byte(yamlV(1)))
		put("folder/template.pdf", pdf)
		put("folder/sub/template.yaml", []byte("not: read"))
		pkg, err := l.Load(ctx, "templatePath", "templates/folder")
		if err != nil {
			t.Fatal(err)
		}
		if pkg.Path != "templates/folder/" || pkg.Version != 1 || pkg.Schema != nil || !strings.Contains(pkg.ETag, "template.pdf=") {
			t.Fatalf("package = %s %s v%d", pkg.Path, pkg.ETag, pkg.Version)
		}
		before := blobs.reads.Load()
		again, err := l.Load(ctx, "templatePath", "templates/folder/")
		if err != nil || again != pkg || blobs.reads.Load() != before {
			t.Errorf("second load: same=%v, reads %d, %v", again == pkg, blobs.reads.Load()-before, err)
		}
		put("folder/template.yaml", []byte(yamlV(4)))
		put("folder/schema.yaml", []byte("steps: [a]\n"))
		changed, err := l.Load(ctx, "templatePath", "templates/folder/")
		if err != nil || changed.Version != 4 || string(changed.Schema) != "steps: [a]\n" {
			t.Errorf("after a change: %+v, %v", changed, err)
		}
	})

	put("broken.zip", zipOf(t, map[string]string{"template.yaml": "name: T\nversion: 1\ncolour: red\n", "template.pdf": string(pdf)}))
	put("notzip.zip", []byte("PK? no"))
	put("two.zip", zipOf(t, map[string]string{"a/template.yaml": yamlV(1), "a/template.pdf": string(pdf), "b/template.yaml": yamlV(1)}))
	put("nopdf.zip", zipOf(t, map[string]string{"template.yaml": yamlV(1)}))
	put("halffolder/template.yaml", []byte(yamlV(1)))
	cases := []struct{ path, code, msg string }{
		{"documents/offer.zip", "invalid_blob_path", "container must be one of: templates"},
		{"templates/../offer.zip", "invalid_blob_path", "must not contain '.' or '..' segments"},
		{"templates/missing.zip", template.CodeNotFound, "no template package at this path"},
		{"templates/missing", template.CodeNotFound, "no template package at this path"},
		{"templates/broken.zip", template.CodeInvalid, `template.yaml:3:1: unknown key "colour"`},
		{"templates/notzip.zip", template.CodeInvalid, "the package is not a ZIP file"},
		{"templates/two.zip", template.CodeInvalid, "the package holds more than one folder with a template.yaml"},
		{"templates/nopdf.zip", template.CodeInvalid, "the package holds no template.pdf"},
		{"templates/halffolder/", template.CodeInvalid, "the package holds no template.pdf"},
	}
	for _, c := range cases {
		_, err := l.Load(ctx, "options.templatePath", c.path)
		e, ok := apperr.As(err)
		if !ok || e.Kind != apperr.KindInvalid || e.Code != c.code || e.Fields[0].Field != "options.templatePath" || e.Fields[0].Message != c.msg {
			t.Errorf("%s: err = %v, want %s %q", c.path, err, c.code, c.msg)
		}
	}

	t.Run("concurrent loads share the cache", func(t *testing.T) {
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		for i := range 16 {
			wg.Go(func() {
				_, err := l.Load(ctx, "templatePath", []string{"templates/offer.zip", "templates/folder/", "templates/nested.zip", "templates/missing.zip"}[i%4])
				if i%4 == 3 && apperr.KindOf(err) == apperr.KindInvalid {
					err = nil
				}
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Error(err)
			}
		}
	})

	t.Run("the cache keeps the 64 most recently used", func(t *testing.T) {
		l := &template.Loader{Blobs: store}
		load := func(i int) {
			t.Helper()
			if _, err := l.Load(ctx, "templatePath", "templates/many/"+strconv.Itoa(i)+".zip"); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 66 {
			put("many/"+strconv.Itoa(i)+".zip", zipOf(t, map[string]string{"template.yaml": yamlV(1), "template.pdf": string(pdf)}))
		}
		for i := range 64 {
			load(i)
		}
		load(0) // used again: 1 and 2 are now the least recent
		load(64)
		load(65)
		paths := l.CachedPaths()
		if len(paths) != 64 || paths[0] != "templates/many/65.zip" || paths[2] != "templates/many/0.zip" || paths[63] != "templates/many/3.zip" {
			t.Errorf("cached %d: %s", len(paths), strings.Join(paths, " "))
		}
		for _, p := range paths {
			if p == "templates/many/1.zip" || p == "templates/many/2.zip" {
				t.Errorf("%s is still cached", p)
			}
		}
	})
}
