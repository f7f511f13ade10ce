package esign

import (
	"context"
	"os"
	"testing"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/template"
)

// loads is a Templates that answers one package or one error, counting the loads.
type loads struct {
	pkg   *template.Package
	err   error
	calls int
}

func (l *loads) Load(_ context.Context, field, _ string) (*template.Package, error) {
	l.calls++
	if field != "templatePath" {
		return nil, apperr.Invalid("wrong_field", apperr.Field(field, "the Creator names templatePath"))
	}
	return l.pkg, l.err
}

func TestTemplateManifestReadsThePackagesPDF(t *testing.T) {
	t.Parallel()
	pdf, err := os.ReadFile("../../tests/e2e/testdata/template-3p.pdf")
	if err != nil {
		t.Fatal(err)
	}
	pkg, err := template.Parse("templatePath", map[string][]byte{template.FileYAML: []byte("name: t\nversion: 1\n"), template.FilePDF: pdf})
	if err != nil {
		t.Fatal(err)
	}
	src := &loads{pkg: pkg}
	c := &Creator{Templates: src}
	for range 2 {
		m, err := c.templateManifest(context.Background(), "templates/t.zip")
		if err != nil {
			t.Fatal(err)
		}
		roles := map[string]int{}
		for _, f := range m {
			roles[f.Role]++
		}
		if len(m) != 6 || roles["buyer"] != 3 || roles["seller"] != 3 {
			t.Errorf("manifest = %+v", m)
		}
	}
	if _, cached := c.fields.get(pkg.PDFHash); !cached || src.calls != 2 {
		t.Errorf("cached %v after %d loads", cached, src.calls)
	}

	notFound := apperr.Invalid(template.CodeNotFound, apperr.Field("templatePath", "no template package at this path"))
	if _, err := (&Creator{Templates: &loads{err: notFound}}).templateManifest(context.Background(), "templates/x.zip"); err != notFound {
		t.Errorf("err = %v, want the loader's", err)
	}
	broken, err := template.Parse("templatePath", map[string][]byte{template.FileYAML: []byte("name: t\nversion: 1\n"), template.FilePDF: []byte("%PDF-1.7 but nothing else")})
	if err != nil {
		t.Fatal(err)
	}
	_, err = (&Creator{Templates: &loads{pkg: broken}}).templateManifest(context.Background(), "templates/x.zip")
	if e, ok := apperr.As(err); !ok || e.Code != "pdf_unreadable" || e.Fields[0].Field != "templatePath" {
		t.Errorf("err = %v, want pdf_unreadable on templatePath", err)
	}
	if _, err := (&Creator{}).templateManifest(context.Background(), "templates/x.zip"); err == nil || apperr.KindOf(err) != apperr.KindInternal {
		t.Errorf("without Templates: %v", err)
	}
}
