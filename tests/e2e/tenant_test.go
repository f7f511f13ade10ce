package e2e

import (
	"archive/zip"
	"bytes"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// tenantObjects are tenant A's objects of every kind a request can name: documents by path,
// templates by path, and sessions, deliveries, batches and workflows by id.
type tenantObjects struct {
	upload, uploadHash string // POST /api/documents
	render, renderHash string // POST /api/render (one record)
	renderCorr         string
	template           string // a private template package (ZIP) in templates/<A>/
	templateDir        string // the same as a folder package with a schema, for workflows
	sessionCorr        string // a live signing session
	groupID            string
	deliveryCorr       string // a live delivery
	deliveryID         string
	batchID            string // a batch pending approval
	workflowID         string // a workflow in progress
}

// makeTenantObjects creates one object of every kind as tenant A, through the routes.
func makeTenantObjects(t *testing.T) tenantObjects {
	t.Helper()
	var o tenantObjects
	up := uploadOwn(t, tenantA)
	o.upload, o.uploadHash = up.str("pdfBlobPath"), up.str("pdfHash")

	files := examplePackage(t)
	o.template = putTemplateBlob(t, tenantA+"/xt/"+uuid.NewString()+".zip", zipOf(t, files))
	files["schema.yaml"] = []byte(wfSchema)
	dir := tenantA + "/xt/" + uuid.NewString() + "/"
	for name, b := range files {
		putTemplateBlob(t, dir+name, b)
	}
	o.templateDir = "templates/" + dir

	body := renderBody(o.template, offerRecord())
	r := renderCall(t, tenantA, body)
	if r.Status != http.StatusCreated {
		t.Fatalf("A's render: %d %s", r.Status, r.Raw)
	}
	o.render, o.renderHash = r.str("pdfBlobPath"), r.str("pdfHash")
	o.renderCorr = body["options"].(map[string]any)["correlationId"].(string)
	if !strings.HasPrefix(o.render, "documents/"+tenantA+"/") {
		t.Fatalf("A's render is stored at %q, outside A's folder", o.render)
	}

	sb := sessionBodyFor(o.upload, o.uploadHash)
	s := createSession(t, tenantA, sb)
	o.sessionCorr, o.groupID = sb["correlationId"].(string), s.str("groupId")

	db := deliveryBodyFor(o.upload)
	d := call(t, "POST", svc.url("delivery"), db, bearer(svc.jwt(t, tenantA, "Esign.Initiator")))
	if d.Status != http.StatusCreated {
		t.Fatalf("A's delivery: %d %s", d.Status, d.Raw)
	}
	o.deliveryCorr = db["correlationId"].(string)
	list, _ := d.JSON["sessions"].([]any)
	if len(list) != 1 {
		t.Fatalf("A's delivery sessions: %s", d.Raw)
	}
	o.deliveryID, _ = list[0].(map[string]any)["deliveryId"].(string)

	alice := newPerson(t, tenantA, "alice", "Esign.Initiator")
	b := submitBatch(t, alice, batchBody(o.template, offers(2), true), http.StatusAccepted)
	o.batchID = b.str("batchId")

	o.workflowID = createWorkflow(t, tenantA, wfBody(o.templateDir)).ID
	return o
}

// uploadOwn uploads the template fixture through POST /api/documents as tenant and checks it is
// stored in tenant's own folder.
func uploadOwn(t *testing.T, tenant string) reply {
	t.Helper()
	pdf, err := os.ReadFile(filepath.Join("testdata", "template-3p.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	up := upload(t, tenant, pdf, nil)
	if up.Status != http.StatusCreated || !strings.HasPrefix(up.str("pdfBlobPath"), "documents/"+tenant+"/") {
		t.Fatalf("upload as %s: %d %s, want 201 in its own folder", tenant, up.Status, up.Raw)
	}
	return up
}

// sessionBodyFor is a one-signer create request for the document at path.
func sessionBodyFor(path, hash string) map[string]any {
	return map[string]any{"correlationId": "corr-" + uuid.NewString(), "documentId": "Contract 42", "docType": "contract",
		"pdfBlobPath": path, "pdfHash": hash, "signingMode": "single",
		"signers": []any{map[string]any{"slotIndex": 0, "role": "buyer", "email": email(0), "namePrefill": "Signer"}}}
}

// deliveryBodyFor is a one-recipient secure-email delivery of the document at path.
func deliveryBodyFor(path string) map[string]any {
	return map[string]any{"correlationId": "dlv-" + uuid.NewString(), "documentId": "DOC-7", "documentName": "Statement.pdf",
		"pdfBlobPath": path, "mode": "secure-email",
		"recipients": []any{map[string]any{"email": email(0), "name": "Recipient", "role": "reader"}}}
}

// elsewhere is path with its last segment's name replaced by a fresh one: the same folder, a
// blob that does not exist.
func elsewhere(path string) string {
	dir, name := path[:strings.LastIndex(path, "/")+1], path[strings.LastIndex(path, "/")+1:]
	ext := ""
	if i := strings.LastIndex(name, "."); i > 0 {
		ext = name[i:]
	}
	return dir + uuid.NewString() + ext
}

// crossCase is one request of tenant B naming one of tenant A's objects; missing is the same
// request naming an object that does not exist.
type crossCase struct {
	name            string
	theirs, missing func() reply
	// ids are the strings in which the two answers may differ (the id or path each named).
	ids []string
	// list: a query that answers 200 with an empty list for ids it does not know
	list bool
}

// TestCrossTenantRoutes walks every route that takes a blob path or reads a tenant's object as
// tenant B (holding every role) against tenant A's objects: every answer is a 4xx, and it is
// the same answer (status, code, fields, title, detail) as for an object that does not exist,
// so B learns nothing of A's. A's objects are unchanged afterwards, and B can use A's
// correlationId for its own render without meeting A.
func TestCrossTenantRoutes(t *testing.T) {
	t.Parallel()
	sealRequireTools(t)
	a := makeTenantObjects(t)
	bob := newPerson(t, tenantB, "bob", "Esign.Initiator", "Dispatch.Approver", "Workflow.Approver", "Service.Admin")
	as := func(method, path string, body any) func() reply {
		return func() reply { return call(t, method, svc.url(path), body, bob.h("Accept", "application/json")) }
	}
	ownUp := uploadOwn(t, tenantB)

	pathCases := []struct {
		name, route string
		body        func(path string) map[string]any
		path        string
	}{
		{"esign create on A's upload", "esign/session", func(p string) map[string]any { return sessionBodyFor(p, a.uploadHash) }, a.upload},
		{"esign create on A's render", "esign/session", func(p string) map[string]any { return sessionBodyFor(p, a.renderHash) }, a.render},
		{"esign create with A's template", "esign/session", func(p string) map[string]any {
			b := sessionBodyFor(ownUp.str("pdfBlobPath"), ownUp.str("pdfHash"))
			b["templatePath"] = p
			return b
		}, a.template},
		{"delivery create of A's upload", "delivery", deliveryBodyFor, a.upload},
		{"delivery create of A's render", "delivery", deliveryBodyFor, a.render},
		{"render with A's template", "render", func(p string) map[string]any { return renderBody(p, offerRecord()) }, a.template},
		{"batch with A's template", "render", func(p string) map[string]any { return batchBody(p, offers(2), true) }, a.template},
		{"workflow with A's template", "workflow", func(p string) map[string]any { return wfBody(p) }, a.templateDir},
		{"workflow with A's schema", "workflow", func(p string) map[string]any {
			b := wfBody(templateFolderOf(t, tenantB))
			b["templateSettings"].(map[string]any)["workflow"].(map[string]any)["schemaPath"] = p
			return b
		}, a.templateDir + "schema.yaml"},
	}
	var cases []crossCase
	for _, c := range pathCases {
		missing := elsewhere(c.path)
		if dir, ok := strings.CutSuffix(c.path, "/"); ok { // a folder package: a folder that is not there
			missing = elsewhere(dir) + "/"
		}
		cases = append(cases, crossCase{name: c.name,
			theirs:  as("POST", c.route, c.body(c.path)),
			missing: as("POST", c.route, c.body(missing)),
			ids:     []string{c.path, missing}})
	}

	// A's webhook subscription (on a closed local port: what the Events timer sends it fails at once)
	created := call(t, "POST", svc.url("webhooks"), map[string]any{"url": "http://127.0.0.1:9/a", "events": []string{"*"}},
		bearer(svc.jwt(t, tenantA, "Service.Admin")))
	if created.Status != http.StatusCreated {
		t.Fatalf("A's webhook: %d %s", created.Status, created.Raw)
	}
	remember("webhook secret", created.str("secret"))
	hook := created.str("id")
	defer call(t, "DELETE", svc.url("webhooks/"+hook), nil, bearer(svc.jwt(t, tenantA, "Service.Admin")))

	idCases := []struct {
		name, method, route string // route with {} where the id goes
		id                  string
		body                any
		list                bool
	}{
		{"session status", "GET", "esign/session/{}/status", a.sessionCorr, nil, false},
		{"session status by groupId", "GET", "esign/session/by-group/{}/status", a.groupID, nil, false},
		{"session resend", "POST", "esign/session/{}/resend-invite", a.sessionCorr, map[string]any{}, false},
		{"session cancel", "POST", "esign/session/{}/cancel", a.groupID, nil, false},
		{"session revoke", "POST", "esign/session/{}/revoke", a.groupID, nil, false},
		{"session seal retry", "POST", "esign/session/{}/seal/retry", a.groupID, nil, false},
		{"slot e-mail erasure", "DELETE", "esign/session/{}/slots/0/email", a.groupID, nil, false},
		{"delivery sessions", "GET", "delivery-sessions?correlationId={}", a.deliveryCorr, nil, true},
		{"delivery revoke", "POST", "delivery/{}/revoke", a.deliveryID, map[string]any{"reason": "test"}, false},
		{"batch", "GET", "dispatch/batch/{}", a.batchID, nil, false},
		{"batch records", "GET", "dispatch/batch/{}/records", a.batchID, nil, false},
		{"batch receipt", "GET", "dispatch/batch/{}/receipt", a.batchID, nil, false},
		{"batch decide", "POST", "dispatch/batch/{}/decide", a.batchID, map[string]any{"decision": "approve", "comments": "ok"}, false},
		{"batch cancel", "POST", "dispatch/batch/{}/cancel", a.batchID, map[string]any{"reason": "test"}, false},
		{"workflow status", "GET", "workflow/{}/status", a.workflowID, nil, false},
		{"workflow export", "GET", "workflow/{}/export?format=json", a.workflowID, nil, false},
		{"workflow approve", "POST", "workflow/{}/approve", a.workflowID, map[string]any{"comment": "ok"}, false},
		{"workflow reject", "POST", "workflow/{}/reject", a.workflowID, map[string]any{"comment": "no"}, false},
		{"workflow escalate", "POST", "workflow/{}/escalate", a.workflowID, map[string]any{}, false},
		{"workflow cancel", "POST", "workflow/{}/cancel", a.workflowID, map[string]any{}, false},
		{"workflow seal", "POST", "workflow/{}/seal", a.workflowID, map[string]any{"reason": "test"}, false},
		{"webhook", "GET", "webhooks/{}", hook, nil, false},
		{"webhook delete", "DELETE", "webhooks/{}", hook, nil, false},
		{"webhook rotate-secret", "POST", "webhooks/{}/rotate-secret", hook, nil, false},
		{"webhook deliveries", "GET", "webhooks/{}/deliveries", hook, nil, false},
		{"webhook ping", "POST", "webhooks/{}/ping", hook, nil, false},
	}
	for _, c := range idCases {
		missing := uuid.NewString()
		if strings.HasPrefix(c.id, "corr-") || strings.HasPrefix(c.id, "dlv-") {
			missing = c.id[:strings.Index(c.id, "-")+1] + uuid.NewString()
		}
		cases = append(cases, crossCase{name: c.name,
			theirs:  as(c.method, strings.Replace(c.route, "{}", url.PathEscape(c.id), 1), c.body),
			missing: as(c.method, strings.Replace(c.route, "{}", url.PathEscape(missing), 1), c.body),
			ids:     []string{c.id, missing}, list: c.list})
	}

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			theirs, missing := c.theirs(), c.missing()
			switch {
			case c.list && theirs.Status == http.StatusOK:
				if string(theirs.Raw) != string(missing.Raw) {
					t.Fatalf("B's query for A's id answers %s, for an unknown id %s", theirs.Raw, missing.Raw)
				}
				return
			case theirs.Status < 400 || theirs.Status >= 500:
				t.Fatalf("B naming A's object: %d %s", theirs.Status, theirs.Raw)
			}
			if got, want := answerOf(theirs, c.ids), answerOf(missing, c.ids); got != want {
				t.Fatalf("B naming A's object answers\n  %s\nbut naming nothing answers\n  %s", got, want)
			}
		})
	}

	// B's list of webhooks does not hold A's, and A's is as A left it.
	if l := call(t, "GET", svc.url("webhooks"), nil, bob.h()); l.Status != http.StatusOK || strings.Contains(string(l.Raw), hook) {
		t.Fatalf("B's webhook list: %d %s", l.Status, l.Raw)
	}
	if h := call(t, "GET", svc.url("webhooks/"+hook), nil, bearer(svc.jwt(t, tenantA, "Service.Admin"))); h.Status != http.StatusOK || h.str("state") != "active" {
		t.Fatalf("A's webhook after B's attempts: %d %s", h.Status, h.Raw)
	}

	// B's list of batches does not hold A's.
	if l := call(t, "GET", svc.url("dispatch/batch"), nil, bob.h()); l.Status != http.StatusOK || strings.Contains(string(l.Raw), a.batchID) {
		t.Fatalf("B's batch list: %d %s", l.Status, l.Raw)
	}

	// A's objects are as A left them.
	if st := status(t, tenantA, a.sessionCorr); st.Status != http.StatusOK || st.str("state") == "cancelled" {
		t.Fatalf("A's session after B's attempts: %d %s", st.Status, st.Raw)
	}
	alice := newPerson(t, tenantA, "alice", "Esign.Initiator")
	if b := call(t, "GET", svc.url("dispatch/batch/"+a.batchID), nil, alice.h()); b.str("state") != "pending-approval" {
		t.Fatalf("A's batch after B's attempts: %d %s", b.Status, b.Raw)
	}
	if w := call(t, "GET", svc.url("workflow/"+a.workflowID+"/status"), nil, alice.h()); w.Status != http.StatusOK || w.str("state") != "in-progress" {
		t.Fatalf("A's workflow after B's attempts: %d %s", w.Status, w.Raw)
	}
	for _, d := range deliverySessions(t, tenantA, a.deliveryCorr) {
		if d["state"] == "revoked" {
			t.Fatalf("A's delivery after B's attempts: %v", d)
		}
	}

	// correlationIds are per tenant: B renders under A's correlationId and gets its own document.
	own := renderBody(templateFolderOf(t, tenantB), offerRecord())
	own["options"].(map[string]any)["correlationId"] = a.renderCorr
	r := renderCall(t, tenantB, own)
	if r.Status != http.StatusCreated || !strings.HasPrefix(r.str("pdfBlobPath"), "documents/"+tenantB+"/") || r.str("pdfBlobPath") == a.render {
		t.Fatalf("B's render under A's correlationId: %d %s", r.Status, r.Raw)
	}
}

// templateFolderOf stores the sample package with the workflow schema as a folder in tenant's
// own templates folder and returns its path.
func templateFolderOf(t *testing.T, tenant string) string {
	t.Helper()
	files := examplePackage(t)
	files["schema.yaml"] = []byte(wfSchema)
	dir := tenant + "/xt/" + uuid.NewString() + "/"
	for name, b := range files {
		putTemplateBlob(t, dir+name, b)
	}
	return "templates/" + dir
}

// answerOf is what an answer tells its caller, with the ids and paths the request named taken
// out: status, code, fields, title and detail.
func answerOf(r reply, ids []string) string {
	s := func(k string) string {
		v := r.str(k)
		for _, id := range ids {
			v = strings.ReplaceAll(v, id, "<id>")
		}
		return v
	}
	return strings.Join([]string{http.StatusText(r.Status), s("code"), strings.Join(r.fields(), ","), s("title"), s("detail")}, " | ")
}

// zipOf is files as a ZIP template package.
func zipOf(t testing.TB, files map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, b := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
