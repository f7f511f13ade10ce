package app

import (
	"context"
	"net/http"

	"github.com/rs/zerolog"

	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/funcproto"
)

// Deps are the built dependencies the jobs share.
type Deps struct {
	Config  Config
	Account *azconn.Account
	Logger  zerolog.Logger
}

// Build makes the dependencies from the configuration.
func Build(cfg Config, logger zerolog.Logger) (*Deps, error) {
	acct, err := azconn.New(cfg.Storage)
	if err != nil {
		return nil, err
	}
	return &Deps{Config: cfg, Account: acct, Logger: logger}, nil
}

// New builds the processor's handler: one invocation route per queue or timer function, and the
// readiness ping. Anything else is 404: the processor has no HTTP routes.
func New(ctx context.Context, d *Deps) (http.Handler, error) {
	router := funcproto.NewRouter(http.NotFoundHandler())
	return router, nil
}
