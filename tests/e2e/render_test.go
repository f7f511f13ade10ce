package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/document/documentstore"
)

// examplePackage reads the sample template package's files (examples/offer).
func examplePackage(t testing.TB) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	for _, name := range []string{"template.yaml", "template.pdf"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "examples", "offer", name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = b
	}
	return files
}

// uploadPackage stores files as a ZIP package templates/shared/e2e/<uuid>.zip (the operator's
// packages, open to every tenant) and returns its path.
func uploadPackage(t testing.TB, files map[string][]byte) string {
	t.Helper()
	return putTemplateBlob(t, "shared/e2e/"+uuid.NewString()+".zip", zipOf(t, files))
}

// uploadFolderPackage stores files as a blob folder templates/shared/e2e/<uuid>/ and returns its
// path.
func uploadFolderPackage(t testing.TB, files map[string][]byte) string {
	t.Helper()
	dir := "shared/e2e/" + uuid.NewString() + "/"
	for name, b := range files {
		putTemplateBlob(t, dir+name, b)
	}
	return "templates/" + dir
}

func putTemplateBlob(t testing.TB, name string, b []byte) string {
	t.Helper()
	st := blobs(t)
	ctx := context.Background()
	if err := st.EnsureContainer(ctx, "templates"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Put(ctx, "templates", name, bytes.NewReader(b), "application/octet-stream", nil); err != nil {
		t.Fatal(err)
	}
	return "templates/" + name
}

// offerRecord is a valid record of the sample package, starting in a month.
func offerRecord() map[string]any {
	return map[string]any{
		"employeeName": "Zoë Ελένη Юлия", "employeeEmail": email(1), "position": "Engineer",
		"salary": 72000.5, "currency": "EUR", "startDate": time.Now().AddDate(0, 1, 0).Format("2006-01-02"),
		"remote": true, "notes": "Works remotely on Fridays.", "managerName": "Sam Lead",
	}
}

func renderCall(t testing.TB, tenant string, body map[string]any) reply {
	t.Helper()
	return call(t, "POST", svc.url("render"), body, bearer(svc.jwt(t, tenant, "Esign.Initiator")))
}

func renderBody(pkg string, record map[string]any) map[string]any {
	return map[string]any{"templatePath": pkg, "options": map[string]any{"correlationId": "render-" + uuid.NewString(),
		"generatedBy": "e2e", "sourceSystem": "tests"}, "dataSource": record}
}

// TestRenderOneRecord renders a record of the sample package and checks the stored PDF: its
// bytes hash to pdfHash, its text holds the record's values (Latin, Greek, Cyrillic), its
// manifest lies beside it, and document.rendered is in the document's trail. A retry with the
// same request is 200 with the same document; another record under the correlationId is 409.
func TestRenderOneRecord(t *testing.T) {
	t.Parallel()
	sealRequireTools(t)
	files := examplePackage(t)
	for _, pkg := range []struct{ name, path string }{
		{"zip", uploadPackage(t, files)}, {"folder", uploadFolderPackage(t, files)},
	} {
		t.Run(pkg.name, func(t *testing.T) {
			t.Parallel()
			body := renderBody(pkg.path, offerRecord())
			r := renderCall(t, tenantA, body)
			if r.Status != http.StatusCreated {
				t.Fatalf("render: %d %s", r.Status, r.Raw)
			}
			corr := body["options"].(map[string]any)["correlationId"].(string)
			if got, want := r.str("pdfBlobPath"), "documents/"+tenantA+"/rendered/"+corr+".pdf"; got != want {
				t.Fatalf("pdfBlobPath %q, want %q", got, want)
			}
			pdf, props := sealDownload(t, r.str("pdfBlobPath"))
			sum := sha256.Sum256(pdf)
			if got := "sha256:" + hex.EncodeToString(sum[:]); got != r.str("pdfHash") {
				t.Fatalf("stored PDF hashes to %s, answer says %s", got, r.str("pdfHash"))
			}
			if props.Metadata["esignmanifest"] == "" {
				t.Fatalf("the rendered PDF names no manifest: %v", props.Metadata)
			}
			man, _ := sealDownload(t, "documents/"+props.Metadata["esignmanifest"])
			var m struct {
				Fields []struct{ Name, Role string } `json:"fields"`
			}
			if err := json.Unmarshal(man, &m); err != nil || len(m.Fields) == 0 {
				t.Fatalf("manifest %s: %v", man, err)
			}
			text := pdfText(t, pdf)
			for _, want := range []string{"Zoë", "Ελένη", "Юлия", "Engineer", "72000.5", "Sam Lead"} {
				if !strings.Contains(text, want) {
					t.Fatalf("rendered text lacks %q:\n%s", want, text)
				}
			}
			if out, err := sealRun("qpdf", "--check", sealWriteTemp(t, t.TempDir(), "r.pdf", pdf)); err != nil {
				t.Fatalf("qpdf --check: %v\n%s", err, out)
			}
			if r.JSON["pages"].(float64) != 3 {
				t.Fatalf("pages %v", r.JSON["pages"])
			}
			if w, _ := r.JSON["warnings"].([]any); len(w) != 0 {
				t.Fatalf("warnings for a future start: %s", r.Raw)
			}
			evs := documentEvents(t, tenantA, corr)
			if len(evs) != 1 || evs[0] != "document.rendered" {
				t.Fatalf("document trail %v", evs)
			}

			again := renderCall(t, tenantA, body)
			if again.Status != http.StatusOK || again.str("pdfHash") != r.str("pdfHash") {
				t.Fatalf("retry: %d %s", again.Status, again.Raw)
			}
			other := renderBody(pkg.path, offerRecord())
			other["options"] = body["options"]
			other["dataSource"].(map[string]any)["position"] = "Manager"
			if c := renderCall(t, tenantA, other); c.Status != http.StatusConflict || c.code() != "document_exists" {
				t.Fatalf("another record under the correlationId: %d %s", c.Status, c.Raw)
			}
			// correlationIds are per tenant (DESIGN 14): tenant B renders under tenant A's
			// correlationId on its own (a 409 here told B that A used the id), into its own
			// folder, and each reads back its own document.
			otherRecord := renderBody(pkg.path, offerRecord())
			otherRecord["options"] = body["options"]
			otherRecord["dataSource"].(map[string]any)["position"] = "Director"
			b := renderCall(t, tenantB, otherRecord)
			if b.Status != http.StatusCreated {
				t.Fatalf("another tenant under the correlationId: %d %s", b.Status, b.Raw)
			}
			if got, want := b.str("pdfBlobPath"), "documents/"+tenantB+"/rendered/"+corr+".pdf"; got != want || b.str("pdfHash") == r.str("pdfHash") {
				t.Fatalf("tenant B's render: %s (hash %s), want %s, a document of its own", got, b.str("pdfHash"), want)
			}
			if evs := documentEvents(t, tenantB, corr); len(evs) != 1 || evs[0] != "document.rendered" {
				t.Fatalf("tenant B's document trail %v", evs)
			}
			if again := renderCall(t, tenantA, body); again.Status != http.StatusOK || again.str("pdfHash") != r.str("pdfHash") ||
				again.str("pdfBlobPath") != r.str("pdfBlobPath") {
				t.Fatalf("tenant A's document after tenant B's render: %d %s", again.Status, again.Raw)
			}
			if evs := documentEvents(t, tenantA, corr); len(evs) != 1 {
				t.Fatalf("tenant A's document trail after tenant B's render %v", evs)
			}
		})
	}
}

// TestRenderWarningsDoNotBlock renders a record whose start date is in the past: the warning
// rule fails, the document is still rendered, and the warning is in the answer.
func TestRenderWarningsDoNotBlock(t *testing.T) {
	t.Parallel()
	rec := offerRecord()
	rec["startDate"] = "2020-01-15"
	r := renderCall(t, tenantA, renderBody(uploadPackage(t, examplePackage(t)), rec))
	if r.Status != http.StatusCreated {
		t.Fatalf("render: %d %s", r.Status, r.Raw)
	}
	ws, _ := r.JSON["warnings"].([]any)
	found := false
	for _, w := range ws {
		m := w.(map[string]any)
		if m["ruleId"] == "start-in-future" && m["severity"] == "warning" && m["fieldKey"] == "startDate" {
			found = true
		}
	}
	if !found {
		t.Fatalf("no start-in-future warning: %s", r.Raw)
	}
}

// TestRenderRefusals checks every refusal of a render: 400 naming the field (and the rule) at
// fault, nothing stored.
func TestRenderRefusals(t *testing.T) {
	t.Parallel()
	files := examplePackage(t)
	pkg := uploadPackage(t, files)
	broken := map[string][]byte{"template.pdf": files["template.pdf"],
		"template.yaml": []byte("name: Broken\nversion: 1\nfields:\n  - key: a\n    type: string\n    colour: red\n")}
	brokenPkg := uploadPackage(t, broken)
	badYAML := map[string][]byte{"template.pdf": files["template.pdf"], "template.yaml": []byte("name: Broken\nversion: 1\nfields: [\n")}
	badYAMLPkg := uploadPackage(t, badYAML)
	with := func(k string, v any) map[string]any {
		rec := offerRecord()
		if v == nil {
			delete(rec, k)
		} else {
			rec[k] = v
		}
		return rec
	}
	for _, c := range []struct {
		name, path string
		record     map[string]any
		code       string
		field      string
		ruleID     string
		detail     string
	}{
		{"missing required field", pkg, with("employeeName", nil), "record_invalid", "dataSource.employeeName", "field.required", ""},
		{"wrong type", pkg, with("salary", "a lot"), "record_invalid", "dataSource.salary", "field.type", ""},
		{"not an e-mail address", pkg, with("employeeEmail", "nobody"), "record_invalid", "dataSource.employeeEmail", "", ""},
		{"pattern", pkg, with("managerName", "Sam 2"), "record_invalid", "dataSource.managerName", "field.pattern", ""},
		{"too long", pkg, with("position", strings.Repeat("x", 81)), "record_invalid", "dataSource.position", "field.maxLength", ""},
		{"not an option", pkg, with("currency", "XYZ"), "record_invalid", "dataSource.currency", "", ""},
		{"extra key", pkg, with("colour", "red"), "record_invalid", "dataSource.colour", "field.unknown", ""},
		{"failing error rule", pkg, with("salary", 2000000), "record_invalid", "dataSource.salary", "salary-cap", ""},
		{"unknown key in template.yaml", brokenPkg, offerRecord(), "template_invalid", "templatePath", "", "template.yaml:6"},
		{"broken YAML", badYAMLPkg, offerRecord(), "template_invalid", "templatePath", "", "template.yaml:3"},
		{"unknown template", "templates/shared/e2e/" + uuid.NewString() + ".zip", offerRecord(), "template_not_found", "templatePath", "", ""},
		{"outside templates", "documents/e2e/offer.zip", offerRecord(), "invalid_blob_path", "templatePath", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			body := renderBody(c.path, c.record)
			r := renderCall(t, tenantA, body)
			if r.Status != http.StatusBadRequest || r.code() != c.code {
				t.Fatalf("%d %s, want 400 %s", r.Status, r.Raw, c.code)
			}
			errs, _ := r.JSON["errors"].([]any)
			ok := false
			for _, e := range errs {
				m := e.(map[string]any)
				if m["field"] == c.field && (c.ruleID == "" || m["ruleId"] == c.ruleID) &&
					(c.detail == "" || strings.Contains(m["message"].(string), c.detail)) {
					ok = true
				}
			}
			if !ok {
				t.Fatalf("no error naming %s (rule %q, %q): %s", c.field, c.ruleID, c.detail, r.Raw)
			}
			corr := body["options"].(map[string]any)["correlationId"].(string)
			if ok, err := blobs(t).Exists(context.Background(), "documents", tenantA+"/rendered/"+corr+".pdf"); err != nil || ok {
				t.Fatalf("a refused render stored its PDF (%v)", err)
			}
		})
	}
	t.Run("an array without dispatch asked for", func(t *testing.T) {
		t.Parallel()
		body := renderBody(pkg, nil)
		body["dataSource"] = []any{offerRecord()}
		if r := renderCall(t, tenantA, body); r.Status != http.StatusBadRequest || r.code() != "dispatch_required" {
			t.Fatalf("%d %s", r.Status, r.Raw)
		}
	})
	t.Run("no initiator role", func(t *testing.T) {
		t.Parallel()
		r := call(t, "POST", svc.url("render"), renderBody(pkg, offerRecord()), bearer(svc.jwt(t, tenantA, "Dispatch.Approver")))
		if r.Status != http.StatusForbidden {
			t.Fatalf("%d %s", r.Status, r.Raw)
		}
	})
}

// pdfText is pdftotext's text of pdf.
func pdfText(t *testing.T, pdf []byte) string {
	t.Helper()
	out, err := exec.Command("pdftotext", "-layout", sealWriteTemp(t, t.TempDir(), "t.pdf", pdf), "-").Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	return string(out)
}

// documentEvents are the kinds of a rendered document's audit rows, in order.
func documentEvents(t *testing.T, tenant, corr string) []string {
	t.Helper()
	acct, err := azconn.New(azconn.Config{ConnectionString: svc.azurite.ConnectionString()})
	if err != nil {
		t.Fatal(err)
	}
	st, err := documentstore.New(acct, documentstore.TableDocuments)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := st.Events(context.Background(), tenant, corr)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs {
		out = append(out, e.Kind)
	}
	return out
}
