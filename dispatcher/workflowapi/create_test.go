package workflowapi

import (
	"archive/zip"
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/auth"
	"github.com/esign-svc/esign/shared/licence/licencetest"
	"github.com/esign-svc/esign/shared/template"
	"github.com/esign-svc/esign/shared/web"
	"github.com/esign-svc/esign/shared/webhook"
	"github.com/esign-svc/esign/shared/workflow"
)

// createFixture is an API over the templates container in memory, for prepare: packages of
// the shared folder and of tenant-1's own, folders and ZIPs, and the packages' own
// workflow.schemaPath in its forms.
func createFixture(t *testing.T) (*API, auth.Principal) {
	t.Helper()
	schema, err := os.ReadFile("../../shared/workflow/testdata/flow.yaml")
	if err != nil {
		t.Fatal(err)
	}
	alt := []byte("title: Alt\nsteps:\n  - id: a\n    fields:\n      - {key: x, type: integer, min: 1}\n")
	pdf := []byte("%PDF-1.7\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n")
	yaml := func(name, extra string) []byte { return []byte("name: " + name + "\nversion: 1\n" + extra) }
	zipOf := func(files map[string][]byte) []byte {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		for name, b := range files {
			w, err := zw.Create(name)
			if err != nil {
				t.Fatal(err)
			}
			w.Write(b)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	blobs := memBlobs{
		"templates/shared/flow/template.yaml":   yaml("flow", ""),
		"templates/shared/flow/template.pdf":    pdf,
		"templates/shared/flow/schema.yaml":     schema,
		"templates/tenant-1/flow/template.yaml": yaml("own", ""),
		"templates/tenant-1/flow/template.pdf":  pdf,
		"templates/tenant-1/flow/schema.yaml":   schema,
		"templates/tenant-2/flow/template.yaml": yaml("theirs", ""),
		"templates/tenant-2/flow/template.pdf":  pdf,
		"templates/tenant-2/flow/schema.yaml":   schema,
		"templates/tenant-1/flow.zip": zipOf(map[string][]byte{"template.yaml": yaml("zipped", ""),
			"template.pdf": pdf, "schema.yaml": schema}),
		"templates/shared/schemas/alt.yaml": alt,
		// workflow.schemaPath relative to the package (DESIGN 6a), inside it and outside it
		"templates/shared/rel/template.yaml":       yaml("rel", "workflow: { schemaPath: forms/alt.yaml }\n"),
		"templates/shared/rel/template.pdf":        pdf,
		"templates/shared/rel/forms/alt.yaml":      alt,
		"templates/shared/own/template.yaml":       yaml("own", "workflow: { schemaPath: schema.yaml }\n"),
		"templates/shared/own/template.pdf":        pdf,
		"templates/shared/own/schema.yaml":         schema,
		"templates/shared/escape/template.yaml":    yaml("escape", "workflow: { schemaPath: ../schemas/alt.yaml }\n"),
		"templates/shared/escape/template.pdf":     pdf,
		"templates/shared/rooted/template.yaml":    yaml("rooted", "workflow: { schemaPath: /schemas/alt.yaml }\n"),
		"templates/shared/rooted/template.pdf":     pdf,
		"templates/shared/blobpath/template.yaml":  yaml("blobpath", "workflow: { schemaPath: templates/shared/schemas/alt.yaml }\n"),
		"templates/shared/blobpath/template.pdf":   pdf,
		"templates/shared/otherblob/template.yaml": yaml("otherblob", "workflow: { schemaPath: templates/tenant-2/flow/schema.yaml }\n"),
		"templates/shared/otherblob/template.pdf":  pdf,
		"templates/shared/zipown.zip":              zipOf(map[string][]byte{"template.yaml": yaml("zipown", "workflow: { schemaPath: ./schema.yaml }\n"), "template.pdf": pdf, "schema.yaml": schema}),
		"templates/shared/zipother.zip":            zipOf(map[string][]byte{"template.yaml": yaml("zipother", "workflow: { schemaPath: forms/alt.yaml }\n"), "template.pdf": pdf, "schema.yaml": schema}),
	}
	a := &API{Templates: &template.Loader{Blobs: blobs}, Blobs: blobs, Callbacks: webhook.Policy{}, Licence: licencetest.New(t),
		NewID: uuid.NewString}
	return a, auth.Principal{Subject: "s", TenantID: "tenant-1", ObjectID: "oid-1"}
}

// prepareBody decodes body as the route does and runs prepare.
func prepareBody(t *testing.T, a *API, p auth.Principal, body string) (*workflow.Workflow, error) {
	t.Helper()
	var req CreateRequest
	if err := web.DecodeJSONBytes([]byte(body), &req); err != nil {
		return nil, err
	}
	x, _, err := a.prepare(context.Background(), req, p, time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	return x, err
}

// wantRefused checks a 400 of code naming field alone.
func wantRefused(t *testing.T, err error, code, field string) {
	t.Helper()
	e, ok := apperr.As(err)
	if !ok || e.Kind != apperr.KindInvalid || e.Code != code || len(e.Fields) != 1 || e.Fields[0].Field != field {
		t.Fatalf("err = %#v, want 400 %s naming %s", err, code, field)
	}
}

// A create without a correlationId gets a generated UUID, a new one each time (spec 001
// "Workflow instance": caller-supplied or auto-generated; it used to be 400 "is required"); a
// given one is kept; a blank or padded one is refused.
func TestCreateCorrelationIDOptional(t *testing.T) {
	t.Parallel()
	a, p := createFixture(t)
	x, err := prepareBody(t, a, p, `{"templatePath":"templates/shared/flow/"}`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := uuid.Parse(x.CorrelationID); err != nil || x.CorrelationID == x.ID {
		t.Fatalf("generated correlationId %q (workflow %q)", x.CorrelationID, x.ID)
	}
	y, err := prepareBody(t, a, p, `{"templatePath":"templates/shared/flow/"}`)
	if err != nil || y.CorrelationID == x.CorrelationID {
		t.Fatalf("second create: %q, %v", y.CorrelationID, err)
	}
	if z, err := prepareBody(t, a, p, `{"templatePath":"templates/shared/flow/","correlationId":"order-7"}`); err != nil || z.CorrelationID != "order-7" {
		t.Fatalf("given correlationId: %v %v", z, err)
	}
	for _, c := range []string{`" "`, `" order-7"`, `"` + strings.Repeat("c", MaxCorrelationID+1) + `"`} {
		_, err := prepareBody(t, a, p, `{"templatePath":"templates/shared/flow/","correlationId":`+c+`}`)
		wantRefused(t, err, apperr.CodeInvalidRequest, "correlationId")
	}
}

// options.documentId and .docType (conformance D-145; 400 unknown_field before) are the
// workflow's: its Document, and the auto-triggered signing session's documentId and docType;
// checked as the e-sign create checks its own, named under options.
func TestCreateOptions(t *testing.T) {
	t.Parallel()
	a, p := createFixture(t)
	esign := `"templateSettings":{"esign":{"enabled":true,"signers":[{"slotIndex":0,"role":"buyer","email":"b@example.com"}]}}`
	x, err := prepareBody(t, a, p, `{"templatePath":"templates/shared/flow/","options":{"documentId":"PO-1001","docType":"purchase-order"},`+esign+`}`)
	if err != nil {
		t.Fatal(err)
	}
	if id, typ := x.Document(); id != "PO-1001" || typ != "purchase-order" {
		t.Fatalf("Document() = %q, %q", id, typ)
	}
	tr, _, err := workflow.PlanTrigger(x)
	if err != nil || tr.ESign == nil || tr.ESign.DocumentID != "PO-1001" || tr.ESign.DocType != "purchase-order" {
		t.Fatalf("trigger %+v, %v", tr.ESign, err)
	}
	// without options: the workflow id and docType "workflow", as before
	y, err := prepareBody(t, a, p, `{"templatePath":"templates/shared/flow/",`+esign+`}`)
	if err != nil {
		t.Fatal(err)
	}
	if id, typ := y.Document(); id != y.ID || typ != workflow.DocType {
		t.Fatalf("default Document() = %q, %q", id, typ)
	}
	for _, c := range []struct{ options, field string }{
		{`{"documentId":"` + strings.Repeat("d", 257) + `"}`, "options.documentId"},
		{`{"docType":"` + strings.Repeat("t", 129) + `"}`, "options.docType"},
		{`{"documentId":"a\nb"}`, "options.documentId"},
		{`{"docType":"   "}`, "options.docType"},
	} {
		_, err := prepareBody(t, a, p, `{"templatePath":"templates/shared/flow/","options":`+c.options+`}`)
		wantRefused(t, err, apperr.CodeInvalidRequest, c.field)
	}
	_, err = prepareBody(t, a, p, `{"templatePath":"templates/shared/flow/","options":{"title":"x"}}`)
	wantRefused(t, err, web.CodeUnknownField, "options.title")
}

// templateId is an alias of templatePath (conformance D-137): any templatePath value, confined
// alike; a bare name is still the caller's folder templates/<tenant>/<name>/; both given must
// name one package.
func TestCreateTemplateIDAlias(t *testing.T) {
	t.Parallel()
	a, p := createFixture(t)
	for body, want := range map[string]string{
		`{"templateId":"templates/shared/flow/"}`:                                        "templates/shared/flow/",
		`{"templateId":"templates/shared/flow"}`:                                         "templates/shared/flow/",
		`{"templateId":"templates/tenant-1/flow.zip"}`:                                   "templates/tenant-1/flow.zip",
		`{"templateId":"flow"}`:                                                          "templates/tenant-1/flow/",
		`{"templateId":"flow","templatePath":"templates/tenant-1/flow/"}`:                "templates/tenant-1/flow/",
		`{"templateId":"templates/shared/flow","templatePath":"templates/shared/flow/"}`: "templates/shared/flow/",
	} {
		x, err := prepareBody(t, a, p, body)
		if err != nil || x.TemplatePath != want {
			t.Fatalf("%s: %v %v, want %s", body, x, err, want)
		}
	}
	for body, code := range map[string]string{
		`{"templateId":"templates/tenant-2/flow/"}`:                                         "invalid_blob_path",
		`{"templateId":"signed/tenant-1/flow.zip"}`:                                         "invalid_blob_path",
		`{"templateId":"templates/shared/none/"}`:                                           template.CodeNotFound,
		`{"templateId":"../flow"}`:                                                          "invalid_blob_path",
		`{"templateId":".flow"}`:                                                            apperr.CodeInvalidRequest,
		`{"templateId":"flow","templatePath":"templates/shared/flow/"}`:                     apperr.CodeInvalidRequest,
		`{"templateId":"templates/shared/flow/","templatePath":"templates/tenant-1/flow/"}`: apperr.CodeInvalidRequest,
	} {
		_, err := prepareBody(t, a, p, body)
		wantRefused(t, err, code, "templateId")
	}
}

// A package's own workflow.schemaPath is relative to the package (DESIGN 6a's
// `schemaPath: schema.yaml`; read before as a blob path, so refused); a templates/ value is
// still a blob path, confined; one leaving the package is refused naming the package's field;
// a request's schemaPath stays a blob path.
func TestCreatePackageSchemaPath(t *testing.T) {
	t.Parallel()
	a, p := createFixture(t)
	for pkg, want := range map[string]struct{ path, title string }{
		"templates/shared/rel/":       {"templates/shared/rel/forms/alt.yaml", "Alt"},
		"templates/shared/own/":       {"templates/shared/own/schema.yaml", "Flow"},
		"templates/shared/blobpath/":  {"templates/shared/schemas/alt.yaml", "Alt"},
		"templates/shared/zipown.zip": {"", "Flow"},
	} {
		x, err := prepareBody(t, a, p, `{"templatePath":"`+pkg+`"}`)
		if err != nil || x.Setup.SchemaPath != want.path || x.Setup.Title != want.title {
			t.Fatalf("%s: %+v %v, want %+v", pkg, x, err, want)
		}
	}
	for pkg, c := range map[string]struct{ code, field string }{
		"templates/shared/escape/":      {template.CodeInvalid, "templatePath"},
		"templates/shared/rooted/":      {template.CodeInvalid, "templatePath"},
		"templates/shared/zipother.zip": {template.CodeInvalid, "templatePath"},
		"templates/shared/otherblob/":   {"invalid_blob_path", "templateSettings.workflow.schemaPath"},
	} {
		_, err := prepareBody(t, a, p, `{"templatePath":"`+pkg+`"}`)
		wantRefused(t, err, c.code, c.field)
	}
	_, err := prepareBody(t, a, p, `{"templateId":"templates/shared/escape/"}`)
	wantRefused(t, err, template.CodeInvalid, "templateId")
	// the request's own schemaPath is a blob path: it overrides the package's, and a relative
	// one is no blob path
	x, err := prepareBody(t, a, p, `{"templatePath":"templates/shared/escape/","templateSettings":{"workflow":{"schemaPath":"templates/shared/schemas/alt.yaml"}}}`)
	if err != nil || x.Setup.SchemaPath != "templates/shared/schemas/alt.yaml" {
		t.Fatalf("request schemaPath: %+v %v", x, err)
	}
	_, err = prepareBody(t, a, p, `{"templatePath":"templates/shared/flow/","templateSettings":{"workflow":{"schemaPath":"forms/alt.yaml"}}}`)
	wantRefused(t, err, "invalid_blob_path", "templateSettings.workflow.schemaPath")
}
