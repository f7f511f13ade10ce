package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
)

func TestCreateSessionAndStatus(t *testing.T) {
	t.Parallel()
	body := createBody(t, "parallel", 2)
	r := createSession(t, tenantA, body)
	groupID := r.str("groupId")
	if _, err := uuid.Parse(groupID); err != nil || r.str("expiresAt") == "" {
		t.Fatalf("create answer %s", r.Raw)
	}
	slots, _ := r.JSON["slots"].([]any)
	if len(slots) != 2 {
		t.Fatalf("slots %s", r.Raw)
	}
	for i, s := range slots {
		m := s.(map[string]any)
		u, err := url.Parse(m["portalUrl"].(string))
		if err != nil || u.Query().Get("token") == "" || m["slotIndex"] != float64(i) || m["sessionId"] == "" {
			t.Errorf("slot %d: %v", i, m)
		}
	}

	st := status(t, tenantA, body["correlationId"].(string))
	if st.Status != http.StatusOK || st.str("groupId") != groupID || st.str("state") != "pending" || st.str("manifestSource") != "pdf" {
		t.Fatalf("status %d %s", st.Status, st.Raw)
	}
	stSlots := st.JSON["slots"].([]any)
	first := stSlots[0].(map[string]any)
	if first["state"] != "pending" || first["invited"] != true || first["email"] != body["signers"].([]any)[0].(map[string]any)["email"] {
		t.Errorf("slot 0 status %v", first)
	}
	if tl, _ := first["timeline"].(map[string]any); tl["pending"] == nil || !strings.Contains(tl["pending"].(string), ".") {
		t.Errorf("timeline without nanosecond pending time: %v", first["timeline"])
	}
	var kinds []string
	for _, e := range st.JSON["events"].([]any) {
		kinds = append(kinds, e.(map[string]any)["kind"].(string))
	}
	// The create's own events; the processor may already have recorded an invitation sent.
	if len(kinds) < 3 || !slices.Equal(kinds[:3], []string{"session.created", "slot.invited", "slot.invited"}) {
		t.Errorf("events %v", kinds)
	}
	for _, k := range kinds[min(3, len(kinds)):] {
		if k != "notification.sent" {
			t.Errorf("events %v", kinds)
		}
	}
	if r.Header.Get("X-Correlation-Id") == "" {
		t.Error("create answer lacks X-Correlation-Id")
	}
}

func TestTenantIsolationAndLiveCorrelation(t *testing.T) {
	t.Parallel()
	body := createBody(t, "single", 1)
	first := createSession(t, tenantA, body)
	corr := body["correlationId"].(string)

	// Another tenant sees nothing and can use the same correlationId.
	if r := status(t, tenantB, corr); r.Status != http.StatusNotFound {
		t.Fatalf("other tenant status %d %s", r.Status, r.Raw)
	}
	other := call(t, "POST", svc.url("esign/session/"+first.str("groupId")+"/cancel"), nil, bearer(svc.jwt(t, tenantB, "Esign.Initiator")))
	if other.Status != http.StatusNotFound {
		t.Fatalf("other tenant cancel %d %s", other.Status, other.Raw)
	}

	// A second create for the live correlationId is a 409 naming the live groupId.
	again := call(t, "POST", svc.url("esign/session"), body, bearer(svc.jwt(t, tenantA, "Esign.Initiator")))
	if again.Status != http.StatusConflict || again.code() != "session_exists" || again.str("groupId") != first.str("groupId") {
		t.Fatalf("second create %d %s", again.Status, again.Raw)
	}

	// Once cancelled, the correlationId is free again.
	c := call(t, "POST", svc.url("esign/session/"+first.str("groupId")+"/cancel"), nil, bearer(svc.jwt(t, tenantA, "Esign.Initiator")))
	if c.Status != http.StatusOK || c.str("state") != "cancelled" || c.str("cancelReason") != "cancelled" {
		t.Fatalf("cancel %d %s", c.Status, c.Raw)
	}
	if twice := call(t, "POST", svc.url("esign/session/"+first.str("groupId")+"/cancel"), nil, bearer(svc.jwt(t, tenantA, "Esign.Initiator"))); twice.Status != http.StatusConflict {
		t.Fatalf("cancel twice %d %s", twice.Status, twice.Raw)
	}
	second := createSession(t, tenantA, body)
	if second.str("groupId") == first.str("groupId") {
		t.Fatal("same groupId")
	}
	if st := status(t, tenantA, corr); st.str("groupId") != second.str("groupId") {
		t.Fatalf("status follows the newest session: %s", st.Raw)
	}
}

func TestRevokeEndsSessionWithReason(t *testing.T) {
	t.Parallel()
	body := createBody(t, "parallel", 2)
	r := createSession(t, tenantA, body)
	rv := call(t, "POST", svc.url("esign/session/"+r.str("groupId")+"/revoke"), nil, bearer(svc.jwt(t, tenantA, "Esign.Initiator")))
	if rv.Status != http.StatusOK || rv.str("state") != "cancelled" || rv.str("cancelReason") != "revoked" {
		t.Fatalf("revoke %d %s", rv.Status, rv.Raw)
	}
	st := status(t, tenantA, body["correlationId"].(string))
	if st.str("state") != "cancelled" || st.str("cancelReason") != "revoked" {
		t.Fatalf("status after revoke %s", st.Raw)
	}
	// resend-invite on a cancelled session is gone
	rs := call(t, "POST", svc.url("esign/session/"+body["correlationId"].(string)+"/resend-invite"), nil, bearer(svc.jwt(t, tenantA, "Esign.Initiator")))
	if rs.Status != http.StatusGone {
		t.Fatalf("resend after revoke %d %s", rs.Status, rs.Raw)
	}
}

func TestResendWithNothingActivatedIsConflict(t *testing.T) {
	t.Parallel()
	body := createBody(t, "parallel", 2)
	createSession(t, tenantA, body)
	rs := call(t, "POST", svc.url("esign/session/"+body["correlationId"].(string)+"/resend-invite"), nil, bearer(svc.jwt(t, tenantA, "Esign.Initiator")))
	if rs.Status != http.StatusConflict || rs.code() != "nothing_to_resend" {
		t.Fatalf("resend %d %s", rs.Status, rs.Raw)
	}
}

func TestCreateBadInputs(t *testing.T) {
	t.Parallel()
	initiator := bearer(svc.jwt(t, tenantA, "Esign.Initiator"))
	type patch func(m map[string]any)
	signer := func(m map[string]any, i int) map[string]any { return m["signers"].([]any)[i].(map[string]any) }
	cases := []struct {
		name   string
		patch  patch
		status int
		code   string
		field  string
	}{
		{"missing correlationId", func(m map[string]any) { delete(m, "correlationId") }, 400, "invalid_request", "correlationId"},
		{"correlationId with slash", func(m map[string]any) { m["correlationId"] = "a/b" }, 400, "invalid_request", "correlationId"},
		{"missing documentId", func(m map[string]any) { delete(m, "documentId") }, 400, "invalid_request", "documentId"},
		{"missing docType", func(m map[string]any) { delete(m, "docType") }, 400, "invalid_request", "docType"},
		{"missing pdfBlobPath", func(m map[string]any) { delete(m, "pdfBlobPath") }, 400, "invalid_request", "pdfBlobPath"},
		{"path traversal", func(m map[string]any) { m["pdfBlobPath"] = "documents/../secrets/x.pdf" }, 400, "invalid_blob_path", "pdfBlobPath"},
		{"absolute URL", func(m map[string]any) { m["pdfBlobPath"] = "https://evil.test/x.pdf" }, 400, "invalid_blob_path", "pdfBlobPath"},
		{"other container", func(m map[string]any) { m["pdfBlobPath"] = "signed/x.pdf" }, 400, "invalid_blob_path", "pdfBlobPath"},
		{"blob missing", func(m map[string]any) {
			m["pdfBlobPath"] = "documents/" + tenantA + "/none-" + uuid.NewString() + ".pdf"
		}, 400, "pdf_not_found", "pdfBlobPath"},
		// Another tenant's document, and one missing there, get the same answer (DESIGN 14).
		{"another tenant's document", func(m map[string]any) { m["pdfBlobPath"], _ = uploadFixtureAs(t, tenantB, "template-3p.pdf") }, 400, "invalid_blob_path", "pdfBlobPath"},
		{"another tenant's folder, blob missing", func(m map[string]any) {
			m["pdfBlobPath"] = "documents/" + tenantB + "/none-" + uuid.NewString() + ".pdf"
		}, 400, "invalid_blob_path", "pdfBlobPath"},
		{"documents root (pre-tenant layout)", func(m map[string]any) { m["pdfBlobPath"] = "documents/rendered/x.pdf" }, 400, "invalid_blob_path", "pdfBlobPath"},
		{"hash mismatch", func(m map[string]any) { m["pdfHash"] = "sha256:" + strings.Repeat("0", 64) }, 400, "pdf_hash_mismatch", "pdfHash"},
		{"hash without prefix", func(m map[string]any) { m["pdfHash"] = strings.Repeat("a", 64) }, 400, "invalid_request", "pdfHash"},
		{"bad signingMode", func(m map[string]any) { m["signingMode"] = "all-at-once" }, 400, "invalid_request", "signingMode"},
		{"expiry 0", func(m map[string]any) { m["expiresInMinutes"] = 0 }, 400, "invalid_request", "expiresInMinutes"},
		{"expiry over a week", func(m map[string]any) { m["expiresInMinutes"] = 10081 }, 400, "invalid_request", "expiresInMinutes"},
		{"expiry not a number", func(m map[string]any) { m["expiresInMinutes"] = "soon" }, 400, "invalid_request", "expiresInMinutes"},
		{"no signers", func(m map[string]any) { m["signers"] = []any{} }, 400, "invalid_request", "signers"},
		{"eleven signers", func(m map[string]any) {
			var s []any
			for i := 0; i < 11; i++ {
				s = append(s, map[string]any{"slotIndex": i, "role": "r", "email": "x@example.test"})
			}
			m["signers"] = s
		}, 400, "invalid_request", "signers"},
		{"duplicate slotIndex", func(m map[string]any) { signer(m, 1)["slotIndex"] = 0 }, 400, "invalid_request", "signers[1].slotIndex"},
		{"slotIndex out of range", func(m map[string]any) { signer(m, 1)["slotIndex"] = 7 }, 400, "invalid_request", "signers[1].slotIndex"},
		{"missing email", func(m map[string]any) { delete(signer(m, 0), "email") }, 400, "invalid_request", "signers[0].email"},
		{"bad email", func(m map[string]any) { signer(m, 0)["email"] = "not-an-address" }, 400, "invalid_request", "signers[0].email"},
		{"missing role", func(m map[string]any) { delete(signer(m, 1), "role") }, 400, "invalid_request", "signers[1].role"},
		{"sms without phone", func(m map[string]any) { signer(m, 0)["otpChannel"] = "sms" }, 400, "invalid_request", "signers[0].phoneNumber"},
		{"unknown field", func(m map[string]any) { m["expiresIn"] = 5 }, 400, "unknown_field", "expiresIn"},
		{"reminders max over 10", func(m map[string]any) {
			m["reminders"] = map[string]any{"firstAfterHours": 24, "everyHours": 24, "max": 11}
		}, 400, "invalid_request", "reminders.max"},
		{"reminders every zero", func(m map[string]any) {
			m["reminders"] = map[string]any{"firstAfterHours": 24, "everyHours": 0, "max": 2}
		}, 400, "invalid_request", "reminders.everyHours"},
		{"template elsewhere", func(m map[string]any) { m["templatePath"] = "documents/t.zip" }, 400, "invalid_blob_path", "templatePath"},
		{"template missing", func(m map[string]any) { m["templatePath"] = "templates/shared/none-" + uuid.NewString() + ".zip" }, 400, "template_not_found", "templatePath"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := createBody(t, "parallel", 2)
			tc.patch(body)
			r := call(t, "POST", svc.url("esign/session"), body, initiator)
			if r.Status != tc.status || r.code() != tc.code || !slices.Contains(r.fields(), tc.field) {
				t.Fatalf("got %d %s, want %d %s naming %s", r.Status, r.Raw, tc.status, tc.code, tc.field)
			}
			if ct := r.Header.Get("Content-Type"); ct != "application/problem+json" {
				t.Errorf("content type %q", ct)
			}
		})
	}
	raw := []struct {
		name, body string
		status     int
		code       string
	}{
		{"not JSON", `{"correlationId":`, 400, "invalid_json"},
		{"empty", ``, 400, "invalid_json"},
		{"array", `[]`, 400, "invalid_request"},
		{"too large", `{"documentId":"` + strings.Repeat("x", 1<<20) + `"}`, 413, "body_too_large"},
	}
	for _, tc := range raw {
		t.Run(tc.name, func(t *testing.T) {
			r := call(t, "POST", svc.url("esign/session"), []byte(tc.body), initiator)
			if r.Status != tc.status || r.code() != tc.code {
				t.Fatalf("got %d %s, want %d %s", r.Status, r.Raw, tc.status, tc.code)
			}
		})
	}
}

func TestAuthOnRequesterRoutes(t *testing.T) {
	t.Parallel()
	body := createBody(t, "single", 1)
	cases := []struct {
		name    string
		headers map[string]string
		status  int
		code    string
	}{
		{"no token", nil, 401, "auth_required"},
		{"garbage token", bearer("abc.def.ghi"), 401, "auth_invalid"},
		{"no role", bearer(svc.jwt(t, tenantA)), 403, "role_required"},
		{"wrong role", bearer(svc.jwt(t, tenantA, "Dispatch.Approver")), 403, "role_required"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := call(t, "POST", svc.url("esign/session"), body, tc.headers)
			if r.Status != tc.status || r.code() != tc.code {
				t.Fatalf("got %d %s, want %d %s", r.Status, r.Raw, tc.status, tc.code)
			}
		})
	}
	// Without the host key the Functions host refuses before the app sees the request.
	noKey := call(t, "POST", svc.host.URL()+"/api/esign/session", body, bearer(svc.jwt(t, tenantA, "Esign.Initiator")))
	if noKey.Status != http.StatusUnauthorized {
		t.Fatalf("without ?code: %d", noKey.Status)
	}
}

// TestSessionRoutesRefuseAGroupIDThatIsNoUUID: every route with a {groupId} answers 400 naming
// groupId for a value that cannot be a session's (a storage key error naming PartitionKey
// before), and the same 404 for an unknown UUID.
func TestSessionRoutesRefuseAGroupIDThatIsNoUUID(t *testing.T) {
	t.Parallel()
	initiator := bearer(svc.jwt(t, tenantA, "Esign.Initiator"))
	admin := bearer(svc.jwt(t, tenantA, "Service.Admin"))
	for _, c := range []struct {
		method, path string
		auth         map[string]string
	}{
		{"POST", "esign/session/%s/cancel", initiator},
		{"POST", "esign/session/%s/revoke", initiator},
		{"POST", "esign/session/%s/seal/retry", admin},
		{"DELETE", "esign/session/%s/slots/0/email", admin},
		{"GET", "esign/session/by-group/%s/status", initiator},
	} {
		for _, bad := range []string{"a%23b", "not-a-uuid", "%27%20or%201%3D1"} {
			r := call(t, c.method, svc.url(fmt.Sprintf(c.path, bad)), nil, c.auth)
			wantProblem(t, r, http.StatusBadRequest, "invalid_request", "groupId")
		}
		r := call(t, c.method, svc.url(fmt.Sprintf(c.path, uuid.NewString())), nil, c.auth)
		if r.Status != http.StatusNotFound {
			t.Errorf("%s %s with an unknown groupId: %d %s", c.method, c.path, r.Status, r.Raw)
		}
	}
}
