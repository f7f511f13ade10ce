package client

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestSecretsNeverInClear: a request that carries the host key and the JWT, and the token
// request that carries the client secret, are refused to a plain-http host that is not
// loopback, and a redirect from https to http is not followed (the http server never hears
// the request); plain http to loopback (make run) works.
func TestSecretsNeverInClear(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var clear atomic.Int32
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		clear.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"access_token":"t","token_type":"Bearer","expires_in":3600,"deliveries":[]}`))
	}))
	defer plain.Close()
	down := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, plain.URL+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	}))
	defer down.Close()

	t.Run("https redirected to http", func(t *testing.T) {
		c := New(down.URL+"/api", "host-key", StaticToken("jwt"), WithHTTPClient(down.Client()))
		c.Retries = 0
		_, err := c.ListDeliveries(ctx, "c-1")
		if !errors.Is(err, ErrInsecureRedirect) {
			t.Fatalf("error %v, want ErrInsecureRedirect", err)
		}
		tokens := &ClientCredentials{TokenURL: down.URL + "/token", ClientID: "id", ClientSecret: "s3cr3t", Scope: "s", HTTP: down.Client()}
		if _, err := tokens.Token(ctx); !errors.Is(err, ErrInsecureRedirect) {
			t.Fatalf("token error %v, want ErrInsecureRedirect", err)
		}
		if n := clear.Load(); n != 0 {
			t.Fatalf("the http server heard %d requests", n)
		}
	})
	t.Run("http off loopback", func(t *testing.T) {
		c := New("http://esign.example.test/api", "host-key", StaticToken("jwt"))
		if _, err := c.ListDeliveries(ctx, "c-1"); !errors.Is(err, ErrInsecureURL) {
			t.Fatalf("error %v, want ErrInsecureURL", err)
		}
		tokens := &ClientCredentials{TokenURL: "http://login.example.test/t/oauth2/v2.0/token", ClientID: "id", ClientSecret: "s3cr3t", Scope: "s"}
		_, err := tokens.Token(ctx)
		if err == nil || !strings.Contains(err.Error(), "must be https") || strings.Contains(err.Error(), "s3cr3t") {
			t.Fatalf("token error %v", err)
		}
	})
	t.Run("loopback http works", func(t *testing.T) {
		before := clear.Load()
		tokens := &ClientCredentials{TokenURL: plain.URL + "/token", ClientID: "id", ClientSecret: "s3cr3t", Scope: "s"}
		c := New(plain.URL+"/api", "host-key", tokens)
		if _, err := c.ListDeliveries(ctx, "c-1"); err != nil {
			t.Fatal(err)
		}
		if clear.Load() != before+2 {
			t.Fatalf("want a token and a list request, got %d", clear.Load()-before)
		}
	})
}

// TestCheckRedirect: the policy alone.
func TestCheckRedirect(t *testing.T) {
	t.Parallel()
	req := func(u string) *http.Request { r, _ := http.NewRequest(http.MethodGet, u, nil); return r }
	for _, tc := range []struct {
		from, to string
		ok       bool
	}{
		{"https://a.example.test/x", "https://b.example.test/y", true},
		{"https://a.example.test/x", "http://a.example.test/y", false},
		{"https://a.example.test/x", "http://127.0.0.1/y", false},
		{"http://127.0.0.1:7071/x", "http://localhost:7071/y", true},
		{"http://127.0.0.1:7071/x", "http://[::1]:7071/y", true},
		{"http://127.0.0.1:7071/x", "http://esign.example.test/y", false},
		{"http://127.0.0.1:7071/x", "https://esign.example.test/y", true},
	} {
		err := CheckRedirect(req(tc.to), []*http.Request{req(tc.from)})
		if (err == nil) != tc.ok {
			t.Errorf("%s -> %s: %v, want ok=%v", tc.from, tc.to, err, tc.ok)
		}
	}
	via := make([]*http.Request, 10)
	for i := range via {
		via[i] = req("https://a.example.test/x")
	}
	if CheckRedirect(req("https://a.example.test/y"), via) == nil {
		t.Error("an eleventh redirect was followed")
	}
}
