package webhook

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestSignStandardVector: the Standard Webhooks reference vector (its libraries' tests).
func TestSignStandardVector(t *testing.T) {
	t.Parallel()
	got, err := SignStandard("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek",
		time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; got != want {
		t.Fatalf("signature %s, want %s", got, want)
	}
}

// TestPostStandardHeaders: a request with Secrets carries webhook-id (its idempotency key),
// webhook-timestamp and one signature per secret, which VerifyStandard accepts for either
// secret and refuses for another secret, a changed body or an old timestamp.
func TestPostStandardHeaders(t *testing.T) {
	t.Parallel()
	oldS, _ := NewSecret()
	newS, _ := NewSecret()
	other, _ := NewSecret()
	got := make(chan http.Header, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Clone()
	}))
	defer srv.Close()
	c, err := NewUnsigned(WithPolicy(Policy{AllowLoopback: true}))
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"id":"evt_1"}`)
	if _, err := c.Post(context.Background(), Request{URL: srv.URL, Body: body, IdempotencyKey: "evt_1", Secrets: []string{newS, oldS}}); err != nil {
		t.Fatal(err)
	}
	h := <-got
	if h.Get(HeaderID) != "evt_1" || len(strings.Fields(h.Get(HeaderSignature))) != 2 || h.Get("X-Esign-Signature") != "" {
		t.Fatalf("headers %v", h)
	}
	now := time.Now()
	for _, s := range []string{oldS, newS} {
		if id, err := VerifyStandard([]string{s}, h, body, now); err != nil || id != "evt_1" {
			t.Fatalf("verify: %q %v", id, err)
		}
	}
	if _, err := VerifyStandard([]string{other}, h, body, now); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("another secret: %v", err)
	}
	if _, err := VerifyStandard([]string{newS}, h, []byte(`{"id":"evt_2"}`), now); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("changed body: %v", err)
	}
	if _, err := VerifyStandard([]string{newS}, h, body, now.Add(Tolerance+time.Minute)); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("old timestamp: %v", err)
	}
	if _, err := c.Post(context.Background(), Request{URL: srv.URL, Body: body, IdempotencyKey: "evt_1", Secrets: []string{"whsec_!!"}}); !errors.Is(err, ErrPermanent) {
		t.Fatalf("bad secret: %v", err)
	}
}
