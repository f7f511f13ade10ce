package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/delivery/deliverystore"
)

// offerSigners are the sample package's two roles as auto-trigger signers.
func offerSigners() []any {
	return []any{
		map[string]any{"slotIndex": 0, "role": "employee", "email": email(0), "namePrefill": "Zoë"},
		map[string]any{"slotIndex": 1, "role": "hr", "email": email(1)},
	}
}

// TestRenderAutoTriggerESign renders with templateSettings.esign: the answer carries the
// signing session the create-session use case made on the rendered PDF, with the auto-trigger
// defaults (sequential, 7 days); the first signer is invited; the requester notices follow
// their gates (requestedByEmail; generatedBy never stands in for it).
func TestRenderAutoTriggerESign(t *testing.T) {
	t.Parallel()
	pkg := uploadPackage(t, examplePackage(t))
	t.Run("defaults and notices to requestedByEmail", func(t *testing.T) {
		t.Parallel()
		sealRequireTools(t)
		body := renderBody(pkg, offerRecord())
		title := "Offer letter — Zoë (e2e)"
		body["options"].(map[string]any)["title"] = title
		requester := email(9)
		body["templateSettings"] = map[string]any{"esign": map[string]any{"enabled": true, "signers": offerSigners(),
			"requestedByEmail": requester, "requestedBy": "Pat Requester"}}
		r := renderCall(t, tenantA, body)
		if r.Status != http.StatusCreated {
			t.Fatalf("render: %d %s", r.Status, r.Raw)
		}
		corr := r.str("correlationId")
		es, _ := r.JSON["esign"].(map[string]any)
		if es == nil || es["groupId"] == "" {
			t.Fatalf("no signing session in the answer: %s", r.Raw)
		}
		links := slotsOf(t, reply{JSON: es}, "slots")
		st := status(t, tenantA, corr)
		if st.str("signingMode") != "sequential" || st.str("pdfBlobPath") != r.str("pdfBlobPath") || st.str("pdfHash") != r.str("pdfHash") {
			t.Fatalf("session %s", st.Raw)
		}
		created, _ := time.Parse(time.RFC3339Nano, st.str("createdAt"))
		expires, _ := time.Parse(time.RFC3339Nano, st.str("expiresAt"))
		if expires.Sub(created) != 10080*time.Minute {
			t.Fatalf("auto-trigger session lives %s, want 7 days", expires.Sub(created))
		}
		if st.str("manifestSource") != "rendered" {
			t.Fatalf("manifest source %q, want the manifest stored beside the rendered PDF", st.str("manifestSource"))
		}
		eventually(t, "the first signer's invitation", func() bool { return len(noticesFor(t, corr, "invitation")) == 1 })
		if evs := documentEvents(t, tenantA, corr); len(evs) != 2 || evs[1] != "document.esign_started" {
			t.Fatalf("document trail %v", evs)
		}
		sign(t, links[0].Link)
		eventually(t, "the second signer's invitation", func() bool { return len(noticesFor(t, corr, "invitation")) == 2 })
		sign(t, links[1].Link)
		eventually(t, "documents-ready notice", func() bool { return len(noticesFor(t, corr, "requester_documents_ready")) == 1 })
		eventually(t, "per-signer notices", func() bool { return len(noticesFor(t, corr, "requester_signer_notice")) == 2 })
		for _, n := range noticesFor(t, corr, "requester_documents_ready") {
			if n.Recipient != requester {
				t.Fatal("the documents-ready notice went to another address")
			}
		}
		// The certificate's title is the render's title (spec 000 evidence certificate).
		done := sealWaitStatus(t, tenantA, corr, 30*time.Second, "the certificate", func(r reply) bool { return r.str("certificatePath") != "" })
		cert, _ := sealDownload(t, done.str("certificatePath"))
		if text := strings.Join(strings.Fields(pdfText(t, cert)), " "); !strings.Contains(text, "Title: "+title+" Document ID:") {
			t.Fatalf("the certificate's title is not the render's %q:\n%s", title, text)
		}
		again := renderCall(t, tenantA, body)
		if again.Status != http.StatusOK {
			t.Fatalf("retry: %d %s", again.Status, again.Raw)
		}
		if es2, _ := again.JSON["esign"].(map[string]any); es2 == nil || es2["groupId"] != es["groupId"] {
			t.Fatalf("a retry names another session: %s", again.Raw)
		}
	})
	t.Run("generatedBy is not the requester", func(t *testing.T) {
		t.Parallel()
		body := renderBody(pkg, offerRecord())
		body["options"].(map[string]any)["generatedBy"] = email(8)
		body["templateSettings"] = map[string]any{"esign": map[string]any{"enabled": true, "signers": offerSigners(),
			"signingMode": "parallel"}}
		r := renderCall(t, tenantA, body)
		if r.Status != http.StatusCreated {
			t.Fatalf("render: %d %s", r.Status, r.Raw)
		}
		corr := r.str("correlationId")
		links := slotsOf(t, reply{JSON: r.JSON["esign"].(map[string]any)}, "slots")
		sign(t, links[0].Link)
		sign(t, links[1].Link)
		eventually(t, "signers' completion e-mails", func() bool { return len(noticesFor(t, corr, "signer_completed")) == 2 })
		for _, kind := range []string{"requester_signer_notice", "requester_documents_ready"} {
			if n := noticesFor(t, corr, kind); len(n) != 0 {
				t.Fatalf("%d %s without requestedByEmail", len(n), kind)
			}
		}
	})
	t.Run("bad settings are refused before anything is stored", func(t *testing.T) {
		t.Parallel()
		body := renderBody(pkg, offerRecord())
		body["templateSettings"] = map[string]any{"esign": map[string]any{"enabled": true,
			"signers": []any{map[string]any{"slotIndex": 0, "role": "employee", "email": "nobody"}}}}
		r := renderCall(t, tenantA, body)
		if r.Status != http.StatusBadRequest {
			t.Fatalf("%d %s", r.Status, r.Raw)
		}
		if f := r.fields(); len(f) == 0 || f[0] != "templateSettings.esign.signers[0].email" {
			t.Fatalf("fields %v: %s", f, r.Raw)
		}
		if evs := documentEvents(t, tenantA, body["options"].(map[string]any)["correlationId"].(string)); len(evs) != 0 {
			t.Fatalf("a refused render was recorded: %v", evs)
		}
	})
}

// TestRenderAutoTriggerDelivery renders with templateSettings.delivery: alone, the delivery
// sessions are made at once on the rendered PDF; with esign, they wait for the session to
// complete and deliver the signed PDF.
func TestRenderAutoTriggerDelivery(t *testing.T) {
	t.Parallel()
	pkg := uploadPackage(t, examplePackage(t))
	t.Run("delivery alone", func(t *testing.T) {
		t.Parallel()
		body := renderBody(pkg, offerRecord())
		rcpt := email(5)
		body["templateSettings"] = map[string]any{"delivery": map[string]any{"enabled": true,
			"recipients": []any{map[string]any{"email": rcpt, "name": "Robin"}}}}
		r := renderCall(t, tenantA, body)
		if r.Status != http.StatusCreated {
			t.Fatalf("render: %d %s", r.Status, r.Raw)
		}
		dl, _ := r.JSON["delivery"].(map[string]any)
		sessions, _ := dl["sessions"].([]any)
		if len(sessions) != 1 || sessions[0].(map[string]any)["recipient"] != rcpt {
			t.Fatalf("delivery in the answer: %s", r.Raw)
		}
		corr := r.str("correlationId")
		eventually(t, "the recipient's invitation", func() bool { return len(noticesFor(t, corr, "delivery_invitation")) == 1 })
		ds := deliveriesOf(t, corr)
		if len(ds) != 1 || ds[0] != r.str("pdfBlobPath") {
			t.Fatalf("delivered documents %v, want the rendered PDF", ds)
		}
	})
	t.Run("after signing, the signed PDF", func(t *testing.T) {
		t.Parallel()
		body := renderBody(pkg, offerRecord())
		rcpt := email(6)
		body["templateSettings"] = map[string]any{
			"esign":    map[string]any{"enabled": true, "signers": offerSigners(), "signingMode": "parallel"},
			"delivery": map[string]any{"enabled": true, "recipients": []any{map[string]any{"email": rcpt}}, "requireOtp": true},
		}
		r := renderCall(t, tenantA, body)
		if r.Status != http.StatusCreated || r.JSON["deliveryAfterSigning"] != true || r.JSON["delivery"] != nil {
			t.Fatalf("render: %d %s", r.Status, r.Raw)
		}
		corr := r.str("correlationId")
		links := slotsOf(t, reply{JSON: r.JSON["esign"].(map[string]any)}, "slots")
		sign(t, links[0].Link)
		if ds := deliveriesOf(t, corr); len(ds) != 0 {
			t.Fatalf("delivered before the session completed: %v", ds)
		}
		sign(t, links[1].Link)
		st := sealWaitStatus(t, tenantA, corr, asyncDeadline, "complete", func(r reply) bool { return r.str("state") == "complete" })
		eventually(t, "the recipient's invitation", func() bool { return len(noticesFor(t, corr, "delivery_invitation")) == 1 })
		ds := deliveriesOf(t, corr)
		if len(ds) != 1 || ds[0] != st.str("signedDocumentPath") {
			t.Fatalf("delivered documents %v, want the signed PDF %s", ds, st.str("signedDocumentPath"))
		}
		final := status(t, tenantA, corr)
		if sealEventKinds(final)["session.delivery_started"] != 1 {
			t.Fatalf("session trail lacks session.delivery_started: %s", final.Raw)
		}
		list := call(t, "GET", svc.url("delivery-sessions?correlationId="+corr), nil, bearer(svc.jwt(t, tenantA, "Esign.Initiator")))
		if list.Status != http.StatusOK {
			t.Fatalf("list: %d %s", list.Status, list.Raw)
		}
	})
}

// deliveriesOf lists the PDF paths of the tenant A delivery sessions of a correlationId.
func deliveriesOf(t *testing.T, corr string) []string {
	t.Helper()
	acct, err := azconn.New(azconn.Config{ConnectionString: svc.azurite.ConnectionString()})
	if err != nil {
		t.Fatal(err)
	}
	st, err := deliverystore.New(acct, deliverystore.TableSessions, deliverystore.TableIndex)
	if err != nil {
		t.Fatal(err)
	}
	ss, err := st.ListByCorrelation(context.Background(), tenantA, corr)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range ss {
		out = append(out, s.PDFBlobPath)
	}
	return out
}
