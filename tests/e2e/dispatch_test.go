package e2e

import (
	"crypto/sha256"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/devtools/devkeys"
)

// person is a caller of a tenant with an identity of their own (oid) and an address
// (preferred_username), as `make token SUB=<name>` mints them.
type person struct {
	oid, token string
}

func newPerson(t testing.TB, tenant, name string, roles ...string) person {
	t.Helper()
	sub := name + "-" + uuid.NewString()[:8]
	h := sha256.Sum256([]byte(tenant + "\x00" + sub))
	oid := fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
	tok, err := devkeys.MintFromDir(svc.keysDir, devkeys.TokenOptions{Tenant: tenant, Roles: roles, Subject: sub, ObjectID: oid})
	if err != nil {
		t.Fatal(err)
	}
	remember("JWT", tok)
	remember("e-mail address", sub+"@dev.example.test")
	return person{oid: oid, token: tok}
}

func (p person) h(extra ...string) map[string]string {
	m := bearer(p.token)
	for i := 0; i+1 < len(extra); i += 2 {
		m[extra[i]] = extra[i+1]
	}
	return m
}

// batchBody is a batch of records of the sample package; approval asks for pending-approval.
func batchBody(pkg string, records []map[string]any, approval bool) map[string]any {
	body := renderBody(pkg, nil)
	body["dataSource"] = records
	body["options"].(map[string]any)["correlationId"] = "batch-" + uuid.NewString()
	body["options"].(map[string]any)["documentIdTemplate"] = "OFFER-{{position}}-{{salary}}"
	if approval {
		body["templateSettings"] = map[string]any{"distribution": map[string]any{"enabled": true, "requireApproval": true,
			"approversEmail": []string{email(90)}}}
	} else {
		body["features"] = map[string]any{"dispatch": true}
	}
	return body
}

func offers(n int) []map[string]any {
	out := make([]map[string]any, n)
	for i := range out {
		out[i] = offerRecord()
		out[i]["salary"] = 50000 + i
	}
	return out
}

func submitBatch(t *testing.T, by person, body map[string]any, status int) reply {
	t.Helper()
	r := call(t, "POST", svc.url("render"), body, by.h("Accept", "application/json"))
	if r.Status != status {
		t.Fatalf("submit: %d %s, want %d", r.Status, r.Raw, status)
	}
	return r
}

func decide(t *testing.T, by person, batchID, decision, comments string) reply {
	t.Helper()
	return call(t, "POST", svc.url("dispatch/batch/"+batchID+"/decide"), map[string]any{"decision": decision, "comments": comments}, by.h())
}

func results(r reply) []map[string]any {
	var out []map[string]any
	list, _ := r.JSON["validationResults"].([]any)
	for _, v := range list {
		out = append(out, v.(map[string]any))
	}
	return out
}

// TestBatchPartialIntake submits a batch needing approval with one warning: 202 with the three
// X-Service-* headers and the JSON receipt (PARTIAL, pending-approval, the record with the
// warning named); the batch is listed by state, read whole, its records paged, its receipt PDF
// served; another tenant does not see it, a caller without a dispatch role is refused.
func TestBatchPartialIntake(t *testing.T) {
	t.Parallel()
	sealRequireTools(t)
	alice := newPerson(t, tenantA, "alice", "Esign.Initiator")
	pkg := uploadPackage(t, examplePackage(t))
	recs := offers(3)
	recs[1]["startDate"] = "2020-01-15"
	body := batchBody(pkg, recs, true)
	r := submitBatch(t, alice, body, http.StatusAccepted)
	id := r.Header.Get("X-Service-BatchId")
	if _, err := uuid.Parse(id); err != nil || r.str("batchId") != id {
		t.Fatalf("batch id %q / %q", id, r.str("batchId"))
	}
	if got := r.Header.Get("X-Service-CorrelationId"); got != body["options"].(map[string]any)["correlationId"] {
		t.Fatalf("X-Service-CorrelationId %q", got)
	}
	if r.Header.Get("X-Service-DispatchReadiness") != "PARTIAL" || r.str("dispatchReadiness") != "PARTIAL" ||
		r.str("state") != "pending-approval" || r.JSON["warningCount"] != 1.0 || r.str("submittedBy") != alice.oid {
		t.Fatalf("receipt %s", r.Raw)
	}
	for i, v := range results(r) {
		want := map[int]string{0: "valid", 1: "warning", 2: "valid"}[i]
		if v["index"] != float64(i) || v["status"] != want {
			t.Errorf("result %d: %v", i, v)
		}
	}
	if msgs := fmt.Sprint(results(r)[1]["messages"]); !strings.Contains(msgs, "start-in-future") {
		t.Errorf("warning messages %s", msgs)
	}

	list := call(t, "GET", svc.url("dispatch/batch?state=pending-approval"), nil, alice.h())
	if list.Status != http.StatusOK || !strings.Contains(string(list.Raw), id) {
		t.Fatalf("list: %d %s", list.Status, list.Raw)
	}
	if other := call(t, "GET", svc.url("dispatch/batch?state=cancelled"), nil, alice.h()); strings.Contains(string(other.Raw), id) {
		t.Fatalf("listed as cancelled: %s", other.Raw)
	}
	if bad := call(t, "GET", svc.url("dispatch/batch?state=done"), nil, alice.h()); bad.Status != 400 || !slices.Contains(bad.fields(), "state") {
		t.Fatalf("unknown state: %d %s", bad.Status, bad.Raw)
	}

	got := call(t, "GET", svc.url("dispatch/batch/"+id), nil, alice.h())
	if got.Status != http.StatusOK || got.str("state") != "pending-approval" || got.JSON["documentCount"] != 3.0 ||
		got.str("templatePath") != pkg || len(results(got)) != 3 || got.str("receiptPath") != "receipts/"+tenantA+"/"+id+".pdf" {
		t.Fatalf("get: %d %s", got.Status, got.Raw)
	}

	p1 := call(t, "GET", svc.url("dispatch/batch/"+id+"/records?limit=2"), nil, alice.h())
	recsOf := func(r reply) []any { l, _ := r.JSON["records"].([]any); return l }
	if p1.Status != http.StatusOK || len(recsOf(p1)) != 2 || p1.str("continuationToken") == "" {
		t.Fatalf("page 1: %d %s", p1.Status, p1.Raw)
	}
	p2 := call(t, "GET", svc.url("dispatch/batch/"+id+"/records?limit=2&continuationToken="+p1.str("continuationToken")), nil, alice.h())
	if p2.Status != http.StatusOK || len(recsOf(p2)) != 1 || p2.str("continuationToken") != "" || recsOf(p2)[0].(map[string]any)["index"] != 2.0 {
		t.Fatalf("page 2: %d %s", p2.Status, p2.Raw)
	}
	if bad := call(t, "GET", svc.url("dispatch/batch/"+id+"/records?continuationToken=nope"), nil, alice.h()); bad.Status != 400 {
		t.Fatalf("bad token: %d %s", bad.Status, bad.Raw)
	}

	pdf := call(t, "GET", svc.url("dispatch/batch/"+id+"/receipt"), nil, alice.h())
	if pdf.Status != http.StatusOK || pdf.Header.Get("Content-Type") != "application/pdf" {
		t.Fatalf("receipt: %d %s", pdf.Status, pdf.Header)
	}
	text := pdfText(t, pdf.Raw)
	for _, want := range []string{"Batch intake receipt", id, "PARTIAL", "Offer letter", "start-in-future", alice.oid} {
		if !strings.Contains(text, want) {
			t.Errorf("receipt text lacks %q:\n%s", want, text)
		}
	}

	carol := newPerson(t, tenantB, "carol", "Esign.Initiator", "Dispatch.Approver")
	for _, path := range []string{"", "/records", "/receipt"} {
		if r := call(t, "GET", svc.url("dispatch/batch/"+id+path), nil, carol.h()); r.Status != 404 || r.code() != "batch_not_found" {
			t.Errorf("another tenant GET %s: %d %s", path, r.Status, r.Raw)
		}
	}
	if r := decide(t, carol, id, "approve", ""); r.Status != 404 {
		t.Errorf("another tenant decides: %d %s", r.Status, r.Raw)
	}
	if r := call(t, "POST", svc.url("dispatch/batch/"+id+"/cancel"), nil, carol.h()); r.Status != 404 {
		t.Errorf("another tenant cancels: %d %s", r.Status, r.Raw)
	}
	nobody := newPerson(t, tenantA, "nobody", "Service.Admin")
	if r := call(t, "GET", svc.url("dispatch/batch/"+id), nil, nobody.h()); r.Status != 403 || r.code() != "role_required" {
		t.Errorf("no dispatch role: %d %s", r.Status, r.Raw)
	}
}

// TestBatchInvalidIntake: a batch with failing records is 422 with the receipt PDF, which names
// each failing record by index with its rule; nothing can decide or cancel it (409).
func TestBatchInvalidIntake(t *testing.T) {
	t.Parallel()
	sealRequireTools(t)
	alice := newPerson(t, tenantA, "alice", "Esign.Initiator", "Dispatch.Approver")
	bob := newPerson(t, tenantA, "bob", "Dispatch.Approver")
	pkg := uploadPackage(t, examplePackage(t))
	recs := offers(4)
	recs[1]["salary"] = 2000000
	recs[3]["currency"] = "XYZ"
	r := call(t, "POST", svc.url("render"), batchBody(pkg, recs, false), alice.h())
	if r.Status != http.StatusUnprocessableEntity || r.Header.Get("Content-Type") != "application/pdf" ||
		r.Header.Get("X-Service-DispatchReadiness") != "INVALID" || r.Header.Get("X-Service-BatchId") == "" {
		t.Fatalf("submit: %d %s", r.Status, r.Header)
	}
	id := r.Header.Get("X-Service-BatchId")
	text := pdfText(t, r.Raw)
	for _, want := range []string{id, "INVALID", "salary-cap", "field.options", "4 submitted, 2 ready, 2 invalid"} {
		if !strings.Contains(text, want) {
			t.Errorf("receipt text lacks %q:\n%s", want, text)
		}
	}
	for _, idx := range []string{"1", "3"} {
		if !regexp.MustCompile(`(?m)^\s*` + idx + `\s+OFFER-\S+\s+invalid\s+error`).MatchString(text) {
			t.Errorf("receipt does not name record %s as invalid:\n%s", idx, text)
		}
	}
	if regexp.MustCompile(`(?m)^\s*[02]\s+OFFER-\S+\s+invalid`).MatchString(text) {
		t.Errorf("a valid record is listed invalid:\n%s", text)
	}
	got := call(t, "GET", svc.url("dispatch/batch/"+id), nil, alice.h())
	if got.str("state") != "invalid" || got.JSON["failedCount"] != 2.0 {
		t.Fatalf("get: %s", got.Raw)
	}
	if r := decide(t, bob, id, "approve", ""); r.Status != 409 || r.code() != "invalid_state" {
		t.Errorf("decide an invalid batch: %d %s", r.Status, r.Raw)
	}
	if r := call(t, "POST", svc.url("dispatch/batch/"+id+"/cancel"), nil, alice.h()); r.Status != 409 || r.code() != "invalid_state" {
		t.Errorf("cancel an invalid batch: %d %s", r.Status, r.Raw)
	}
	// An array without features.dispatch or a distribution requiring approval is not dispatch.
	plain := batchBody(pkg, offers(1), false)
	delete(plain, "features")
	if r := call(t, "POST", svc.url("render"), plain, alice.h()); r.Status != 400 || r.code() != "dispatch_required" {
		t.Errorf("no dispatch asked: %d %s", r.Status, r.Raw)
	}
}

// TestBatchDecisions walks the approver's decisions: the submitter may not approve their own
// batch, another approver of the tenant may (the batch is queued for the processor); request
// changes keeps the comments and a resubmission names the batch it supersedes; reject and
// cancel end batches; any decide or cancel outside pending-approval and changes-requested is
// 409 invalid_state; decide needs Dispatch.Approver.
func TestBatchDecisions(t *testing.T) {
	t.Parallel()
	alice := newPerson(t, tenantA, "alice", "Esign.Initiator", "Dispatch.Approver")
	bob := newPerson(t, tenantA, "bob", "Dispatch.Approver")
	pkg := uploadPackage(t, examplePackage(t))
	submit := func() string {
		return submitBatch(t, alice, batchBody(pkg, offers(2), true), http.StatusAccepted).str("batchId")
	}

	approved := submit()
	if r := decide(t, alice, approved, "approve", ""); r.Status != 403 || r.code() != "self_approval" {
		t.Fatalf("self-approval: %d %s", r.Status, r.Raw)
	}
	r := decide(t, bob, approved, "approve", "fine")
	if r.Status != 200 || r.str("state") != "queued" || r.str("decidedAt") == "" {
		t.Fatalf("approve: %d %s", r.Status, r.Raw)
	}
	got := call(t, "GET", svc.url("dispatch/batch/"+approved), nil, alice.h())
	if got.str("approvedBy") != bob.oid || got.str("queuedAt") == "" ||
		!slices.Contains([]string{"queued", "processing", "completed", "partially-failed"}, got.str("state")) {
		t.Fatalf("approved batch: %s", got.Raw)
	}
	if r := decide(t, bob, approved, "reject", ""); r.Status != 409 || r.code() != "invalid_state" {
		t.Errorf("decide a queued batch: %d %s", r.Status, r.Raw)
	}
	if r := call(t, "POST", svc.url("dispatch/batch/"+approved+"/cancel"), nil, alice.h()); r.Status != 409 || r.code() != "invalid_state" {
		t.Errorf("cancel a queued batch: %d %s", r.Status, r.Raw)
	}

	changes := submit()
	if r := decide(t, bob, changes, "request-changes", "salaries need HR sign-off"); r.Status != 200 || r.str("state") != "changes-requested" {
		t.Fatalf("request-changes: %d %s", r.Status, r.Raw)
	}
	got = call(t, "GET", svc.url("dispatch/batch/"+changes), nil, bob.h())
	if got.str("state") != "changes-requested" || got.str("decisionComments") != "salaries need HR sign-off" {
		t.Fatalf("changes-requested batch: %s", got.Raw)
	}
	again := batchBody(pkg, offers(2), true)
	again["options"].(map[string]any)["supersedes"] = changes
	if r := submitBatch(t, alice, again, http.StatusAccepted); r.str("supersedes") != changes {
		t.Fatalf("resubmission: %s", r.Raw)
	}
	if r := decide(t, bob, changes, "reject", "superseded"); r.Status != 200 || r.str("state") != "rejected" {
		t.Fatalf("reject from changes-requested: %d %s", r.Status, r.Raw)
	}

	cancelled := submit()
	if r := call(t, "POST", svc.url("dispatch/batch/"+cancelled+"/cancel"), nil, alice.h()); r.Status != 200 || r.str("state") != "cancelled" {
		t.Fatalf("cancel: %d %s", r.Status, r.Raw)
	}
	if r := decide(t, bob, cancelled, "approve", ""); r.Status != 409 || r.code() != "invalid_state" {
		t.Errorf("decide a cancelled batch: %d %s", r.Status, r.Raw)
	}

	pending := submit()
	if r := decide(t, bob, pending, "maybe", ""); r.Status != 400 || !slices.Contains(r.fields(), "decision") {
		t.Errorf("unknown decision: %d %s", r.Status, r.Raw)
	}
	initiator := newPerson(t, tenantA, "dave", "Esign.Initiator")
	if r := decide(t, initiator, pending, "approve", ""); r.Status != 403 || r.code() != "role_required" {
		t.Errorf("decide without Dispatch.Approver: %d %s", r.Status, r.Raw)
	}
	if r := call(t, "POST", svc.url("dispatch/batch/"+uuid.NewString()+"/cancel"), nil, alice.h()); r.Status != 404 || r.code() != "batch_not_found" {
		t.Errorf("cancel an unknown batch: %d %s", r.Status, r.Raw)
	}
	if r := call(t, "GET", svc.url("dispatch/batch/"+pending), nil, alice.h()); r.str("state") != "pending-approval" {
		t.Errorf("pending batch moved: %s", r.Raw)
	}
}
