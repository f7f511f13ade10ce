package app

import (
	"context"
	"fmt"
	"net/http"

	"github.com/rs/zerolog"

	"github.com/esign-svc/esign/dispatcher/health"
	"github.com/esign-svc/esign/shared/auth"
	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/licence"
	"github.com/esign-svc/esign/shared/logging"
	"github.com/esign-svc/esign/shared/version"
)

// InvokedFunctions are the functions whose function.json has bindings besides the HTTP trigger
// and output (queue outputs): the host invokes them by name instead of forwarding. A test keeps
// this list equal to the function folders.
var InvokedFunctions = []string{}

// Deps are the built dependencies the handlers share.
type Deps struct {
	Config   Config
	Account  *azconn.Account
	Verifier *auth.Verifier
	Licence  *licence.Licence
	Logger   zerolog.Logger
}

// Build makes the dependencies from the configuration.
func Build(cfg Config, logger zerolog.Logger) (*Deps, error) {
	acct, err := azconn.New(cfg.Storage)
	if err != nil {
		return nil, err
	}
	ver, err := auth.NewVerifier(cfg.Auth)
	if err != nil {
		return nil, err
	}
	var lic *licence.Licence
	if cfg.LicencePath != "" {
		lic, err = licence.Load(cfg.LicencePath, cfg.LicencePublicKey)
	} else {
		lic, err = licence.Parse(cfg.LicenceText, cfg.LicencePublicKey)
	}
	if err != nil {
		return nil, fmt.Errorf("licence: %w", err)
	}
	return &Deps{Config: cfg, Account: acct, Verifier: ver, Licence: lic, Logger: logger}, nil
}

// New builds the dispatcher's handler: the /api routes behind the logging middleware, served
// both forwarded (plain HTTP) and invoked (by function name through funcproto).
func New(ctx context.Context, d *Deps) (http.Handler, error) {
	mux := http.NewServeMux()
	mux.Handle("GET /api/health", health.Handler{Prober: d.Account, Version: version.Engine})

	api := logging.Middleware(d.Logger, mux)
	router := funcproto.NewRouter(api)
	for _, name := range InvokedFunctions {
		router.Handle(name, funcproto.HTTPInvocation(api))
	}
	return router, nil
}
