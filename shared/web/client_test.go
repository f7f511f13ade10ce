package web

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestClientIPTakesTheAddressTheTrustedProxyAppended(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		xff    []string // X-Forwarded-For header lines
		remote string
		hops   int
		want   string
	}{
		{"front end only", []string{"203.0.113.7:51234"}, "10.0.0.1:80", 1, "203.0.113.7"},
		{"forged entry before it", []string{"198.51.100.66, 203.0.113.7:51234"}, "10.0.0.1:80", 1, "203.0.113.7"},
		{"forged entries, spaces, empties", []string{" 1.1.1.1 ,, 2.2.2.2,203.0.113.7 "}, "10.0.0.1:80", 1, "203.0.113.7"},
		{"two header lines", []string{"198.51.100.66", "203.0.113.7"}, "10.0.0.1:80", 1, "203.0.113.7"},
		{"two trusted proxies", []string{"198.51.100.66, 203.0.113.7, 10.1.1.1"}, "10.0.0.1:80", 2, "203.0.113.7"},
		{"fewer entries than proxies", []string{"203.0.113.7"}, "10.0.0.1:80", 3, "203.0.113.7"},
		{"ipv6 with port", []string{"1.1.1.1, [2001:db8::7]:443"}, "10.0.0.1:80", 1, "2001:db8::7"},
		{"bare ipv6", []string{"2001:db8::7"}, "10.0.0.1:80", 1, "2001:db8::7"},
		{"no header", nil, "192.0.2.9:4242", 1, "192.0.2.9"},
		{"no proxy trusted", []string{"198.51.100.66, 203.0.113.7"}, "192.0.2.9:4242", 0, "192.0.2.9"},
		{"appended entry is no address", []string{"203.0.113.7, unknown"}, "192.0.2.9:4242", 1, ""},
		{"remote address without port", nil, "192.0.2.9", 0, "192.0.2.9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = tc.remote
			for _, v := range tc.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if got := ClientIPBehind(r, tc.hops); got != tc.want {
				t.Fatalf("ClientIPBehind(%q, %d) = %q, want %q", tc.xff, tc.hops, got, tc.want)
			}
			var seen string
			TrustProxies(tc.hops, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { seen = ClientIP(r) })).
				ServeHTTP(httptest.NewRecorder(), r)
			if seen != tc.want {
				t.Fatalf("ClientIP behind TrustProxies(%d) = %q, want %q", tc.hops, seen, tc.want)
			}
		})
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("X-Forwarded-For", "198.51.100.66, 203.0.113.7")
	if got := ClientIP(r); got != "203.0.113.7" {
		t.Fatalf("ClientIP without the middleware = %q: the default is one trusted proxy", got)
	}
}
