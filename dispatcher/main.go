// Command dispatcher is the custom handler of the dispatcher Functions app: every HTTP route of
// the service. The Functions host starts it with FUNCTIONS_CUSTOMHANDLER_PORT; configuration
// comes from app settings (environment variables), validated at start.
package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/esign-svc/esign/dispatcher/app"
	"github.com/esign-svc/esign/shared/logging"
	"github.com/esign-svc/esign/shared/version"
)

func main() {
	if err := realMain(); err != nil {
		fmt.Fprintln(os.Stderr, "dispatcher:", err)
		os.Exit(1)
	}
}

func realMain() error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := logging.New(os.Stdout, "dispatcher", version.Engine)
	cfg, err := app.Load(os.LookupEnv)
	if err != nil {
		logger.Error().Err(err).Msg("invalid configuration")
		return err
	}
	logger.Info().Interface("settings", cfg.Settings).Msg("starting")
	deps, err := app.Build(cfg, logger)
	if err != nil {
		return err
	}
	handler, err := app.New(ctx, deps)
	if err != nil {
		return err
	}
	srv := &http.Server{Addr: "127.0.0.1:" + cfg.Port, Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	logger.Info().Msg("stopped")
	return nil
}
