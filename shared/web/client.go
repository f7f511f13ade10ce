package web

import (
	"net"
	"net/http"
	"strings"
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

// UserAgent is the request's User-Agent, cut to 512 bytes.
func UserAgent(r *http.Request) string {
	ua := r.UserAgent()
	if len(ua) > 512 {
		ua = ua[:512]
	}
	return ua
}
