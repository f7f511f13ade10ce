// Package server is the reference signing portal (DESIGN 12): the operator's part of the
// service, built small. It serves the signer's, recipient's and workflow participant's pages as
// embedded static assets (pdf.js included, nothing fetched from elsewhere), and does the two
// things a browser must not: it signs the signature callback with the shared portal secret
// (POST {base}/portal-api/sign) and checks the processor's signed purge (POST {base}/v1/purge,
// shared/portalclient). Everything else the pages do, they do by calling the dispatcher's
// portal, delivery and workflow routes directly (CORS for the portal origin).
//
// The only state is in memory and temporary: the outcome of each slot's forwarded signature
// (so that a repeated submit is answered, not sent twice), dropped by the purge or after a day.
package server

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/esign-svc/esign/shared/callbacksig"
	"github.com/esign-svc/esign/shared/web"
)

// Config is what the portal needs. Only main reads the environment.
type Config struct {
	// PortalURL is the portal's public base (PORTAL_URL), e.g. https://sign.example.com; a path
	// (https://example.com/portal) puts every page below it.
	PortalURL string
	// ServiceURL is the service's base (BASE_URL): its routes are {ServiceURL}/api/...
	ServiceURL string
	// FunctionKey is the key of the callback route (HOST_KEY or the Callback function's key).
	FunctionKey string
	// Secrets are PORTAL_CALLBACK_SECRETS: the first signs callbacks; any verifies a purge.
	Secrets []string
	// TrustedProxyHops is how many proxies in front of the portal append to X-Forwarded-For
	// (the signer's address reported in the callback); 0: the connection's address.
	TrustedProxyHops int
	Client           *http.Client     // calls to the service; nil: 15 s time-out
	Now              func() time.Time // nil: time.Now
}

// Server is the portal's HTTP handler.
type Server struct {
	cfg      Config
	base     *url.URL // PortalURL parsed; base.Path without a trailing slash
	api      string   // {ServiceURL}/api
	origin   string   // the portal's origin
	csp      string
	mux      *http.ServeMux
	attempts *attempts
}

// New checks cfg and builds the server. Errors name the setting at fault.
func New(cfg Config) (*Server, error) {
	base, err := absolute("PORTAL_URL", cfg.PortalURL)
	if err != nil {
		return nil, err
	}
	svc, err := absolute("BASE_URL", cfg.ServiceURL)
	if err != nil {
		return nil, err
	}
	if cfg.FunctionKey == "" {
		return nil, errors.New("HOST_KEY: the function key of the service's callback route is required")
	}
	if len(cfg.Secrets) == 0 {
		return nil, errors.New("PORTAL_CALLBACK_SECRETS: at least one secret is required")
	}
	for _, s := range cfg.Secrets {
		if len(s) < callbacksig.MinSecretLen {
			return nil, fmt.Errorf("PORTAL_CALLBACK_SECRETS: each secret must be at least %d bytes", callbacksig.MinSecretLen)
		}
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 15 * time.Second}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	base.Path = strings.TrimRight(base.Path, "/")
	s := &Server{cfg: cfg, base: base, api: strings.TrimRight(svc.String(), "/") + "/api",
		origin: base.Scheme + "://" + base.Host, mux: http.NewServeMux(), attempts: newAttempts(cfg.Now)}
	s.csp = contentSecurityPolicy(svc.Scheme + "://" + svc.Host)
	s.routes()
	return s, nil
}

func absolute(setting, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, fmt.Errorf("%s: %q must be an absolute http(s) URL without query, fragment or credentials", setting, raw)
	}
	return u, nil
}

// contentSecurityPolicy allows the portal's own scripts, styles, workers and images (data: and
// blob: for the QR code, the signature pad and pdf.js), and calls to itself and the service only.
func contentSecurityPolicy(serviceOrigin string) string {
	return strings.Join([]string{
		"default-src 'none'",
		"script-src 'self'",
		"style-src 'self'",
		"img-src 'self' data: blob:",
		"font-src 'self'",
		"connect-src 'self' " + serviceOrigin,
		"worker-src 'self'",
		"form-action 'self'",
		"base-uri 'none'",
		"frame-ancestors 'none'",
	}, "; ")
}

// ServeHTTP adds the security headers to every answer and serves the routes below the base path.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", s.csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=()")
	if s.base.Path != "" {
		rest, ok := strings.CutPrefix(r.URL.Path, s.base.Path)
		if !ok || (rest != "" && rest[0] != '/') {
			http.NotFound(w, r)
			return
		}
		r2 := r.Clone(r.Context())
		r2.URL.Path = cmp.Or(rest, "/")
		r2.URL.RawPath = ""
		r = r2
	}
	s.mux.ServeHTTP(w, r)
}

func (s *Server) routes() {
	s.mux.Handle("GET /static/", http.StripPrefix("/static/", staticHandler()))
	s.mux.HandleFunc("GET /sign", s.page("sign", "page.title.sign"))
	s.mux.HandleFunc("GET /transfer", s.page("sign", "page.title.transfer"))
	s.mux.HandleFunc("GET /deliver/{id}", s.page("deliver", "page.title.deliver"))
	s.mux.HandleFunc("GET /workflow/{id}", s.page("workflow", "page.title.workflow"))
	s.mux.HandleFunc("GET /workflow/{id}/review", s.page("review", "page.title.review"))
	s.mux.HandleFunc("GET /{$}", s.page("home", "page.title.home"))
	s.mux.Handle("POST /portal-api/sign", web.Handle(s.sign))
	s.mux.Handle("POST /v1/purge", web.Handle(s.purge))
	s.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
}
