package acs

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/notify"
)

var testKey = []byte("0123456789abcdef0123456789abcdef")

const (
	testRecipient = "signer.private@example.org"
	testPhone     = "+15557654321"
	testBody      = "secret-body-with-link https://portal.test/t/abc"
)

func testConfig(t *testing.T, f *fakeACS) Config {
	t.Helper()
	u, err := url.Parse(f.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return Config{Endpoint: u, AccessKey: testKey, EmailSender: "DoNotReply@mail.example.com", SMSFrom: "+18005550100", Timeout: 5 * time.Second}
}

func testEmail() notify.Message {
	return notify.Message{Channel: notify.Email, Kind: notify.KindInvitation, To: testRecipient,
		Subject: "Bitte unterschreiben: Vertrag Zoë", Text: testBody, HTML: "<p>" + testBody + "</p>"}
}

func newEmail(t *testing.T, cfg Config) *EmailSender {
	t.Helper()
	s, err := NewEmail(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.pollInterval = 5 * time.Millisecond
	return s
}

// assertSafe fails if an error exposes the recipient, the body or the key.
func assertSafe(t *testing.T, err error) {
	t.Helper()
	msg := err.Error()
	for _, secret := range []string{testRecipient, testPhone, testBody, string(testKey), base64.StdEncoding.EncodeToString(testKey)} {
		if strings.Contains(msg, secret) {
			t.Errorf("error exposes a secret: %s", msg)
		}
	}
}

func TestEmailAcceptedAndPolledToSuccess(t *testing.T) {
	t.Parallel()
	var polls atomic.Int32
	f := newFakeACS(t, testKey, nil)
	f.reply = func(w http.ResponseWriter, r seenRequest) {
		switch {
		case r.Method == http.MethodPost && r.URI == "/emails:send?api-version=2023-03-31":
			w.Header().Set("Operation-Location", f.srv.URL+"/emails/operations/op-1?api-version=2023-03-31")
			w.Header().Set("retry-after-ms", "5")
			jsonReply(http.StatusAccepted, nil, map[string]string{"id": "op-1", "status": "Running"})(w, r)
		case r.Method == http.MethodGet && r.URI == "/emails/operations/op-1?api-version=2023-03-31":
			status := "Running"
			if polls.Add(1) >= 2 {
				status = "Succeeded"
			}
			jsonReply(http.StatusOK, nil, map[string]string{"id": "op-1", "status": status})(w, r)
		default:
			http.NotFound(w, nil)
		}
	}
	cfg := testConfig(t, f)
	cfg.EmailWait = 5 * time.Second
	if err := newEmail(t, cfg).Send(context.Background(), testEmail()); err != nil {
		t.Fatal(err)
	}
	reqs := f.seen()
	if len(reqs) != 3 || polls.Load() != 2 {
		t.Fatalf("requests = %d, polls = %d; want 1 send and 2 polls", len(reqs), polls.Load())
	}
	if ct := reqs[0].Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	var got map[string]any
	if err := json.Unmarshal(reqs[0].Body, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"senderAddress": "DoNotReply@mail.example.com",
		"recipients":    map[string]any{"to": []any{map[string]any{"address": testRecipient}}},
		"content": map[string]any{
			"subject": "Bitte unterschreiben: Vertrag Zoë", "plainText": testBody, "html": "<p>" + testBody + "</p>",
		},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("request body (-want +got):\n%s", d)
	}
}

func TestEmailOperationFailedIsRefused(t *testing.T) {
	t.Parallel()
	f := newFakeACS(t, testKey, nil)
	f.reply = func(w http.ResponseWriter, r seenRequest) {
		if r.Method == http.MethodPost {
			w.Header().Set("Operation-Location", f.srv.URL+"/emails/operations/op-2?api-version=2023-03-31")
			jsonReply(http.StatusAccepted, nil, map[string]string{"id": "op-2", "status": "NotStarted"})(w, r)
			return
		}
		jsonReply(http.StatusOK, nil, map[string]any{"id": "op-2", "status": "Failed",
			"error": map[string]string{"code": "EmailDroppedAllRecipientsSuppressed", "message": "Message to " + testRecipient + " suppressed"}})(w, r)
	}
	cfg := testConfig(t, f)
	cfg.EmailWait = 5 * time.Second
	err := newEmail(t, cfg).Send(context.Background(), testEmail())
	e, ok := apperr.As(err)
	if !ok || e.Kind != apperr.KindInvalid || e.Code != CodeRefused || !strings.Contains(e.Detail, "EmailDroppedAllRecipientsSuppressed") {
		t.Fatalf("err = %v", err)
	}
	assertSafe(t, err)
}

func TestEmailWithoutWaitDoesNotPoll(t *testing.T) {
	t.Parallel()
	f := newFakeACS(t, testKey, nil)
	f.reply = func(w http.ResponseWriter, r seenRequest) {
		w.Header().Set("Operation-Location", f.srv.URL+"/emails/operations/op-3?api-version=2023-03-31")
		jsonReply(http.StatusAccepted, nil, map[string]string{"id": "op-3", "status": "Running"})(w, r)
	}
	if err := newEmail(t, testConfig(t, f)).Send(context.Background(), testEmail()); err != nil {
		t.Fatal(err)
	}
	if n := len(f.seen()); n != 1 {
		t.Errorf("requests = %d, want 1", n)
	}
}

func TestEmailOperationLocationOnAnotherHostIsNotFollowed(t *testing.T) {
	t.Parallel()
	var foreign atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { foreign.Add(1) }))
	t.Cleanup(other.Close)
	f := newFakeACS(t, testKey, func(w http.ResponseWriter, r seenRequest) {
		w.Header().Set("Operation-Location", other.URL+"/emails/operations/op-4")
		jsonReply(http.StatusAccepted, nil, map[string]string{"id": "op-4", "status": "Running"})(w, r)
	})
	cfg := testConfig(t, f)
	cfg.EmailWait = time.Second
	if err := newEmail(t, cfg).Send(context.Background(), testEmail()); err != nil {
		t.Fatal(err)
	}
	if foreign.Load() != 0 {
		t.Error("the sender followed an Operation-Location to another host")
	}
}

func TestEmailErrorMapping(t *testing.T) {
	t.Parallel()
	errBody := map[string]any{"error": map[string]string{"code": "BadRequest", "message": "Invalid recipient " + testRecipient}}
	tests := []struct {
		name       string
		status     int
		header     map[string]string
		key        []byte
		clockSkew  time.Duration
		kind       apperr.Kind
		code       string
		retryAfter time.Duration
	}{
		{name: "400 refused", status: 400, kind: apperr.KindInvalid, code: CodeRefused},
		{name: "wrong key gets 401", status: 202, key: []byte("another-key-another-key-another-k"), kind: apperr.KindInvalid, code: CodeAuthRefused},
		{name: "clock 20 minutes behind gets 401", status: 202, clockSkew: -20 * time.Minute, kind: apperr.KindInvalid, code: CodeAuthRefused},
		{name: "clock 20 minutes ahead gets 401", status: 202, clockSkew: 20 * time.Minute, kind: apperr.KindInvalid, code: CodeAuthRefused},
		{name: "429 with Retry-After seconds", status: 429, header: map[string]string{"Retry-After": "7"}, kind: apperr.KindUnavailable, code: CodeUnavailable, retryAfter: 7 * time.Second},
		{name: "503 with Retry-After", status: 503, header: map[string]string{"Retry-After": "30"}, kind: apperr.KindUnavailable, code: CodeUnavailable, retryAfter: 30 * time.Second},
		{name: "500 without Retry-After", status: 500, kind: apperr.KindUnavailable, code: CodeUnavailable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeACS(t, testKey, jsonReply(tc.status, tc.header, errBody))
			cfg := testConfig(t, f)
			if tc.key != nil {
				cfg.AccessKey = tc.key
			}
			if tc.clockSkew != 0 {
				cfg.Now = func() time.Time { return time.Now().Add(tc.clockSkew) }
			}
			err := newEmail(t, cfg).Send(context.Background(), testEmail())
			e, ok := apperr.As(err)
			if !ok || e.Kind != tc.kind || e.Code != tc.code || e.RetryAfter != tc.retryAfter {
				t.Fatalf("err = %v (%#v), want kind %v code %s retry %v", err, e, tc.kind, tc.code, tc.retryAfter)
			}
			assertSafe(t, err)
		})
	}
}

func TestEmailTransportFailuresAreUnavailable(t *testing.T) {
	t.Parallel()
	t.Run("connection refused", func(t *testing.T) {
		t.Parallel()
		f := newFakeACS(t, testKey, nil)
		cfg := testConfig(t, f)
		f.srv.Close()
		err := newEmail(t, cfg).Send(context.Background(), testEmail())
		if e, ok := apperr.As(err); !ok || e.Kind != apperr.KindUnavailable {
			t.Fatalf("err = %v", err)
		}
		assertSafe(t, err)
	})
	t.Run("timeout", func(t *testing.T) {
		t.Parallel()
		release := make(chan struct{})
		f := newFakeACS(t, testKey, func(w http.ResponseWriter, r seenRequest) { <-release })
		t.Cleanup(func() { close(release) })
		cfg := testConfig(t, f)
		cfg.Timeout = 100 * time.Millisecond
		err := newEmail(t, cfg).Send(context.Background(), testEmail())
		if e, ok := apperr.As(err); !ok || e.Kind != apperr.KindUnavailable {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestEmailRejectsWrongMessages(t *testing.T) {
	t.Parallel()
	f := newFakeACS(t, testKey, jsonReply(202, nil, nil))
	s := newEmail(t, testConfig(t, f))
	sms := testEmail()
	sms.Channel = notify.SMS
	noSubject := testEmail()
	noSubject.Subject = ""
	badTo := testEmail()
	badTo.To = "not-an-address"
	for name, m := range map[string]notify.Message{"sms": sms, "no subject": noSubject, "bad recipient": badTo} {
		err := s.Send(context.Background(), m)
		if e, ok := apperr.As(err); !ok || e.Kind != apperr.KindInvalid || e.Code != CodeInvalidMessage {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	if n := len(f.seen()); n != 0 {
		t.Errorf("%d requests reached the service", n)
	}
}

func TestRetryAfterForms(t *testing.T) {
	t.Parallel()
	now := time.Date(2024, 3, 5, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		h    http.Header
		want time.Duration
	}{
		{http.Header{"Retry-After": {"12"}}, 12 * time.Second},
		{http.Header{"Retry-After": {now.Add(90 * time.Second).Format(http.TimeFormat)}}, 90 * time.Second},
		{http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"9"}}, 250 * time.Millisecond},
		{http.Header{"X-Ms-Retry-After-Ms": {"1500"}}, 1500 * time.Millisecond},
		{http.Header{"Retry-After": {"soon"}}, 0},
		{http.Header{"Retry-After": {"999999"}}, time.Hour},
		{http.Header{}, 0},
	}
	for _, tc := range tests {
		if got := retryAfter(tc.h, now); got != tc.want {
			t.Errorf("retryAfter(%v) = %v, want %v", tc.h, got, tc.want)
		}
	}
}

var errNoToken = errors.New("identity endpoint down")
