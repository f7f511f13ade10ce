// Command processor is the custom handler of the processor Functions app: the queue and timer
// jobs. The Functions host starts it with FUNCTIONS_CUSTOMHANDLER_PORT; configuration
// comes from app settings (environment variables), validated at start.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/esign-svc/esign/processor/app"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/logging"
	"github.com/esign-svc/esign/shared/version"
)

func main() {
	if err := realMain(); err != nil {
		fmt.Fprintln(os.Stderr, "processor:", err)
		os.Exit(1)
	}
}

func realMain() error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := logging.New(os.Stdout, "processor", version.Engine)
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
	if err := funcproto.Serve(ctx, cfg.Port, handler); err != nil {
		return err
	}
	logger.Info().Msg("stopped")
	return nil
}
