package app

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/rs/zerolog"

	"github.com/esign-svc/esign/dispatcher/callback"
	"github.com/esign-svc/esign/dispatcher/esignapi"
	"github.com/esign-svc/esign/dispatcher/health"
	"github.com/esign-svc/esign/dispatcher/portal"
	"github.com/esign-svc/esign/shared/auth"
	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/azure/blobstore"
	"github.com/esign-svc/esign/shared/esign/sessionstore"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/licence"
	"github.com/esign-svc/esign/shared/logging"
	"github.com/esign-svc/esign/shared/tokens"
	"github.com/esign-svc/esign/shared/version"
)

// InvokedFunctions are the functions whose function.json has bindings besides the HTTP trigger
// and output (queue outputs): the host invokes them by name instead of forwarding. A test keeps
// this list equal to the function folders.
var InvokedFunctions = []string{"CreateSession", "ResendInvite", "RevokeSession", "PortalDecline", "Callback"}

// Deps are the built dependencies the handlers share.
type Deps struct {
	Config   Config
	Account  *azconn.Account
	Verifier *auth.Verifier
	Licence  *licence.Licence
	Sessions *sessionstore.Store
	Blobs    *blobstore.Store
	Tokens   *tokens.Codec
	Logger   zerolog.Logger
}

// Table names of the signing sessions.
const (
	TableSessions = "esignsessions"
	TableIndex    = "esignindex"
)

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
	sessions, err := sessionstore.New(acct, TableSessions, TableIndex)
	if err != nil {
		return nil, err
	}
	return &Deps{Config: cfg, Account: acct, Verifier: ver, Licence: lic, Sessions: sessions,
		Blobs: blobstore.New(acct), Tokens: tokens.NewCodec(cfg.Tokens), Logger: logger}, nil
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
	(&esignapi.API{
		Store: d.Sessions, Blobs: d.Blobs, Tokens: d.Tokens, Hasher: d.Config.EmailHasher, Cipher: d.Config.PIICipher,
		Verifier: d.Verifier, Licence: d.Licence, PortalURL: d.Config.PortalURL, Now: time.Now,
	}).Routes(mux)
	(&portal.API{
		Store: d.Sessions, Blobs: d.Blobs, Tokens: d.Tokens, Lapsed: portal.LapsedCodec(d.Config.Tokens),
		PortalOrigin: d.Config.PortalOrigin, Now: time.Now,
	}).Routes(mux)
	(&callback.API{Store: d.Sessions, Tokens: d.Tokens, Secrets: d.Config.CallbackSecrets, Now: time.Now}).Routes(mux)

	api := logging.Middleware(d.Logger, mux)
	router := funcproto.NewRouter(api)
	for _, name := range InvokedFunctions {
		router.Handle(name, funcproto.HTTPInvocation(api))
	}
	return router, nil
}
