package webhook

import (
	"errors"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
)

// ErrURLRefused is what every refusal by a Policy or ParseBaseURL matches (errors.Is).
var ErrURLRefused = errors.New("webhook: URL refused")

// urlError is a refusal; its text says what is wrong and never repeats the URL (a callback URL
// may carry a token in its query).
type urlError struct{ reason string }

func (e *urlError) Error() string        { return e.reason }
func (e *urlError) Is(target error) bool { return target == ErrURLRefused }

func refuse(reason string) error { return &urlError{reason: reason} }

// Policy is DESIGN 10's rule for outbound URLs a caller did not configure itself (a workflow's
// callbackUrl, a batch webhook): https only; http only on a loopback host, and loopback and
// private addresses only when a setting allows them. The zero Policy is the strict one.
type Policy struct {
	// AllowLoopback admits loopback hosts (localhost, 127.0.0.0/8, ::1), over http too: local
	// development and tests.
	AllowLoopback bool
	// AllowPrivate admits private, shared (100.64/10), link-local and unique-local addresses.
	AllowPrivate bool
}

// CheckURL checks raw against the policy: absolute http(s), a host, no credentials, no fragment;
// https unless the host is loopback and loopback is allowed; a host that is an address (or a
// localhost name) of an allowed class. A query is allowed. A host name is checked again at dial
// time by a Client with WithPolicy, on the address it resolves to. Errors match ErrURLRefused and
// say what is wrong without repeating the URL.
func (p Policy) CheckURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "" {
		return nil, refuse("must be an absolute https URL")
	}
	if u.User != nil {
		return nil, refuse("must not carry credentials")
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return nil, refuse("must not have a fragment")
	}
	host := u.Hostname()
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && p.AllowLoopback && loopbackName(host):
	default:
		if p.AllowLoopback {
			return nil, refuse("must be https (http is allowed only on a loopback host)")
		}
		return nil, refuse("must be https")
	}
	if loopbackName(host) {
		if !p.AllowLoopback {
			return nil, refuse("must not name a loopback host")
		}
		return u, nil
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if err := p.checkAddr(a); err != nil {
			return nil, err
		}
	}
	return u, nil
}

// ParseBaseURL checks the base URL of a service the operator configures (PORTAL_API_URL,
// NOTIFICATION_SERVICE_URL): absolute, https (http only on a loopback host), no credentials,
// query or fragment; private addresses are allowed (the operator chose them). The returned URL
// has no trailing slash. Errors match ErrURLRefused and say what is wrong.
func ParseBaseURL(raw string) (*url.URL, error) {
	trimmed := strings.TrimRight(strings.TrimSpace(raw), "/")
	u, err := Policy{AllowLoopback: true, AllowPrivate: true}.CheckURL(trimmed)
	if err != nil {
		return nil, err
	}
	if u.RawQuery != "" || u.ForceQuery {
		return nil, refuse("must not have a query")
	}
	return u, nil
}

// loopbackName says whether host is a loopback address or a localhost name (RFC 6761).
func loopbackName(host string) bool {
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(h)
	return err == nil && a.Unmap().IsLoopback()
}

// cgnat is the shared address space of RFC 6598, private in all but name.
var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// checkAddr refuses an address of a class the policy does not allow. The unspecified address
// (which reaches this host) and multicast are refused always.
func (p Policy) checkAddr(a netip.Addr) error {
	a = a.Unmap()
	switch {
	case a.IsUnspecified() || a.IsMulticast():
		return refuse("must not name an unspecified or multicast address")
	case a.IsLoopback():
		if !p.AllowLoopback {
			return refuse("must not name a loopback address")
		}
	case a.IsPrivate() || a.IsLinkLocalUnicast() || cgnat.Contains(a):
		if !p.AllowPrivate {
			return refuse("must not name a private or link-local address")
		}
	}
	return nil
}

// control is a net.Dialer Control: it checks the address a host name resolved to, so a public
// name pointing at a private address is refused too.
func (p Policy) control(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return refuse("must resolve to an address")
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return refuse("must resolve to an address")
	}
	return p.checkAddr(a)
}
