package apidoc

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestCheckerRefusesWhatTheDocumentDoesNot: answers the document describes pass, on any host;
// each kind of departure is reported.
func TestCheckerRefusesWhatTheDocumentDoesNot(t *testing.T) {
	_, doc := loadDoc(t)
	c, err := NewChecker(doc)
	if err != nil {
		t.Fatal(err)
	}
	problem := `{"type":"https://esign.invalid/problems/auth_required","title":"Unauthorized","status":401,"code":"auth_required"}`
	health := `{"status":"ok","engineVersion":"1.0.0","storage":{"blob":{"reachable":true}},"checkedAt":"2026-01-02T03:04:05.123Z"}`
	for _, tc := range []struct {
		name, method, url string
		status            int
		ct, body          string
		fault             string // in the error; "" for none
	}{
		{"health", "GET", "http://127.0.0.1:7071/api/health", 200, "application/json", health, ""},
		{"health with a feature off", "GET", "http://h/api/health", 200, "application/json", strings.Replace(health, `"status":"ok"`,
			`"status":"degraded","features":{"workflowCallbacks":{"available":false,"reason":"WEBHOOK_SECRETS is not set"}}`, 1), ""},
		{"another host", "GET", "http://localhost:1/api/health?x=1", 200, "application/json", health, ""},
		{"problem", "POST", "http://h/api/esign/session?code=k", 401, "application/problem+json", problem, ""},
		{"host's empty 401", "POST", "http://h/api/esign/session", 401, "", "", ""},
		{"document HEAD", "HEAD", "http://h/api/esign/document/tok", 200, "application/pdf", "", ""},
		{"unknown route", "GET", "http://h/api/esign/nothing", 404, "text/plain", "404 page not found", "is not in"},
		{"unknown method", "PUT", "http://h/api/health", 405, "", "", "is not in"},
		{"undocumented status", "GET", "http://h/api/health", 418, "application/json", health, "status 418 is not documented"},
		{"undocumented content type", "GET", "http://h/api/health", 200, "text/plain", health, "Content-Type"},
		{"empty where a body is due", "GET", "http://h/api/health", 200, "", "", "empty body"},
		{"missing field", "GET", "http://h/api/health", 200, "application/json", `{"status":"ok"}`, "is missing"},
		{"unknown field", "GET", "http://h/api/health", 200, "application/json", strings.Replace(health, `"status"`, `"extra":1,"status"`, 1), "extra"},
		{"unknown problem code", "POST", "http://h/api/esign/session", 401, "application/problem+json", strings.Replace(problem, `"code":"auth_required"`, `"code":"made_up"`, 1), "code"},
		{"body where none is due", "OPTIONS", "http://h/api/esign/portal/session", 204, "application/json", "{}", "where the document has none"},
	} {
		req := httptest.NewRequest(tc.method, tc.url, nil)
		h := http.Header{}
		if tc.ct != "" {
			h.Set("Content-Type", tc.ct)
		}
		err := c.Check(req, tc.status, h, []byte(tc.body))
		switch {
		case tc.fault == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.fault != "" && err == nil:
			t.Errorf("%s: passed, want an error about %q", tc.name, tc.fault)
		case tc.fault != "" && !strings.Contains(err.Error(), tc.fault):
			t.Errorf("%s: %v, want an error about %q", tc.name, err, tc.fault)
		}
	}
	left := strings.Join(c.Unexercised(), ",")
	if strings.Contains(left, "Health 200") || strings.Contains(left, "CreateSession 401") || !strings.Contains(left, "CreateSession 201") {
		t.Errorf("unexercised: %s", left)
	}
}
