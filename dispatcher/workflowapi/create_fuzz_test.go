package workflowapi

import (
	"cmp"
	"context"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/auth"
	"github.com/esign-svc/esign/shared/licence/licencetest"
	"github.com/esign-svc/esign/shared/template"
	"github.com/esign-svc/esign/shared/web"
	"github.com/esign-svc/esign/shared/webhook"
	"github.com/esign-svc/esign/shared/workflow"
)

// memBlobs is the templates container in memory: template.Blobs and workflow.SchemaBlobs.
type memBlobs map[string][]byte // "container/name" -> bytes

func (m memBlobs) ReadAll(_ context.Context, container, name string, limit int64) ([]byte, map[string]string, error) {
	b, ok := m[container+"/"+name]
	switch {
	case !ok:
		return nil, nil, apperr.ErrNotFound
	case int64(len(b)) > limit:
		return nil, nil, apperr.New(apperr.KindTooLarge, "too_large", "too large")
	}
	return b, nil, nil
}

func (m memBlobs) ETag(_ context.Context, container, name string) (string, error) {
	if _, ok := m[container+"/"+name]; !ok {
		return "", apperr.ErrNotFound
	}
	return `"1"`, nil
}

func (m memBlobs) ETags(_ context.Context, container, prefix string) (map[string]string, error) {
	out := map[string]string{}
	for k := range m {
		if name, ok := strings.CutPrefix(k, container+"/"); ok && strings.HasPrefix(name, prefix) {
			out[name] = `"1"`
		}
	}
	return out, nil
}

// FuzzCreate: any body of POST /api/workflow, decoded as the route decodes it and checked as it
// checks it before storing, is a workflow or a 400 naming the fields at fault, never a 5xx or
// a panic; a workflow taken is in progress (or, validated at once, past it) for the caller's tenant under the correlationId sent
// (trimmed, at most 200 characters; the generated NewID when none), its callbackUrl passes the policy, its recipients are at
// most 10 addresses, and each initialData value sits in its own field's step.
func FuzzCreate(f *testing.F) {
	schema, err := os.ReadFile("../../shared/workflow/testdata/flow.yaml")
	if err != nil {
		f.Fatal(err)
	}
	pdf := []byte("%PDF-1.7\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n")
	blobs := memBlobs{
		"templates/shared/flow/template.yaml": []byte("name: flow\nversion: 1\n"),
		"templates/shared/flow/template.pdf":  pdf,
		"templates/shared/flow/schema.yaml":   schema,
		// the legacy templateId names a folder of the caller's own: templates/<tenant>/<templateId>/
		"templates/tenant-1/flow/template.yaml": []byte("name: flow\nversion: 1\n"),
		"templates/tenant-1/flow/template.pdf":  pdf,
		"templates/tenant-1/flow/schema.yaml":   schema,
		"templates/shared/bare/template.yaml":   []byte("name: bare\nversion: 2\n"),
		"templates/shared/bare/template.pdf":    pdf,
		"templates/shared/schemas/alt.yaml":     []byte("steps:\n  - id: a\n    fields:\n      - {key: x, type: integer, min: 1}\nautoValidateOnCreate: true\n"),
		"templates/shared/schemas/bad.yaml":     []byte("steps: 3\n"),
	}
	a := &API{Templates: &template.Loader{Blobs: blobs}, Blobs: blobs, Callbacks: webhook.Policy{}, Licence: licencetest.New(f),
		NewID: func() string { return "wf-1" }}
	p := auth.Principal{Subject: "s", TenantID: "tenant-1", ObjectID: "oid-1"}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	seeds := []string{
		`{"templatePath":"templates/shared/flow/","correlationId":"wf-1","initialData":{"name":"Acme","spend":12.5},"callbackUrl":"https://example.com/cb"}`,
		`{"templateId":"flow","correlationId":"c","templateSettings":{"workflow":{"requireOtp":true,"recipients":[{"email":"a@example.com","displayName":"A"}],"organizationName":"Org","message":"Hi"}}}`,
		`{"templatePath":"templates/shared/bare/","correlationId":"c","templateSettings":{"workflow":{"schemaPath":"templates/shared/schemas/alt.yaml"}},"initialData":{"x":2}}`,
		`{"templatePath":"templates/shared/bare/","correlationId":"c","templateSettings":{"workflow":{"schemaPath":"templates/shared/schemas/alt.yaml"}},"initialData":{"x":0}}`,
		`{"templatePath":"templates/shared/bare/","correlationId":"c","templateSettings":{"workflow":{"schemaPath":"templates/shared/schemas/bad.yaml"}}}`,
		`{"templatePath":"templates/shared/bare/","correlationId":"c","templateSettings":{"workflow":{"schemaPath":"../x"}}}`,
		`{"templatePath":"templates/shared/bare/","correlationId":"c"}`,
		`{"templatePath":"templates/shared/flow/","options":{"documentId":"PO-1","docType":"po"}}`,
		`{"templateId":"templates/shared/flow/"}`,
		`{"templatePath":"templates/shared/flow/","templateId":"flow","correlationId":"c"}`,
		`{"templateId":"../flow","correlationId":"c"}`,
		`{"templatePath":"templates/shared/none.zip","correlationId":"c"}`,
		`{"templatePath":"templates/shared/flow/","correlationId":" c ","callbackUrl":"http://127.0.0.1/","initialData":{"nope":1,"spend":"x"}}`,
		`{"templatePath":"templates/shared/flow/","correlationId":"c","templateSettings":{"workflow":{"recipients":[{"email":"not an address"}]},"esign":{"enabled":true,"signers":[]}}}`,
		`{"templatePath":"templates/shared/flow/","correlationId":"c","templateSettings":{"delivery":{"enabled":true}}}`,
		`{"templatePath":"templates/shared/flow/","correlationId":"c","initialData":{"name":null}}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	for i, s := range []string{seeds[0], seeds[1], seeds[2]} { // taken, so the properties of a workflow are checked
		var req CreateRequest
		if err := web.DecodeJSONBytes([]byte(s), &req); err != nil {
			f.Fatalf("seed %d: %v", i, err)
		}
		if _, _, err := a.prepare(context.Background(), req, p, now); err != nil {
			f.Fatalf("seed %d: %v", i, err)
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var req CreateRequest
		err := web.DecodeJSONBytes(body, &req)
		var x *workflow.Workflow
		if err == nil {
			x, _, err = a.prepare(context.Background(), req, p, now)
		}
		if err != nil {
			e, ok := apperr.As(err)
			if !ok || e.Kind != apperr.KindInvalid || len(e.Fields) == 0 {
				t.Fatalf("err = %#v", err)
			}
			for _, fe := range e.Fields {
				if fe.Field == "" || fe.Message == "" {
					t.Fatalf("a problem naming no field: %#v", e)
				}
			}
			return
		}
		switch {
		case x.Tenant != p.TenantID || x.CreatedBy != p.CallerID():
			t.Fatalf("workflow of %q by %q", x.Tenant, x.CreatedBy)
		case x.CorrelationID != cmp.Or(req.CorrelationID, "wf-1") || strings.TrimSpace(x.CorrelationID) != x.CorrelationID ||
			x.CorrelationID == "" || utf8.RuneCountInString(x.CorrelationID) > MaxCorrelationID:
			t.Fatalf("took correlationId %q", x.CorrelationID)
		case x.State != workflow.StateInProgress && (req.InitialData == nil || x.State != workflow.StateValidationFailed &&
			x.State != workflow.StatePendingApproval && x.State != workflow.StateSealing):
			// only the schema's autoValidateOnCreate, with initialData, moves past in-progress
			t.Fatalf("created in %s", x.State)
		case len(x.Setup.Recipients) > MaxRecipients:
			t.Fatalf("%d recipients", len(x.Setup.Recipients))
		}
		if x.Setup.CallbackURL != "" {
			if _, err := a.Callbacks.CheckURL(x.Setup.CallbackURL); err != nil {
				t.Fatalf("took callbackUrl %q", x.Setup.CallbackURL)
			}
		}
		for _, r := range x.Setup.Recipients {
			if !validEmail(r.Email) {
				t.Fatalf("took recipient %q", r.Email)
			}
		}
		placed := 0
		for _, d := range x.Data {
			placed += len(d)
		}
		given := 0
		for _, v := range req.InitialData {
			if v != nil {
				given++
			}
		}
		if placed != given {
			t.Fatalf("%d initialData values, %d placed", given, placed)
		}
	})
}
