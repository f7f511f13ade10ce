package operator

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/callbacksig"
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/settings"
	"github.com/esign-svc/esign/shared/webhook"
)

const testKey = "0123456789abcdef0123456789abcdef-operator"

// fakeService checks each request as the operator's service would and records what it got.
type fakeService struct {
	t      *testing.T
	status int
	mu     sync.Mutex
	got    []map[string]any
	keys   []string
}

func (f *fakeService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	switch {
	case r.Method != http.MethodPost || r.URL.Path != "/v1/messages":
		f.t.Errorf("request %s %s", r.Method, r.URL.Path)
	case r.Header.Get("Content-Type") != "application/json":
		f.t.Errorf("Content-Type %q", r.Header.Get("Content-Type"))
	}
	if err := callbacksig.Verify(r.Header.Get(callbacksig.Header), body, time.Now(), []string{testKey}); err != nil {
		f.t.Errorf("signature does not verify: %v", err)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(string(body)))
	if err := dec.Decode(&m); err != nil {
		f.t.Errorf("body is not JSON: %v", err)
	}
	key := r.Header.Get(IdempotencyHeader)
	if len(key) != 64 || strings.Contains(key, "@") {
		f.t.Errorf("Idempotency-Key %q", key)
	}
	f.mu.Lock()
	f.got = append(f.got, m)
	f.keys = append(f.keys, key)
	f.mu.Unlock()
	w.WriteHeader(f.status)
}

func invitation() notify.Message {
	return notify.Message{Channel: notify.Email, Kind: notify.KindInvitation, To: "Signer@Example.com",
		Subject: "Please sign: D", Text: "text https://p/sign?token=x", HTML: "<p>h</p>", CorrelationID: "INV-1"}
}

func TestSendShapeSignatureAndIdempotency(t *testing.T) {
	t.Parallel()
	f := &fakeService{t: t, status: http.StatusAccepted}
	srv := httptest.NewServer(f)
	defer srv.Close()
	c, err := New(srv.URL+"/", testKey, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := notify.WithDedupeID(context.Background(), "jti-1")
	m := invitation()
	if err := c.Send(ctx, m); err != nil {
		t.Fatal(err)
	}
	if err := c.Send(ctx, m); err != nil { // a redelivery: same key
		t.Fatal(err)
	}
	if err := c.Send(notify.WithDedupeID(context.Background(), "jti-2"), m); err != nil { // a new link
		t.Fatal(err)
	}
	want := map[string]any{"channel": "email", "kind": "invitation", "to": "Signer@Example.com", "subject": "Please sign: D",
		"text": "text https://p/sign?token=x", "html": "<p>h</p>", "correlationId": "INV-1"}
	if len(f.got) != 3 {
		t.Fatalf("%d requests", len(f.got))
	}
	for k, v := range want {
		if f.got[0][k] != v {
			t.Errorf("body %s = %v, want %v", k, f.got[0][k], v)
		}
	}
	if len(f.got[0]) != len(want) {
		t.Errorf("body has extra members: %v", f.got[0])
	}
	if f.keys[0] != f.keys[1] || f.keys[0] == f.keys[2] {
		t.Errorf("keys %v: a redelivery must repeat the key, a new link must change it", f.keys)
	}
	if f.keys[0] != IdempotencyKey(m, "jti-1", nil) {
		t.Error("key is not IdempotencyKey(m, dedupe id)")
	}
	lower := m
	lower.To = "signer@example.com"
	if IdempotencyKey(lower, "jti-1", nil) != f.keys[0] {
		t.Error("recipient case changes the key")
	}
	other := m
	other.Kind = notify.KindSignerCompleted
	if IdempotencyKey(other, "jti-1", nil) == f.keys[0] {
		t.Error("kind does not change the key")
	}
	// Without a dedupe id the body decides.
	if IdempotencyKey(m, "", []byte("a")) == IdempotencyKey(m, "", []byte("b")) {
		t.Error("body does not change the fallback key")
	}
}

func TestSendErrorKinds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status   int
		wantKind apperr.Kind
		wantCode string
	}{
		{http.StatusBadRequest, apperr.KindInvalid, CodeRejected},
		{http.StatusUnprocessableEntity, apperr.KindInvalid, CodeRejected},
		{http.StatusTooManyRequests, apperr.KindUnavailable, CodeUnavailable},
		{http.StatusInternalServerError, apperr.KindUnavailable, CodeUnavailable},
		{http.StatusServiceUnavailable, apperr.KindUnavailable, CodeUnavailable},
		{http.StatusTooEarly, apperr.KindUnavailable, CodeUnavailable},
		{http.StatusFound, apperr.KindInvalid, CodeRejected}, // a redirect is not followed
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			t.Parallel()
			f := &fakeService{t: t, status: tt.status}
			srv := httptest.NewServer(f)
			defer srv.Close()
			c, err := New(srv.URL, testKey, nil)
			if err != nil {
				t.Fatal(err)
			}
			err = c.Send(context.Background(), invitation())
			e, ok := apperr.As(err)
			if !ok || e.Kind != tt.wantKind || e.Code != tt.wantCode {
				t.Fatalf("err %v, want kind %v code %s", err, tt.wantKind, tt.wantCode)
			}
			// A queue job may test the webhook class through the apperr wrapper.
			if errors.Is(err, webhook.ErrRetryable) != (tt.wantKind == apperr.KindUnavailable) {
				t.Fatalf("err %v: errors.Is(webhook.ErrRetryable) disagrees with kind %v", err, tt.wantKind)
			}
			if len(f.got) != 1 {
				t.Fatalf("%d requests, want 1", len(f.got))
			}
			if strings.Contains(err.Error(), "xample.com") {
				t.Fatalf("error carries the address: %v", err)
			}
		})
	}
}

func TestSendTimeoutAndUnreachableAreRetryable(t *testing.T) {
	t.Parallel()
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-block }))
	defer srv.Close()
	defer close(block)
	c, err := New(srv.URL, testKey, &http.Client{Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Send(context.Background(), invitation()); apperr.KindOf(err) != apperr.KindUnavailable {
		t.Fatalf("time-out: %v, want KindUnavailable", err)
	}
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	c2, _ := New(closed.URL, testKey, nil)
	if err := c2.Send(context.Background(), invitation()); apperr.KindOf(err) != apperr.KindUnavailable {
		t.Fatalf("unreachable: %v, want KindUnavailable", err)
	}
	if err := c2.Send(context.Background(), notify.Message{Channel: notify.Email, Kind: notify.KindInvitation}); apperr.KindOf(err) != apperr.KindInvalid {
		t.Fatalf("incomplete message: %v, want KindInvalid", err)
	}
}

func TestConfiguration(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		settings map[string]string
		wantErr  string // "" = ok
	}{
		{"https", map[string]string{SettingURL: "https://notify.example.net/base", SettingKey: testKey}, ""},
		{"http loopback", map[string]string{SettingURL: "http://127.0.0.1:9999", SettingKey: testKey}, ""},
		{"http elsewhere", map[string]string{SettingURL: "http://notify.example.net", SettingKey: testKey}, SettingURL},
		{"query", map[string]string{SettingURL: "https://notify.example.net/?a=1", SettingKey: testKey}, SettingURL},
		{"no url", map[string]string{SettingKey: testKey}, SettingURL},
		{"short key", map[string]string{SettingURL: "https://notify.example.net", SettingKey: "short"}, SettingKey},
		{"no key", map[string]string{SettingURL: "https://notify.example.net"}, SettingKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := FromLookup(settings.MapLookup(tt.settings))
			if tt.wantErr == "" {
				if err != nil || s == nil {
					t.Fatalf("err %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err %v, want one naming %s", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), testKey) {
				t.Fatal("error carries the key")
			}
		})
	}
}
