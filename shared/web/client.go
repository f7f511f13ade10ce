package web

import (
	"net"
	"net/http"
	"strings"

	"github.com/esign-svc/esign/shared/text"
)

// ClientIP is the caller's address: the first X-Forwarded-For entry (the Functions front end
// sets it), else the connection's remote address. It is evidence, not authentication.
func ClientIP(r *http.Request) string {
	if xff := r.Header.Get("X-Forwarded-For"); xff != "" {
		first := strings.TrimSpace(strings.Split(xff, ",")[0])
		if host, _, err := net.SplitHostPort(first); err == nil {
			first = host
		}
		if ip := net.ParseIP(strings.Trim(first, "[]")); ip != nil {
			return ip.String()
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	if ip := net.ParseIP(host); ip != nil {
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
