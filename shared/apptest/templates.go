package apptest

import (
	"archive/zip"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/esign-svc/esign/shared/template"
)

// SampleFiles are the files of the sample template package (examples/offer) that the apps'
// tests render from.
var SampleFiles = []string{template.FileYAML, template.FilePDF}

// SampleFile is the named file of the sample template package, examples/offer.
func SampleFile(tb testing.TB, name string) []byte {
	tb.Helper()
	root, err := azuritetest.RepoRoot()
	if err != nil {
		tb.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "examples", "offer", name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// sample is the sample package's files with extra's added (or put in their place).
func sample(tb testing.TB, extra map[string][]byte) map[string][]byte {
	files := map[string][]byte{}
	for _, name := range SampleFiles {
		files[name] = SampleFile(tb, name)
	}
	for name, b := range extra {
		files[name] = b
	}
	return files
}

// Package puts the sample template package with extra's files (such as a schema.yaml) into a
// fresh folder of the templates container, which it creates, and returns the package's path:
// "templates/<folder>/".
func (e *Env) Package(extra map[string][]byte) string {
	e.tb.Helper()
	e.Containers(template.Container)
	dir := azuritetest.Name("pkg") + "/"
	for name, b := range sample(e.tb, extra) {
		e.Put(template.Container+"/"+dir+name, b)
	}
	return template.Container + "/" + dir
}

// PackageZip is Package as one ZIP blob: "templates/<name>.zip".
func (e *Env) PackageZip(extra map[string][]byte) string {
	e.tb.Helper()
	e.Containers(template.Container)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, b := range sample(e.tb, extra) {
		w, err := zw.Create(name)
		if err == nil {
			_, err = w.Write(b)
		}
		if err != nil {
			e.tb.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		e.tb.Fatal(err)
	}
	path := template.Container + "/" + azuritetest.Name("pkg") + ".zip"
	e.Put(path, buf.Bytes())
	return path
}

// Put writes b to the blob at path ("container/name"); the container must exist.
func (e *Env) Put(path string, b []byte) {
	e.tb.Helper()
	c, name, _ := strings.Cut(path, "/")
	if _, err := e.Blobs.Put(context.Background(), c, name, bytes.NewReader(b), "application/octet-stream", nil); err != nil {
		e.tb.Fatalf("put %s: %v", path, err)
	}
}

// Read is the blob at path ("container/name").
func (e *Env) Read(path string) []byte {
	e.tb.Helper()
	c, name, _ := strings.Cut(path, "/")
	b, _, err := e.Blobs.ReadAll(context.Background(), c, name, 64<<20)
	if err != nil {
		e.tb.Fatalf("%s: %v", path, err)
	}
	return b
}
