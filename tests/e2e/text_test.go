package e2e

import (
	"net/http"
	"slices"
	"testing"

	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/text"
)

// refusedNaming fails t unless r is 400 code naming field.
func refusedNaming(t *testing.T, what string, r reply, code, field string) {
	t.Helper()
	if r.Status != http.StatusBadRequest || r.code() != code || !slices.Contains(r.fields(), field) {
		t.Errorf("%s: %d %s, want 400 %s naming %s", what, r.Status, r.Raw, code, field)
	}
}

// TestTextIsCleanEvidence: control characters (C0, C1), separators and bidi controls are
// refused with the field's path in a create body, a callback body and a decline reason;
// invalid UTF-8 in a raw body is refused naming its field before decoding could replace it;
// a User-Agent header with such characters is recorded cleaned, never refused.
func TestTextIsCleanEvidence(t *testing.T) {
	t.Parallel()
	initiator := bearer(svc.jwt(t, tenantA, "Esign.Initiator"))

	// Create bodies (invoked routes: the JSON escapes reach the handler as sent).
	body := createBody(t, "parallel", 2)
	body["signers"].([]any)[1].(map[string]any)["namePrefill"] = "Signer\u0085 1"
	refusedNaming(t, "C1 in a signer's name", call(t, "POST", svc.url("esign/session"), body, initiator),
		"invalid_request", "signers[1].namePrefill")
	body = createBody(t, "single", 1)
	body["organizationName"] = "Contoso \u202eLtd"
	refusedNaming(t, "bidi override in organizationName", call(t, "POST", svc.url("esign/session"), body, initiator),
		"invalid_request", "organizationName")
	dlv := deliveryBody(t, "secure-email", 1)
	dlv["recipients"].([]any)[0].(map[string]any)["name"] = "Ann\x1b[2J"
	refusedNaming(t, "escape in a recipient's name", call(t, "POST", svc.url("delivery"), dlv, initiator),
		"invalid_request", "recipients[0].name")

	// A session whose signer's browser sends a User-Agent with a tab, C1, a bidi override and
	// a byte that is not UTF-8 (all that HTTP lets through; C0 other than tab is refused by
	// the HTTP servers themselves).
	body = createBody(t, "single", 1)
	link := slotsOf(t, createSession(t, tenantA, body), "slots")[0].Link
	const ua = "Mozilla/5.0\t(e2e\u0085text)\u202e \xff"
	a := call(t, "POST", svc.url("esign/portal/activate"), map[string]any{"token": linkToken(t, link)}, map[string]string{"User-Agent": ua})
	if a.Status != http.StatusOK {
		t.Fatalf("activate with a dirty User-Agent: %d %s", a.Status, a.Raw)
	}
	groupID, access := a.str("groupId"), a.str("accessToken")
	evs, err := xferStore(t).Events(t.Context(), groupID)
	if err != nil {
		t.Fatal(err)
	}
	want := text.Clean(ua, 512)
	found := false
	for _, ev := range evs {
		if ev.Kind != esign.EvSlotActivated {
			continue
		}
		found = true
		if ev.UserAgent != want || text.Problem(ev.UserAgent, text.Line) != "" {
			t.Errorf("audit user agent %q, want %q", ev.UserAgent, want)
		}
	}
	if !found {
		t.Fatal("no slot.activated event")
	}

	// Invalid UTF-8 in a raw body (a forwarded route: the handler sees the bytes as sent).
	raw := []byte("{\"token\":\"abc\xc3(def\"}")
	refusedNaming(t, "invalid UTF-8", call(t, "POST", svc.url("esign/portal/activate"), raw, nil), "invalid_request", "token")
	raw = []byte("{\"statements\":[\"document_reviewed\"],\"version\":\"" + esign.ConsentVersion + "\xff\"}")
	refusedNaming(t, "invalid UTF-8 in a portal body", portal(t, "POST", "consent", access, raw), "invalid_request", "version")

	// A callback body with a control character in the signer's name, then a decline reason.
	v := portal(t, "POST", "viewed", access, nil)
	c := portal(t, "POST", "consent", v.str("accessToken"), consentAll())
	if c.Status != http.StatusOK {
		t.Fatalf("consent %d %s", c.Status, c.Raw)
	}
	rd := ready{GroupID: groupID, SessionID: a.str("sessionId"), Access: c.str("accessToken")}
	rd.Fields, _ = a.JSON["fields"].([]any)
	for _, x := range c.JSON["consentsAccepted"].([]any) {
		rd.Consents = append(rd.Consents, x.(map[string]any))
	}
	cb := callbackBody(rd)
	cb["signerName"] = "Pat\u0007Signer"
	refusedNaming(t, "BEL in the callback's signerName", signedCallback(t, cb), "invalid_request", "signerName")
	cb = callbackBody(rd)
	cb["userAgent"] = "e2e\u2028/1.0"
	refusedNaming(t, "line separator in the callback's userAgent", signedCallback(t, cb), "invalid_request", "userAgent")

	d := portal(t, "POST", "decline", rd.Access, map[string]any{"reason": "wrong\u0000amount"})
	refusedNaming(t, "NUL in the decline reason", d, "invalid_request", "reason")
	d = portal(t, "POST", "decline", rd.Access, map[string]any{"reason": "Wrong amount.\r\nClause 7 differs.\n"})
	if d.Status != http.StatusOK || d.str("slotState") != "declined" {
		t.Fatalf("decline with line breaks: %d %s", d.Status, d.Raw)
	}
}

// TestFreeTextOfWorkflowsAndBatches: the free text a workflow's create request and a batch
// decision put into the invitations, the audit and the sealed record follows the same rule,
// refused naming the field by its full path; line breaks stay allowed in a decision's comments.
func TestFreeTextOfWorkflowsAndBatches(t *testing.T) {
	t.Parallel()
	pkg := wfPackage(t, false)
	initiator := bearer(svc.jwt(t, tenantA, "Esign.Initiator"))
	for _, c := range []struct{ field, key, value string }{
		{"templateSettings.workflow.recipients[0].displayName", "displayName", "Pat \u202eyaP"},
		{"templateSettings.workflow.organizationName", "organizationName", "Acme\u0007"},
		{"templateSettings.workflow.message", "message", "Hello\u2028there"},
	} {
		body := wfBody(pkg)
		wf := body["templateSettings"].(map[string]any)["workflow"].(map[string]any)
		if c.key == "displayName" {
			wf["recipients"].([]any)[0].(map[string]any)[c.key] = c.value
		} else {
			wf[c.key] = c.value
		}
		refusedNaming(t, c.field, call(t, "POST", svc.url("workflow"), body, initiator), "invalid_request", c.field)
	}

	alice := newPerson(t, tenantA, "alice", "Esign.Initiator")
	bob := newPerson(t, tenantA, "bob", "Dispatch.Approver")
	bpkg := uploadPackage(t, examplePackage(t))
	id := submitBatch(t, alice, batchBody(bpkg, offers(1), true), http.StatusAccepted).str("batchId")
	refusedNaming(t, "a bidi override in comments", decide(t, bob, id, "request-changes", "ok \u202e"), "invalid_request", "comments")
	if r := decide(t, bob, id, "request-changes", "Line one\nLine two"); r.Status != http.StatusOK {
		t.Fatalf("comments of two lines: %d %s", r.Status, r.Raw)
	}
}
