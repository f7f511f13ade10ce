// Command portal runs the reference signing portal (package server) until SIGINT or SIGTERM.
// Settings, from the environment (make run passes .local/dev.env):
//
//	PORTAL_URL               the portal's public base, e.g. http://127.0.0.1:7080
//	BASE_URL                 the service's base; its routes are {BASE_URL}/api/...
//	HOST_KEY                 the function key of the service's callback route
//	PORTAL_CALLBACK_SECRETS  comma-separated; the first signs callbacks, any verifies a purge
//	PORTAL_LISTEN            host:port to listen on (default: PORTAL_URL's host and port)
//	PORTAL_TRUSTED_PROXY_HOPS proxies in front of the portal that append X-Forwarded-For (default 0)
package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/esign-svc/esign/portal/server"
	"github.com/esign-svc/esign/shared/callbacksig"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Getenv); err != nil {
		fmt.Fprintln(os.Stderr, "portal:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, env func(string) string) error {
	cfg, listen, err := config(env)
	if err != nil {
		return err
	}
	h, err := server.New(cfg)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("PORTAL_LISTEN: %w", err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	fmt.Printf("portal: serving %s (listening on %s, service %s)\n", cfg.PortalURL, ln.Addr(), cfg.ServiceURL)
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// config reads the settings; errors name the setting at fault.
func config(env func(string) string) (server.Config, string, error) {
	cfg := server.Config{PortalURL: env("PORTAL_URL"), ServiceURL: env("BASE_URL"), FunctionKey: env("HOST_KEY")}
	for _, name := range []string{"PORTAL_URL", "BASE_URL", "HOST_KEY", "PORTAL_CALLBACK_SECRETS"} {
		if env(name) == "" {
			return cfg, "", fmt.Errorf("%s is required", name)
		}
	}
	secrets, err := callbacksig.ParseSecrets(env("PORTAL_CALLBACK_SECRETS"))
	if err != nil {
		return cfg, "", fmt.Errorf("PORTAL_CALLBACK_SECRETS: %w", err)
	}
	cfg.Secrets = secrets
	if v := env("PORTAL_TRUSTED_PROXY_HOPS"); v != "" {
		if cfg.TrustedProxyHops, err = strconv.Atoi(v); err != nil || cfg.TrustedProxyHops < 0 {
			return cfg, "", fmt.Errorf("PORTAL_TRUSTED_PROXY_HOPS: %q is not a whole number from 0", v)
		}
	}
	listen := env("PORTAL_LISTEN")
	if listen == "" {
		u, err := url.Parse(cfg.PortalURL)
		if err != nil || u.Host == "" {
			return cfg, "", fmt.Errorf("PORTAL_URL: %q is not an absolute URL", cfg.PortalURL)
		}
		listen = u.Host
		if u.Port() == "" {
			listen = net.JoinHostPort(u.Hostname(), map[string]string{"https": "443"}[u.Scheme]+map[string]string{"http": "80"}[u.Scheme])
		}
	}
	return cfg, listen, nil
}
