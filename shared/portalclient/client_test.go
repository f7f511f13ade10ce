package portalclient

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/callbacksig"
)

const testSecret = "0123456789abcdef0123456789abcdef-portal"

// captured is one request the stand-in received.
type captured struct {
	method, path, ctype, idem string
	sigErr                    error
	body                      map[string]any
	rawKeys                   []string
}

// standIn answers every request with status and records it, verifying the signature with the
// callback code.
func standIn(t *testing.T, status int) (*httptest.Server, func() []captured) {
	t.Helper()
	var mu sync.Mutex
	var got []captured
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		c := captured{method: r.Method, path: r.URL.Path, ctype: r.Header.Get("Content-Type"), idem: r.Header.Get(IdempotencyHeader)}
		c.sigErr = callbacksig.Verify(r.Header.Get(callbacksig.Header), raw, time.Now(), []string{"another-secret-another-secret-xx", testSecret})
		var m map[string]json.RawMessage
		_ = json.Unmarshal(raw, &m)
		for k := range m {
			c.rawKeys = append(c.rawKeys, k)
		}
		_ = json.Unmarshal(raw, &c.body)
		mu.Lock()
		got = append(got, c)
		mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []captured { mu.Lock(); defer mu.Unlock(); return append([]captured(nil), got...) }
}

func request() PurgeRequest {
	return PurgeRequest{GroupID: "6f1c1c2e-0000-4000-8000-000000000001",
		SessionIDs: []string{"a1a1a1a1-0000-4000-8000-000000000001", "b2b2b2b2-0000-4000-8000-000000000002"}, Reason: ReasonSealed}
}

func TestPurgeRequestShapeAndSignature(t *testing.T) {
	t.Parallel()
	srv, got := standIn(t, http.StatusAccepted)
	c, err := New(srv.URL+"/", testSecret)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Purge(context.Background(), request()); err != nil {
		t.Fatal(err)
	}
	reqs := got()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.method != http.MethodPost || r.path != "/v1/purge" || r.ctype != "application/json" {
		t.Fatalf("request %s %s (%s), want POST /v1/purge application/json", r.method, r.path, r.ctype)
	}
	if r.sigErr != nil {
		t.Fatalf("signature does not verify: %v", r.sigErr)
	}
	if r.idem != "6f1c1c2e-0000-4000-8000-000000000001:purge" {
		t.Fatalf("Idempotency-Key %q", r.idem)
	}
	want := map[string]any{"groupId": "6f1c1c2e-0000-4000-8000-000000000001",
		"sessionIds": []any{"a1a1a1a1-0000-4000-8000-000000000001", "b2b2b2b2-0000-4000-8000-000000000002"}, "reason": "sealed"}
	if diff := cmp.Diff(want, r.body); diff != "" {
		t.Fatalf("body (-want +got):\n%s", diff)
	}
	if len(r.rawKeys) != 3 {
		t.Fatalf("body keys %v, want exactly groupId, sessionIds, reason", r.rawKeys)
	}
}

func TestPurgeSignatureUsesTheClock(t *testing.T) {
	t.Parallel()
	var header string
	var raw []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		header = r.Header.Get(callbacksig.Header)
		raw, _ = io.ReadAll(r.Body)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	c, err := New(srv.URL, testSecret, WithClock(func() time.Time { return at }))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Purge(context.Background(), request()); err != nil {
		t.Fatal(err)
	}
	if header != callbacksig.Sign(testSecret, at, raw) {
		t.Fatalf("header %q is not the callback signature at the client's clock", header)
	}
	if err := callbacksig.Verify(header, raw, at.Add(10*time.Minute), []string{testSecret}); apperr.KindOf(err) != apperr.KindUnauthenticated {
		t.Fatalf("a 10-minute-old signature verified: %v", err)
	}
}

func TestPurgeAnswers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status int
		kind   apperr.Kind
		code   string
	}{
		{http.StatusOK, 0, ""},
		{http.StatusAccepted, 0, ""},
		{http.StatusNoContent, 0, ""},
		{http.StatusNotFound, 0, ""},
		{http.StatusBadRequest, apperr.KindInvalid, CodeRejected},
		{http.StatusUnauthorized, apperr.KindInvalid, CodeRejected},
		{http.StatusConflict, apperr.KindInvalid, CodeRejected},
		{http.StatusFound, apperr.KindInvalid, CodeRejected},
		{http.StatusCreated, apperr.KindInvalid, CodeRejected},
		{http.StatusRequestTimeout, apperr.KindUnavailable, CodeUnavailable},
		{http.StatusTooEarly, apperr.KindUnavailable, CodeUnavailable},
		{http.StatusTooManyRequests, apperr.KindUnavailable, CodeUnavailable},
		{http.StatusInternalServerError, apperr.KindUnavailable, CodeUnavailable},
		{http.StatusServiceUnavailable, apperr.KindUnavailable, CodeUnavailable},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			t.Parallel()
			srv, got := standIn(t, tt.status)
			c, err := New(srv.URL, testSecret)
			if err != nil {
				t.Fatal(err)
			}
			err = c.Purge(context.Background(), request())
			if len(got()) != 1 {
				t.Fatalf("%d requests, want 1 (redirects are not followed)", len(got()))
			}
			if tt.code == "" {
				if err != nil {
					t.Fatalf("status %d: %v, want done", tt.status, err)
				}
				return
			}
			e, ok := apperr.As(err)
			if !ok || e.Kind != tt.kind || e.Code != tt.code {
				t.Fatalf("status %d: %v, want kind %d code %s", tt.status, err, tt.kind, tt.code)
			}
		})
	}
}

func TestPurgeTransportFailures(t *testing.T) {
	t.Parallel()
	t.Run("unreachable", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(http.NotFoundHandler())
		url := srv.URL
		srv.Close()
		c, err := New(url, testSecret)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Purge(context.Background(), request()); apperr.KindOf(err) != apperr.KindUnavailable {
			t.Fatalf("%v, want KindUnavailable", err)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		t.Parallel()
		release := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}))
		t.Cleanup(srv.Close)
		t.Cleanup(func() { close(release) })
		c, err := New(srv.URL, testSecret, WithHTTPClient(&http.Client{Timeout: 50 * time.Millisecond}))
		if err != nil {
			t.Fatal(err)
		}
		err = c.Purge(context.Background(), request())
		if e, ok := apperr.As(err); !ok || e.Kind != apperr.KindUnavailable || e.Code != CodeUnavailable {
			t.Fatalf("%v, want KindUnavailable %s", err, CodeUnavailable)
		}
	})
	t.Run("context cancelled", func(t *testing.T) {
		t.Parallel()
		srv, got := standIn(t, http.StatusOK)
		c, err := New(srv.URL, testSecret)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := c.Purge(ctx, request()); apperr.KindOf(err) != apperr.KindUnavailable {
			t.Fatalf("%v, want KindUnavailable", err)
		}
		if len(got()) != 0 {
			t.Fatal("a request was sent on a cancelled context")
		}
	})
}

func TestPurgeInvalidRequestSendsNothing(t *testing.T) {
	t.Parallel()
	srv, got := standIn(t, http.StatusOK)
	c, err := New(srv.URL, testSecret)
	if err != nil {
		t.Fatal(err)
	}
	many := make([]string, MaxSessionIDs+1)
	for i := range many {
		many[i] = "id"
	}
	tests := []struct {
		name  string
		req   PurgeRequest
		field string
	}{
		{"no group", PurgeRequest{SessionIDs: []string{"s"}, Reason: ReasonSealed}, "groupId"},
		{"no sessions", PurgeRequest{GroupID: "g", Reason: ReasonSealed}, "sessionIds"},
		{"too many sessions", PurgeRequest{GroupID: "g", SessionIDs: many, Reason: ReasonSealed}, "sessionIds"},
		{"empty session id", PurgeRequest{GroupID: "g", SessionIDs: []string{"s", " "}, Reason: ReasonSealed}, "sessionIds[1]"},
		{"unknown reason", PurgeRequest{GroupID: "g", SessionIDs: []string{"s"}, Reason: "bored"}, "reason"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := c.Purge(context.Background(), tt.req)
			e, ok := apperr.As(err)
			if !ok || e.Kind != apperr.KindInvalid || e.Code != CodeInvalidRequest {
				t.Fatalf("%v, want KindInvalid %s", err, CodeInvalidRequest)
			}
			found := false
			for _, f := range e.Fields {
				found = found || f.Field == tt.field
			}
			if !found {
				t.Fatalf("fields %+v, want %s", e.Fields, tt.field)
			}
		})
	}
	if len(got()) != 0 {
		t.Fatalf("%d requests sent for invalid input", len(got()))
	}
}

func TestNewChecksConfiguration(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, url, secret, errHas string
	}{
		{"https", "https://portal.example.com/api", testSecret, ""},
		{"loopback http", "http://127.0.0.1:8080", testSecret, ""},
		{"localhost http", "http://localhost:8080/", testSecret, ""},
		{"ipv6 loopback", "http://[::1]:9000", testSecret, ""},
		{"remote http", "http://portal.example.com", testSecret, "https"},
		{"relative", "/v1", testSecret, "absolute"},
		{"query", "https://portal.example.com/?a=1", testSecret, "query"},
		{"credentials", "https://u:p@portal.example.com", testSecret, "credentials"},
		{"ftp", "ftp://portal.example.com", testSecret, "https"},
		{"short secret", "https://portal.example.com", "short", "at least"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := New(tt.url, tt.secret)
			if tt.errHas == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.errHas) {
				t.Fatalf("%v, want an error about %q", err, tt.errHas)
			}
			if strings.Contains(err.Error(), tt.secret) {
				t.Fatal("the error shows the secret")
			}
		})
	}
}
