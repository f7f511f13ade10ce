package apperr

import (
	"net/http/httptest"
	"testing"
	"time"
)

// TestWriteProblemRetryAfter: an error that knows when to try again says so in Retry-After
// (whole seconds, rounded up), whatever its status: a 429, an OTP block's 400 (DESIGN 14: the
// block names its end), a 503; one that does not has no header.
func TestWriteProblemRetryAfter(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		err    *Error
		status int
		header string
	}{
		{"rate limited", &Error{Kind: KindRateLimited, Code: "otp_rate_limited", RetryAfter: 59*time.Second + time.Millisecond}, 429, "60"},
		{"otp blocked", &Error{Kind: KindInvalid, Code: "otp_blocked", RetryAfter: 7 * time.Minute}, 400, "420"},
		{"unavailable", &Error{Kind: KindUnavailable, Code: "graph_unavailable", RetryAfter: 2 * time.Second}, 503, "2"},
		{"no wait known", &Error{Kind: KindInvalid, Code: "otp_invalid"}, 400, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := httptest.NewRecorder()
			WriteProblem(w, "r", tc.err)
			if w.Code != tc.status || w.Header().Get("Retry-After") != tc.header {
				t.Fatalf("%d Retry-After %q, want %d %q", w.Code, w.Header().Get("Retry-After"), tc.status, tc.header)
			}
			if w.Header().Get("Content-Type") != "application/problem+json" {
				t.Fatalf("content type %q", w.Header().Get("Content-Type"))
			}
		})
	}
}
