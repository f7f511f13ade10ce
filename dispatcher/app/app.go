package app

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/rs/zerolog"

	"github.com/esign-svc/esign/dispatcher/health"
	"github.com/esign-svc/esign/shared/auth"
	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/azure/blobstore"
	"github.com/esign-svc/esign/shared/esign/sessionstore"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/licence"
	"github.com/esign-svc/esign/shared/logging"
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/notify/outbox"
	"github.com/esign-svc/esign/shared/notify/senders"
	"github.com/esign-svc/esign/shared/tokens"
	"github.com/esign-svc/esign/shared/version"
)

// area is one part of the API: its routes, and the functions of it whose function.json has
// bindings besides the HTTP trigger and output (queue outputs), which the host invokes by name
// instead of forwarding. Each area registers itself from its own file (esign.go, ...).
type area struct {
	name    string
	invoked []string
	routes  func(mux *http.ServeMux, d *Deps) error
}

var areas []area

// InvokedFunctions lists every area's invoked functions; a test keeps it equal to the function
// folders that have queue bindings.
func InvokedFunctions() []string {
	var out []string
	for _, a := range areas {
		out = append(out, a.invoked...)
	}
	return out
}

// Deps are the built dependencies the handlers share.
type Deps struct {
	Config   Config
	Account  *azconn.Account
	Verifier *auth.Verifier
	Licence  *licence.Licence
	Sessions *sessionstore.Store
	Blobs    *blobstore.Store
	Tokens   *tokens.Codec
	Senders  notify.Providers // e-mail and SMS (OTP codes)
	Outbox   *outbox.Outbox   // nil unless a channel uses the outbox
	Logger   zerolog.Logger
}

// Table names of the signing sessions.
const (
	TableSessions = "esignsessions"
	TableIndex    = "esignindex"
)

// Build makes the dependencies from the configuration.
func Build(cfg Config, logger zerolog.Logger) (*Deps, error) {
	storage := cfg.Storage
	storage.ApplicationID = "esign-dispatcher" // in the User-Agent of every storage request
	acct, err := azconn.New(storage)
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
	sessions, err := sessionstore.New(acct, TableSessions, TableIndex)
	if err != nil {
		return nil, err
	}
	send, box, err := senders.FromConfig(cfg.Lookup, acct)
	if err != nil {
		return nil, err
	}
	return &Deps{Config: cfg, Account: acct, Verifier: ver, Licence: lic, Sessions: sessions,
		Blobs: blobstore.New(acct), Tokens: tokens.NewCodec(cfg.Tokens), Senders: send, Outbox: box, Logger: logger}, nil
}

// New builds the dispatcher's handler: the /api routes behind the logging middleware, served
// both forwarded (plain HTTP) and invoked (by function name through funcproto).
func New(ctx context.Context, d *Deps) (http.Handler, error) {
	mux := http.NewServeMux()
	mux.Handle("GET /api/health", health.Handler{Prober: d.Account, Version: version.Engine})
	ensureCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := d.Sessions.Ensure(ensureCtx); err != nil {
		return nil, fmt.Errorf("signing-session tables: %w", err)
	}
	if d.Outbox != nil {
		if err := d.Outbox.Ensure(ensureCtx); err != nil {
			return nil, fmt.Errorf("outbox table: %w", err)
		}
	}
	for _, a := range areas {
		if err := a.routes(mux, d); err != nil {
			return nil, fmt.Errorf("%s: %w", a.name, err)
		}
	}

	api := logging.Middleware(d.Logger, mux)
	router := funcproto.NewRouter(api)
	for _, name := range InvokedFunctions() {
		router.Handle(name, funcproto.HTTPInvocation(api))
	}
	return router, nil
}
