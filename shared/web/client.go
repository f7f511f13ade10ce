package web

import (
	"context"
	"net"
	"net/http"
	"strings"

	"github.com/esign-svc/esign/shared/text"
)

// DefaultTrustedProxyHops is the number of proxies in front of the handler that append to
// X-Forwarded-For when none is configured: one, the Functions front end.
const DefaultTrustedProxyHops = 1

type clientIPKey struct{}

// TrustProxies resolves each request's client address once, behind hops trusted proxies (see
// ClientIPBehind), for ClientIP to answer.
func TrustProxies(hops int, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), clientIPKey{}, ClientIPBehind(r, hops))))
	})
}

// ClientIP is the caller's address as TrustProxies resolved it (ClientIPBehind with
// DefaultTrustedProxyHops for a request that did not pass it). It is evidence, not
// authentication.
func ClientIP(r *http.Request) string {
	if ip, ok := r.Context().Value(clientIPKey{}).(string); ok {
		return ip
	}
	return ClientIPBehind(r, DefaultTrustedProxyHops)
}

// ClientIPBehind is the caller's address behind hops trusted proxies, each of which appends
// the address it was called from to X-Forwarded-For: the hops-th entry from the right (the one
// the outermost trusted proxy appended; the leftmost when there are fewer), so entries a client
// sent itself are never taken. With hops 0, or without the header, it is the connection's
// remote address. An entry may carry a port ("203.0.113.7:51234", "[2001:db8::1]:443");
// the answer is the bare address, or "" when the chosen entry is none.
func ClientIPBehind(r *http.Request, hops int) string {
	var hopsSeen []string
	if hops > 0 {
		for _, v := range r.Header.Values("X-Forwarded-For") {
			for _, e := range strings.Split(v, ",") {
				if e = strings.TrimSpace(e); e != "" {
					hopsSeen = append(hopsSeen, e)
				}
			}
		}
	}
	if len(hopsSeen) == 0 {
		return address(r.RemoteAddr)
	}
	return address(hopsSeen[max(len(hopsSeen)-hops, 0)])
}

// address is the IP of "ip", "ip:port", "[ipv6]" or "[ipv6]:port", "" when it is none.
func address(s string) string {
	if host, _, err := net.SplitHostPort(s); err == nil {
		s = host
	}
	if ip := net.ParseIP(strings.Trim(s, "[]")); ip != nil {
		return ip.String()
	}
	return ""
}

// MaxUserAgent bounds the User-Agent recorded as evidence, in bytes.
const MaxUserAgent = 512

// UserAgent is the request's User-Agent as evidence records it: every control, line or
// paragraph separator, bidi override or isolate and every invalid UTF-8 byte replaced by
// U+FFFD, cut to MaxUserAgent bytes without splitting a character (text.Clean). A header is
// not something the caller typed, so its content never refuses the request.
func UserAgent(r *http.Request) string {
	return text.Clean(r.UserAgent(), MaxUserAgent)
}
