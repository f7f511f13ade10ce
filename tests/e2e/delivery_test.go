package e2e

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/delivery"
)

func TestDeliverySecureEmailFlow(t *testing.T) {
	t.Parallel()
	body := deliveryBody(t, "secure-email", 2)
	corr := body["correlationId"].(string)
	ds := createDelivery(t, tenantA, body)
	if len(ds) != 2 {
		t.Fatalf("%d sessions, want one per recipient", len(ds))
	}
	d := ds[0]
	if want := svc.settings["PORTAL_URL"] + "/deliver/" + d.ID + "?t="; !strings.HasPrefix(d.Link, want) {
		t.Fatalf("portalUrl %q does not start with %q", d.Link, want)
	}

	// The invitation: link, document name, requester organisation and message.
	inv := deliveryMail(t, d.Recipient, "delivery_invitation")
	for _, want := range []string{"Statement 2026.pdf", "Contoso Legal", "Please find the statement attached.", "/deliver/" + d.ID + "?t="} {
		if !strings.Contains(inv.Text, want) {
			t.Errorf("invitation text lacks %q", want)
		}
	}
	mailed := regexp.MustCompile(`https?://\S+/deliver/\S+`).FindString(inv.Text)
	mailedTok := deliveryToken(t, mailed)
	if r := recipientCall(t, "GET", d.ID, "", mailedTok, nil); r.Status != http.StatusOK {
		t.Fatalf("the mailed link does not work: %d %s", r.Status, r.Raw)
	}

	// Metadata changes nothing.
	for i := 0; i < 2; i++ {
		m := recipientCall(t, "GET", d.ID, "", d.Token, nil)
		if m.Status != http.StatusOK || m.str("state") != "sent" || m.JSON["viewCount"] != float64(0) ||
			m.str("documentName") != "Statement 2026.pdf" || m.str("requesterOrg") != "Contoso Legal" || m.JSON["requireOtp"] != false {
			t.Fatalf("metadata %d: %s", i, m.Raw)
		}
	}
	// opened twice: openedAt set once, viewCount counts.
	for i := 0; i < 2; i++ {
		if r := recipientCall(t, "POST", d.ID, "/access", d.Token, map[string]any{"eventType": "opened", "ip": "203.0.113.9"}); r.Status != http.StatusOK || r.JSON["ok"] != true {
			t.Fatalf("access opened: %d %s", r.Status, r.Raw)
		}
	}
	m := recipientCall(t, "GET", d.ID, "", d.Token, nil)
	if m.str("state") != "opened" || m.JSON["viewCount"] != float64(2) {
		t.Fatalf("after opened: %s", m.Raw)
	}
	// SAS and download: the exact bytes, over plain HTTP from Azurite; se= is expiresAt.
	want, err := os.ReadFile(filepath.Join("testdata", "plain-1p.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	for _, rt := range []struct{ method, sub string }{{"GET", "/sas"}, {"POST", "/download"}} {
		r := recipientCall(t, rt.method, d.ID, rt.sub, d.Token, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("%s: %d %s", rt.sub, r.Status, r.Raw)
		}
		checkSAS(t, r.str("sasUrl"), r.str("expiresAt"), want)
	}
	if r := recipientCall(t, "POST", d.ID, "/access", d.Token, map[string]any{"eventType": "downloaded", "ip": "203.0.113.9"}); r.Status != http.StatusOK {
		t.Fatalf("access downloaded: %d %s", r.Status, r.Raw)
	}
	s := summaryOf(t, tenantA, corr, d.ID)
	if s["state"] != "downloaded" || s["openedAt"] == nil || s["downloadedAt"] == nil || s["viewCount"] != float64(2) ||
		s["recipient"] != d.Recipient || s["mode"] != "secure-email" || s["sentAt"] == nil {
		t.Fatalf("summary: %v", s)
	}
	if got := deliverySessions(t, tenantB, corr); len(got) != 0 {
		t.Fatalf("another tenant lists %d sessions", len(got))
	}
	// OTP send on a session without OTP: 400.
	if r := recipientCall(t, "POST", d.ID, "/otp/send", d.Token, nil); r.Status != http.StatusBadRequest || r.code() != "otp_not_required" {
		t.Fatalf("otp send without OTP: %d %s", r.Status, r.Raw)
	}
	// A token of the other session does not open this one.
	if r := recipientCall(t, "GET", d.ID, "", ds[1].Token, nil); r.Status != http.StatusUnauthorized {
		t.Fatalf("foreign token: %d %s", r.Status, r.Raw)
	}

	// Revoke: another tenant is refused (404, existence hidden), the creator's tenant succeeds.
	if r := call(t, "POST", svc.url("delivery/"+d.ID+"/revoke"), nil, bearer(svc.jwt(t, tenantB, "Esign.Initiator"))); r.Status != http.StatusNotFound {
		t.Fatalf("revoke by another tenant: %d %s", r.Status, r.Raw)
	}
	if r := recipientCall(t, "GET", d.ID, "", d.Token, nil); r.Status != http.StatusOK {
		t.Fatalf("the refused revoke changed the session: %d", r.Status)
	}
	for i := 0; i < 2; i++ {
		r := call(t, "POST", svc.url("delivery/"+d.ID+"/revoke"), nil, bearer(svc.jwt(t, tenantA, "Esign.Initiator")))
		if r.Status != http.StatusOK || r.str("state") != "revoked" || r.str("deliveryId") != d.ID {
			t.Fatalf("revoke %d: %d %s", i, r.Status, r.Raw)
		}
	}
	checkGone(t, d.ID, d.Token, "delivery_revoked")
	if s := summaryOf(t, tenantA, corr, d.ID); s["state"] != "revoked" {
		t.Fatalf("summary after revoke: %v", s)
	}
	kinds := auditKinds(t, d.ID)
	for _, k := range []string{delivery.EvCreated, delivery.EvInvited, delivery.EvOpened, delivery.EvSASIssued, delivery.EvDownloaded, delivery.EvRevoked} {
		if !contains(kinds, k) {
			t.Errorf("audit trail %v lacks %s", kinds, k)
		}
	}
	if n := countKind(kinds, delivery.EvRevoked); n != 1 {
		t.Errorf("%d revoke events, want 1 (revoke is idempotent)", n)
	}
	// The second recipient's session is untouched.
	if r := recipientCall(t, "GET", ds[1].ID, "", ds[1].Token, nil); r.Status != http.StatusOK || r.str("state") != "sent" {
		t.Fatalf("second session: %d %s", r.Status, r.Raw)
	}
}

func countKind(kinds []string, k string) int {
	n := 0
	for _, x := range kinds {
		if x == k {
			n++
		}
	}
	return n
}

// checkSAS fetches the URL with plain HTTP and compares the bytes; its se= is expiresAt.
func checkSAS(t *testing.T, sasURL, expiresAt string, want []byte) {
	t.Helper()
	u, err := url.Parse(sasURL)
	if err != nil || u.Query().Get("sig") == "" {
		t.Fatalf("sasUrl is not a SAS URL")
	}
	remember("SAS signature", u.Query().Get("sig"))
	exp, err := time.Parse(time.RFC3339Nano, expiresAt)
	if err != nil {
		t.Fatalf("expiresAt %q", expiresAt)
	}
	se, err := time.Parse(time.RFC3339, u.Query().Get("se"))
	if err != nil || !se.Equal(exp.Truncate(time.Second)) {
		t.Errorf("se=%q, expiresAt %s", u.Query().Get("se"), expiresAt)
	}
	if d := time.Until(exp); d < 14*time.Minute || d > 16*time.Minute {
		t.Errorf("SAS lives %s, want 15 minutes", d)
	}
	resp, err := http.Get(sasURL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !bytes.Equal(got, want) {
		t.Fatalf("SAS GET: %d, %d bytes (want %d)", resp.StatusCode, len(got), len(want))
	}
}

// checkGone: every recipient route answers 410 with code.
func checkGone(t *testing.T, id, tok, code string) {
	t.Helper()
	for _, rt := range []struct {
		method, sub string
		body        any
	}{
		{"GET", "", nil}, {"GET", "/sas", nil}, {"POST", "/download", nil},
		{"POST", "/access", map[string]any{"eventType": "opened", "ip": "203.0.113.9"}},
		{"POST", "/otp/send", nil}, {"POST", "/otp/verify", map[string]any{"otp": "123456"}},
	} {
		if r := recipientCall(t, rt.method, id, rt.sub, tok, rt.body); r.Status != http.StatusGone || r.code() != code {
			t.Errorf("%s %s: %d %s, want 410 %s", rt.method, rt.sub, r.Status, r.Raw, code)
		}
	}
}

func TestDeliveryExpiredIsGone(t *testing.T) {
	t.Parallel()
	body := deliveryBody(t, "secure-email", 1)
	body["expiresInHours"] = 1
	d := createDelivery(t, tenantA, body)[0]
	if r := recipientCall(t, "GET", d.ID, "", d.Token, nil); r.Status != http.StatusOK {
		t.Fatalf("live: %d", r.Status)
	}
	rewind(t, d.ID, func(s *delivery.Session) { s.ExpiresAt = time.Now().Add(-time.Minute) })
	checkGone(t, d.ID, d.Token, "delivery_expired")
	if s := summaryOf(t, tenantA, body["correlationId"].(string), d.ID); s["state"] != "expired" {
		t.Fatalf("summary: %v", s)
	}
}

// A SAS URL is refused once its expiry passed (Azurite enforces se=).
func TestDeliverySASExpiryEnforced(t *testing.T) {
	t.Parallel()
	path, _ := uploadFixture(t, "plain-1p.pdf")
	link, until, err := blobs(t).ReadURL(context.Background(), "documents", strings.TrimPrefix(path, "documents/"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := http.Get(link); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("fresh SAS: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	time.Sleep(time.Until(until) + 1500*time.Millisecond)
	resp, err := http.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("expired SAS answered %d, want 403", resp.StatusCode)
	}
}

func TestDeliveryOTPGating(t *testing.T) {
	t.Parallel()
	body := deliveryBody(t, "secure-email", 2)
	body["requireOtp"] = true
	ds := createDelivery(t, tenantA, body)
	d := ds[0]
	if m := recipientCall(t, "GET", d.ID, "", d.Token, nil); m.JSON["requireOtp"] != true || m.JSON["otpVerified"] != false {
		t.Fatalf("metadata: %s", m.Raw)
	}
	for _, rt := range [][2]string{{"GET", "/sas"}, {"POST", "/download"}} {
		if r := recipientCall(t, rt[0], d.ID, rt[1], d.Token, nil); r.Status != http.StatusForbidden || r.code() != "otp_required" {
			t.Fatalf("%s before OTP: %d %s", rt[1], r.Status, r.Raw)
		}
	}
	if r := recipientCall(t, "POST", d.ID, "/access", d.Token, map[string]any{"eventType": "downloaded"}); r.Status != http.StatusForbidden {
		t.Fatalf("downloaded before OTP: %d %s", r.Status, r.Raw)
	}
	// Verify before any send: no code.
	if r := recipientCall(t, "POST", d.ID, "/otp/verify", d.Token, map[string]any{"otp": "000000"}); r.Status != http.StatusBadRequest || r.code() != "otp_expired" {
		t.Fatalf("verify before send: %d %s", r.Status, r.Raw)
	}
	if r := recipientCall(t, "POST", d.ID, "/otp/send", d.Token, nil); r.Status != http.StatusOK || r.JSON["ok"] != true {
		t.Fatalf("otp send: %d %s", r.Status, r.Raw)
	}
	r := recipientCall(t, "POST", d.ID, "/otp/send", d.Token, nil)
	if r.Status != http.StatusTooManyRequests || r.Header.Get("Retry-After") == "" {
		t.Fatalf("second send within 60 s: %d %s", r.Status, r.Raw)
	}
	code := deliveryOTP(t, d.Recipient)
	wrong := "000000"
	if code == wrong {
		wrong = "111111"
	}
	if r := recipientCall(t, "POST", d.ID, "/otp/verify", d.Token, map[string]any{"otp": wrong}); r.Status != http.StatusBadRequest || r.code() != "otp_invalid" {
		t.Fatalf("wrong code: %d %s", r.Status, r.Raw)
	}
	if r := recipientCall(t, "POST", d.ID, "/otp/verify", d.Token, map[string]any{"otp": "12ab"}); r.Status != http.StatusBadRequest {
		t.Fatalf("malformed code: %d %s", r.Status, r.Raw)
	}
	if r := recipientCall(t, "POST", d.ID, "/otp/verify", d.Token, map[string]any{"otp": code}); r.Status != http.StatusOK || r.JSON["verified"] != true {
		t.Fatalf("right code: %d %s", r.Status, r.Raw)
	}
	want, _ := os.ReadFile(filepath.Join("testdata", "plain-1p.pdf"))
	sas := recipientCall(t, "GET", d.ID, "/sas", d.Token, nil)
	if sas.Status != http.StatusOK {
		t.Fatalf("sas after OTP: %d %s", sas.Status, sas.Raw)
	}
	checkSAS(t, sas.str("sasUrl"), sas.str("expiresAt"), want)
	if r := recipientCall(t, "POST", d.ID, "/otp/send", d.Token, nil); r.Status != http.StatusBadRequest || r.code() != "otp_already_verified" {
		t.Fatalf("send after verified: %d %s", r.Status, r.Raw)
	}
	if r := recipientCall(t, "POST", d.ID, "/otp/verify", d.Token, map[string]any{"otp": code}); r.Status != http.StatusBadRequest {
		t.Fatalf("verify after verified: %d %s", r.Status, r.Raw)
	}
	kinds := auditKinds(t, d.ID)
	for _, k := range []string{delivery.EvOTPSent, delivery.EvOTPFailed, delivery.EvOTPVerified, delivery.EvSASIssued} {
		if !contains(kinds, k) {
			t.Errorf("audit trail %v lacks %s", kinds, k)
		}
	}

	// Second session: an expired code, then five wrong tries lock the code.
	e := ds[1]
	if r := recipientCall(t, "POST", e.ID, "/otp/send", e.Token, nil); r.Status != http.StatusOK {
		t.Fatalf("send: %d %s", r.Status, r.Raw)
	}
	code2 := deliveryOTP(t, e.Recipient)
	rewind(t, e.ID, func(s *delivery.Session) {
		s.OTP.ExpiresAt = time.Now().Add(-time.Second)
		s.OTP.SentAt = time.Now().Add(-11 * time.Minute)
	})
	if r := recipientCall(t, "POST", e.ID, "/otp/verify", e.Token, map[string]any{"otp": code2}); r.Status != http.StatusBadRequest || r.code() != "otp_expired" {
		t.Fatalf("expired code: %d %s", r.Status, r.Raw)
	}
	if r := recipientCall(t, "POST", e.ID, "/otp/send", e.Token, nil); r.Status != http.StatusOK {
		t.Fatalf("send after expiry: %d %s", r.Status, r.Raw)
	}
	code3 := deliveryOTPNot(t, e.Recipient, code2)
	bad := "000000"
	if code3 == bad {
		bad = "111111"
	}
	for i := 1; i <= 5; i++ {
		r := recipientCall(t, "POST", e.ID, "/otp/verify", e.Token, map[string]any{"otp": bad})
		wantCode := "otp_invalid"
		if i == 5 {
			wantCode = "otp_locked"
		}
		if r.Status != http.StatusBadRequest || r.code() != wantCode {
			t.Fatalf("wrong try %d: %d %s", i, r.Status, r.Raw)
		}
	}
	if r := recipientCall(t, "POST", e.ID, "/otp/verify", e.Token, map[string]any{"otp": code3}); r.Status != http.StatusBadRequest || r.code() != "otp_locked" {
		t.Fatalf("right code after max attempts: %d %s", r.Status, r.Raw)
	}
	if r := recipientCall(t, "GET", e.ID, "/sas", e.Token, nil); r.Status != http.StatusForbidden {
		t.Fatalf("sas with a locked code: %d", r.Status)
	}
	if !contains(auditKinds(t, e.ID), delivery.EvOTPLocked) {
		t.Errorf("no %s event", delivery.EvOTPLocked)
	}
}

var deliveryCodeRe = regexp.MustCompile(`\b[0-9]{6}\b`)

// deliveryOTP waits for the OTP e-mail to recipient and returns its code (remembered).
func deliveryOTP(t *testing.T, recipient string) string { return deliveryOTPNot(t, recipient, "") }

func deliveryOTPNot(t *testing.T, recipient, not string) string {
	t.Helper()
	var code string
	eventually(t, "OTP e-mail", func() bool {
		ms := mailTo(t, recipient)
		for i := len(ms) - 1; i >= 0; i-- {
			if ms[i].Kind == "otp" {
				code = deliveryCodeRe.FindString(ms[i].Text)
				return code != "" && code != not
			}
		}
		return false
	})
	remember("OTP code", code)
	return code
}

func TestDeliveryLibraryUpload(t *testing.T) {
	t.Parallel()
	want, _ := os.ReadFile(filepath.Join("testdata", "plain-1p.pdf"))
	for _, mode := range []string{"sharepoint", "both"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			body := deliveryBody(t, mode, 1)
			body["documentName"] = "Upload " + mode + ".pdf"
			corr := body["correlationId"].(string)
			d := createDelivery(t, tenantA, body)[0]
			var s map[string]any
			eventually(t, "the upload", func() bool {
				s = summaryOf(t, tenantA, corr, d.ID)
				return s["uploadState"] != "pending"
			})
			if s["uploadState"] != "uploaded" || !strings.HasPrefix(s["uploadWebUrl"].(string), "https://contoso.sharepoint.com/") {
				t.Fatalf("summary: %v", s)
			}
			got, ok := graphStub.file("drive-site-legal|Deliveries/2026/Upload " + mode + ".pdf")
			if !ok || !bytes.Equal(got, want) {
				t.Fatalf("the library holds %d bytes (found %v), want the %d of the PDF", len(got), ok, len(want))
			}
			kinds := auditKinds(t, d.ID)
			if !contains(kinds, delivery.EvUploaded) {
				t.Errorf("audit trail %v lacks %s", kinds, delivery.EvUploaded)
			}
			if mode == "both" {
				deliveryMail(t, d.Recipient, "delivery_invitation")
			} else {
				if n := len(mailTo(t, d.Recipient)); n != 0 {
					t.Errorf("mode sharepoint sent %d e-mails", n)
				}
			}
			// The link works in every mode.
			if r := recipientCall(t, "GET", d.ID, "", d.Token, nil); r.Status != http.StatusOK || r.str("mode") != mode {
				t.Fatalf("metadata: %d %s", r.Status, r.Raw)
			}
		})
	}
	t.Run("forbidden", func(t *testing.T) {
		t.Parallel()
		body := deliveryBody(t, "sharepoint", 1)
		body["sharePointTarget"] = map[string]any{"siteUrl": "https://contoso.sharepoint.com/sites/Locked", "libraryPath": "Documents"}
		corr := body["correlationId"].(string)
		d := createDelivery(t, tenantA, body)[0]
		var s map[string]any
		eventually(t, "the failed upload", func() bool {
			s = summaryOf(t, tenantA, corr, d.ID)
			return s["uploadState"] != "pending"
		})
		if s["uploadState"] != "failed" || s["uploadError"] != "graph_forbidden" {
			t.Fatalf("summary: %v", s)
		}
		evs, err := deliveryStore(t).Events(context.Background(), d.ID)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, e := range evs {
			if e.Kind == delivery.EvUploadFailed && e.Data["code"] == "graph_forbidden" {
				found = true
			}
		}
		if !found {
			t.Fatalf("no %s graph_forbidden event", delivery.EvUploadFailed)
		}
	})
	t.Cleanup(func() {
		for _, p := range graphStub.Problems() {
			t.Errorf("Graph request shape: %s", p)
		}
	})
}

func TestDeliveryCreateBadInputs(t *testing.T) {
	t.Parallel()
	tooMany := make([]any, 21)
	for i := range tooMany {
		tooMany[i] = map[string]any{"email": "r" + string(rune('a'+i)) + "@example.test"}
	}
	long := strings.Repeat("x", 2001)
	tests := []struct {
		name  string
		edit  func(b map[string]any)
		field string
		code  string
	}{
		{"no correlationId", func(b map[string]any) { delete(b, "correlationId") }, "correlationId", "invalid_request"},
		{"bad correlationId", func(b map[string]any) { b["correlationId"] = "has space" }, "correlationId", "invalid_request"},
		{"no documentName", func(b map[string]any) { delete(b, "documentName") }, "documentName", "invalid_request"},
		{"documentName with slash", func(b map[string]any) { b["documentName"] = "a/b.pdf" }, "documentName", "invalid_request"},
		{"documentName too long", func(b map[string]any) { b["documentName"] = strings.Repeat("n", 201) }, "documentName", "invalid_request"},
		{"documentId with newline", func(b map[string]any) { b["documentId"] = "a\nb" }, "documentId", "invalid_request"},
		{"no pdfBlobPath", func(b map[string]any) { delete(b, "pdfBlobPath") }, "pdfBlobPath", "invalid_request"},
		{"pdfBlobPath other container", func(b map[string]any) { b["pdfBlobPath"] = "templates/x.pdf" }, "pdfBlobPath", ""},
		{"pdfBlobPath traversal", func(b map[string]any) { b["pdfBlobPath"] = "documents/../x.pdf" }, "pdfBlobPath", ""},
		{"pdfBlobPath missing blob", func(b map[string]any) { b["pdfBlobPath"] = "documents/" + tenantA + "/none/missing.pdf" }, "pdfBlobPath", "pdf_not_found"},
		{"pdfBlobPath another tenant's document", func(b map[string]any) { b["pdfBlobPath"], _ = uploadFixtureAs(t, tenantB, "plain-1p.pdf") }, "pdfBlobPath", "invalid_blob_path"},
		{"pdfBlobPath another tenant's folder, blob missing", func(b map[string]any) { b["pdfBlobPath"] = "documents/" + tenantB + "/none/missing.pdf" }, "pdfBlobPath", "invalid_blob_path"},
		{"no mode", func(b map[string]any) { delete(b, "mode") }, "mode", "invalid_request"},
		{"unknown mode", func(b map[string]any) { b["mode"] = "fax" }, "mode", "invalid_request"},
		{"no recipients", func(b map[string]any) { b["recipients"] = []any{} }, "recipients", "invalid_request"},
		{"21 recipients", func(b map[string]any) { b["recipients"] = tooMany }, "recipients", "invalid_request"},
		{"recipient without email", func(b map[string]any) { b["recipients"] = []any{map[string]any{"name": "N"}} }, "recipients[0].email", "invalid_request"},
		{"recipient bad email", func(b map[string]any) { b["recipients"] = []any{map[string]any{"email": "not-an-address"}} }, "recipients[0].email", "invalid_request"},
		{"duplicate recipient", func(b map[string]any) {
			b["recipients"] = []any{map[string]any{"email": "dup@example.test"}, map[string]any{"email": "DUP@example.test"}}
		}, "recipients[1].email", "invalid_request"},
		{"recipient name too long", func(b map[string]any) {
			b["recipients"] = []any{map[string]any{"email": "n@example.test", "name": strings.Repeat("n", 201)}}
		}, "recipients[0].name", "invalid_request"},
		{"recipient role too long", func(b map[string]any) {
			b["recipients"] = []any{map[string]any{"email": "n@example.test", "role": strings.Repeat("r", 101)}}
		}, "recipients[0].role", "invalid_request"},
		{"requesterOrg too long", func(b map[string]any) { b["requesterOrg"] = strings.Repeat("o", 201) }, "requesterOrg", "invalid_request"},
		{"message too long", func(b map[string]any) { b["message"] = long }, "message", "invalid_request"},
		{"expiresInHours 0", func(b map[string]any) { b["expiresInHours"] = 0 }, "expiresInHours", "invalid_request"},
		{"expiresInHours 721", func(b map[string]any) { b["expiresInHours"] = 721 }, "expiresInHours", "invalid_request"},
		{"expiresInHours fraction", func(b map[string]any) { b["expiresInHours"] = 1.5 }, "expiresInHours", ""},
		{"expiresInHours string", func(b map[string]any) { b["expiresInHours"] = "12" }, "expiresInHours", ""},
		{"requireOtp string", func(b map[string]any) { b["requireOtp"] = "yes" }, "requireOtp", ""},
		{"unknown field", func(b map[string]any) { b["colour"] = "red" }, "colour", ""},
		{"sharepoint without target", func(b map[string]any) { b["mode"] = "sharepoint" }, "sharePointTarget", "invalid_request"},
		{"reminders max 11", func(b map[string]any) {
			b["reminders"] = map[string]any{"firstAfterHours": 24, "everyHours": 24, "max": 11}
		}, "reminders.max", "invalid_request"},
		{"reminders unknown key", func(b map[string]any) { b["reminders"] = map[string]any{"firstAfterDays": 1} }, "reminders.firstAfterDays", ""},
		{"both without siteUrl", func(b map[string]any) {
			b["mode"] = "both"
			b["sharePointTarget"] = map[string]any{"libraryPath": "Documents"}
		}, "sharePointTarget.siteUrl", "invalid_request"},
		{"sharepoint without libraryPath", func(b map[string]any) {
			b["mode"] = "sharepoint"
			b["sharePointTarget"] = map[string]any{"siteUrl": "https://contoso.sharepoint.com/sites/Legal"}
		}, "sharePointTarget.libraryPath", "invalid_request"},
		{"siteUrl not SharePoint", func(b map[string]any) {
			b["mode"] = "sharepoint"
			b["sharePointTarget"] = map[string]any{"siteUrl": "https://evil.example.com/sites/x", "libraryPath": "Documents"}
		}, "sharePointTarget.siteUrl", "invalid_sharepoint_target"},
		{"siteUrl http", func(b map[string]any) {
			b["mode"] = "sharepoint"
			b["sharePointTarget"] = map[string]any{"siteUrl": "http://contoso.sharepoint.com/sites/x", "libraryPath": "Documents"}
		}, "sharePointTarget.siteUrl", "invalid_sharepoint_target"},
		{"folderPath traversal", func(b map[string]any) {
			b["mode"] = "sharepoint"
			b["sharePointTarget"] = map[string]any{"siteUrl": "https://contoso.sharepoint.com/sites/Legal", "libraryPath": "Documents", "folderPath": "a/../b"}
		}, "sharePointTarget.folderPath", "invalid_sharepoint_target"},
		{"target on secure-email", func(b map[string]any) {
			b["sharePointTarget"] = map[string]any{"siteUrl": "https://contoso.sharepoint.com/sites/Legal", "libraryPath": "Documents"}
		}, "sharePointTarget", "invalid_request"},
	}
	base := deliveryBody(t, "secure-email", 1)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := map[string]any{}
			for k, v := range base {
				b[k] = v
			}
			tc.edit(b)
			r := call(t, "POST", svc.url("delivery"), b, bearer(svc.jwt(t, tenantA, "Esign.Initiator")))
			if r.Status != http.StatusBadRequest {
				t.Fatalf("%d %s, want 400", r.Status, r.Raw)
			}
			if tc.code != "" && r.code() != tc.code {
				t.Errorf("code %q, want %q", r.code(), tc.code)
			}
			if !contains(r.fields(), tc.field) {
				t.Errorf("fields %v do not name %s", r.fields(), tc.field)
			}
		})
	}
	t.Run("auth", func(t *testing.T) {
		t.Parallel()
		if r := call(t, "POST", svc.url("delivery"), base, nil); r.Status != http.StatusUnauthorized {
			t.Errorf("no JWT: %d", r.Status)
		}
		if r := call(t, "POST", svc.url("delivery"), base, bearer(svc.jwt(t, tenantA, "Dispatch.Approver"))); r.Status != http.StatusForbidden {
			t.Errorf("wrong role: %d", r.Status)
		}
		if r := call(t, "GET", svc.url("delivery-sessions?correlationId=x"), nil, nil); r.Status != http.StatusUnauthorized {
			t.Errorf("list without JWT: %d", r.Status)
		}
		if r := call(t, "GET", svc.url("delivery-sessions"), nil, bearer(svc.jwt(t, tenantA, "Esign.Initiator"))); r.Status != http.StatusBadRequest {
			t.Errorf("list without correlationId: %d", r.Status)
		}
		if r := recipientCall(t, "GET", "00000000-0000-4000-8000-000000000000", "", "not-a-token", nil); r.Status != http.StatusUnauthorized {
			t.Errorf("bad delivery token: %d", r.Status)
		}
		if r := call(t, "GET", svc.host.URL()+"/api/delivery/x", nil, nil); r.Status != http.StatusUnauthorized {
			t.Errorf("no delivery token: %d", r.Status)
		}
	})
}
