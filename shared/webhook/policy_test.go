package webhook

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/callbacksig"
)

func TestPolicyCheckURL(t *testing.T) {
	t.Parallel()
	strict := Policy{}
	local := Policy{AllowLoopback: true}
	private := Policy{AllowPrivate: true}
	tests := []struct {
		name   string
		policy Policy
		url    string
		errHas string // "" = allowed
	}{
		{"https public", strict, "https://hooks.example.com/esign?tenant=t1", ""},
		{"https public address", strict, "https://93.184.216.34/hook", ""},
		{"http public", strict, "http://hooks.example.com/hook", "https"},
		{"http public, loopback allowed", local, "http://hooks.example.com/hook", "loopback host"},
		{"ftp", strict, "ftp://hooks.example.com/hook", "https"},
		{"relative", strict, "/hook", "absolute"},
		{"no host", strict, "https:///hook", "absolute"},
		{"opaque", strict, "https:hooks.example.com", "absolute"},
		{"credentials", strict, "https://u:p@hooks.example.com/hook", "credentials"},
		{"fragment", strict, "https://hooks.example.com/hook#x", "fragment"},
		{"empty fragment", strict, "https://hooks.example.com/hook#", "fragment"},
		{"localhost", strict, "https://localhost/hook", "loopback"},
		{"localhost with a dot", strict, "https://LOCALHOST./hook", "loopback"},
		{"name below localhost", strict, "https://api.localhost/hook", "loopback"},
		{"127.0.0.1", strict, "https://127.0.0.1:8443/hook", "loopback"},
		{"127.9.9.9", strict, "https://127.9.9.9/hook", "loopback"},
		{"::1", strict, "https://[::1]/hook", "loopback"},
		{"mapped loopback", strict, "https://[::ffff:127.0.0.1]/hook", "loopback"},
		{"10/8", strict, "https://10.1.2.3/hook", "private"},
		{"172.16/12", strict, "https://172.20.0.1/hook", "private"},
		{"192.168/16", strict, "https://192.168.1.1/hook", "private"},
		{"metadata link-local", strict, "https://169.254.169.254/latest", "link-local"},
		{"shared 100.64/10", strict, "https://100.64.0.1/hook", "private"},
		{"unique local v6", strict, "https://[fd00::1]/hook", "private"},
		{"link-local v6", strict, "https://[fe80::1]/hook", "link-local"},
		{"mapped private", strict, "https://[::ffff:10.0.0.1]/hook", "private"},
		{"unspecified", local, "https://0.0.0.0/hook", "unspecified"},
		{"multicast", private, "https://224.0.0.1/hook", "multicast"},
		{"loopback allowed over http", local, "http://127.0.0.1:8080/hook", ""},
		{"localhost allowed over http", local, "http://localhost:7071/hook", ""},
		{"loopback allowed is not private allowed", local, "https://10.1.2.3/hook", "private"},
		{"private allowed", private, "https://10.1.2.3/hook", ""},
		{"private allowed is not loopback allowed", private, "https://127.0.0.1/hook", "loopback"},
		{"private allowed is not http allowed", private, "http://10.1.2.3/hook", "https"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			u, err := tt.policy.CheckURL(tt.url)
			if tt.errHas == "" {
				if err != nil || u == nil {
					t.Fatalf("%v, want allowed", err)
				}
				return
			}
			if !errors.Is(err, ErrURLRefused) || !strings.Contains(err.Error(), tt.errHas) {
				t.Fatalf("%v, want a refusal about %q", err, tt.errHas)
			}
			if strings.Contains(err.Error(), "example.com") || strings.Contains(err.Error(), "tenant") {
				t.Fatalf("the refusal repeats the URL: %v", err)
			}
		})
	}
}

func TestPolicyAtDialTime(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		policy  Policy
		address string
		allowed bool
	}{
		{"public v4", Policy{}, "93.184.216.34:443", true},
		{"public v6", Policy{}, "[2606:2800:220:1:248:1893:25c8:1946]:443", true},
		{"loopback", Policy{}, "127.0.0.1:443", false},
		{"loopback allowed", Policy{AllowLoopback: true}, "127.0.0.1:443", true},
		{"private", Policy{AllowLoopback: true}, "10.0.0.7:443", false},
		{"private allowed", Policy{AllowPrivate: true}, "10.0.0.7:443", true},
		{"metadata", Policy{}, "169.254.169.254:80", false},
		{"unspecified", Policy{AllowLoopback: true, AllowPrivate: true}, "0.0.0.0:443", false},
		{"not an address", Policy{}, "hooks.example.com:443", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.policy.control("tcp", tt.address, nil)
			if (err == nil) != tt.allowed {
				t.Fatalf("%v, want allowed %v", err, tt.allowed)
			}
			if err != nil && !errors.Is(err, ErrURLRefused) {
				t.Fatalf("%v does not match ErrURLRefused", err)
			}
		})
	}
}

func TestClientWithPolicy(t *testing.T) {
	t.Parallel()
	t.Run("refused URL is permanent and not sent", func(t *testing.T) {
		t.Parallel()
		rc := newReceiver(t, []int{http.StatusOK})
		_, err := mustNew(t, WithPolicy(Policy{})).Post(context.Background(), request(rc.srv.URL))
		if !errors.Is(err, ErrPermanent) || !errors.Is(err, ErrURLRefused) {
			t.Fatalf("%v, want permanent, ErrURLRefused", err)
		}
		if n := len(rc.requests()); n != 0 {
			t.Fatalf("%d requests sent to a refused URL", n)
		}
	})
	t.Run("allowed loopback is sent", func(t *testing.T) {
		t.Parallel()
		rc := newReceiver(t, []int{http.StatusOK})
		at := time.Date(2026, 11, 1, 9, 30, 0, 0, time.UTC)
		if _, err := mustNew(t, WithPolicy(Policy{AllowLoopback: true}), WithClock(func() time.Time { return at })).Post(context.Background(), request(rc.srv.URL)); err != nil {
			t.Fatal(err)
		}
		if r := rc.requests(); len(r) != 1 || r[0].sig != callbacksig.Sign(testSecret, at, []byte(testBody)) {
			t.Fatalf("requests %+v, want one signed", r)
		}
	})
	t.Run("the dial-time check refuses what the URL check let through", func(t *testing.T) {
		t.Parallel()
		rc := newReceiver(t, []int{http.StatusOK})
		c := mustNew(t, WithPolicy(Policy{AllowLoopback: true}))
		// The URL passes; the connection is then made under a stricter rule, as when a public
		// name resolves to a loopback address.
		c.http.Transport = Policy{}.guard(nil)
		_, err := c.Post(context.Background(), request(rc.srv.URL))
		if !errors.Is(err, ErrPermanent) || !errors.Is(err, ErrURLRefused) {
			t.Fatalf("%v, want permanent, ErrURLRefused", err)
		}
		if n := len(rc.requests()); n != 0 {
			t.Fatalf("%d requests reached a refused address", n)
		}
	})
}

func TestParseBaseURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, url, want, errHas string
	}{
		{"https", "https://portal.example.com/api/", "https://portal.example.com/api", ""},
		{"private https", "https://10.0.0.4/api", "https://10.0.0.4/api", ""},
		{"loopback http", "http://127.0.0.1:8080", "http://127.0.0.1:8080", ""},
		{"localhost http", " http://localhost:8080/ ", "http://localhost:8080", ""},
		{"ipv6 loopback", "http://[::1]:9000", "http://[::1]:9000", ""},
		{"remote http", "http://portal.example.com", "", "https"},
		{"relative", "/v1", "", "absolute"},
		{"query", "https://portal.example.com/?a=1", "", "query"},
		{"empty query", "https://portal.example.com/api?", "", "query"},
		{"fragment", "https://portal.example.com/#a", "", "fragment"},
		{"credentials", "https://u:p@portal.example.com", "", "credentials"},
		{"ftp", "ftp://portal.example.com", "", "https"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			u, err := ParseBaseURL(tt.url)
			if tt.errHas == "" {
				if err != nil || u.String() != tt.want {
					t.Fatalf("%v %v, want %s", u, err, tt.want)
				}
				return
			}
			if !errors.Is(err, ErrURLRefused) || !strings.Contains(err.Error(), tt.errHas) {
				t.Fatalf("%v, want a refusal about %q", err, tt.errHas)
			}
		})
	}
}
