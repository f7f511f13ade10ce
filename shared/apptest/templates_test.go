package apptest

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/esign-svc/esign/shared/template"
)

// The sample package, as a folder with an extra schema and as a ZIP, loads as the apps load
// it: the sample's name and PDF, the extra file in it, and each package in a place of its own.
func TestPackageLoads(t *testing.T) {
	e := New(t)
	ctx := context.Background()
	schema := []byte("steps:\n  - id: one\n    fields:\n      - { key: name, type: string }\n")
	dir := e.Package(map[string][]byte{template.FileSchema: schema})
	zip := e.PackageZip(nil)
	if !strings.HasPrefix(dir, template.Container+"/") || !strings.HasSuffix(dir, "/") || !strings.HasSuffix(zip, ".zip") || dir == e.Package(nil) {
		t.Fatalf("paths %q, %q", dir, zip)
	}
	loader := &template.Loader{Blobs: e.Blobs}
	for path, wantSchema := range map[string][]byte{dir: schema, zip: nil} {
		pkg, err := loader.Load(ctx, "templatePath", path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if pkg.Name != "Offer letter" || !bytes.Equal(pkg.PDF, SampleFile(t, template.FilePDF)) || !bytes.Equal(pkg.Schema, wantSchema) {
			t.Fatalf("%s: %q, %d PDF bytes, schema %q", path, pkg.Name, len(pkg.PDF), pkg.Schema)
		}
	}
	if got := e.Read(dir + template.FileSchema); !bytes.Equal(got, schema) {
		t.Fatalf("Read = %q", got)
	}
}
