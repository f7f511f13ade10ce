package app

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/rs/zerolog"

	"github.com/esign-svc/esign/shared/appstatus"
	"github.com/esign-svc/esign/shared/auth"
	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/azure/blobstore"
	"github.com/esign-svc/esign/shared/delivery/deliverystore"
	"github.com/esign-svc/esign/shared/dispatch/batchstore"
	"github.com/esign-svc/esign/shared/document/documentstore"
	"github.com/esign-svc/esign/shared/esign/sessionstore"
	"github.com/esign-svc/esign/shared/event/webhookstore"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/graph"
	"github.com/esign-svc/esign/shared/licence"
	"github.com/esign-svc/esign/shared/licensing"
	"github.com/esign-svc/esign/shared/logging"
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/notify/outbox"
	"github.com/esign-svc/esign/shared/notify/senders"
	"github.com/esign-svc/esign/shared/template"
	"github.com/esign-svc/esign/shared/tokens"
	"github.com/esign-svc/esign/shared/web"
	"github.com/esign-svc/esign/shared/webhook"
	"github.com/esign-svc/esign/shared/workflow/workflowstore"
)

// Deps are the built dependencies the handlers share.
type Deps struct {
	Config     Config
	Account    *azconn.Account
	Verifier   *auth.Verifier
	Licence    *licence.Licence
	Licensing  *licensing.Client // LICENSING_URL's service; nil: the offline licence alone
	Sessions   *sessionstore.Store
	Deliveries *deliverystore.Store
	Documents  *documentstore.Store // rendered documents
	Batches    *batchstore.Store    // dispatch batches
	Workflows  *workflowstore.Store
	Webhooks   *webhookstore.Store // webhook subscriptions (DESIGN 17)
	// HookPolicy is the outbound URL policy of subscriptions (WEBHOOK_ALLOW_LOOPBACK), and
	// HookClient the signed-POST client under it (a subscription's ping).
	HookPolicy webhook.Policy
	HookClient *webhook.Client
	Templates  *template.Loader // template packages, cached by ETag
	// Graph validates sharePointTarget at delivery create time (the processor uploads); nil
	// without GRAPH_* settings: modes sharepoint and both are then refused (400).
	Graph   *graph.Client
	Blobs   *blobstore.Store
	Tokens  *tokens.Codec
	Senders notify.Providers // e-mail and SMS (OTP codes)
	Outbox  *outbox.Outbox   // nil unless a channel uses the outbox
	// Status holds what the processor found off at its start (/api/health reports it).
	Status *appstatus.Store
	Logger zerolog.Logger
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
	lic, err := cfg.Licence.Load()
	if err != nil {
		return nil, err
	}
	remote, err := licensing.Open(cfg.Licence, lic, licensing.WithLog(func(format string, args ...any) {
		logger.Warn().Msgf(format, args...)
	}))
	if err != nil {
		return nil, err
	}
	sessions, err := sessionstore.New(acct, TableSessions, TableIndex)
	if err != nil {
		return nil, err
	}
	deliveries, err := deliverystore.New(acct, deliverystore.TableSessions, deliverystore.TableIndex)
	if err != nil {
		return nil, err
	}
	documents, err := documentstore.New(acct, documentstore.TableDocuments)
	if err != nil {
		return nil, err
	}
	batches, err := batchstore.New(acct, batchstore.TableBatches, batchstore.TableIndex)
	if err != nil {
		return nil, err
	}
	workflows, err := workflowstore.New(acct, workflowstore.TableWorkflows, workflowstore.TableIndex, cfg.PIICipher)
	if err != nil {
		return nil, err
	}
	hooks, err := webhookstore.New(acct, webhookstore.TableWebhooks, webhookstore.TableIndex)
	if err != nil {
		return nil, err
	}
	hookPolicy := webhook.Policy{AllowLoopback: cfg.CallbackAllowLoopback}
	hookClient, err := webhook.NewUnsigned(webhook.WithPolicy(hookPolicy))
	if err != nil {
		return nil, err
	}
	sessions.InviteChecks().SetAfter(cfg.InviteCheckAfter)
	deliveries.InviteChecks().SetAfter(cfg.InviteCheckAfter)
	gc, err := cfg.Graph.Client()
	if err != nil {
		return nil, err
	}
	send, box, err := senders.FromConfig(cfg.Lookup, acct)
	if err != nil {
		return nil, err
	}
	status, err := appstatus.New(acct, appstatus.Table)
	if err != nil {
		return nil, err
	}
	blobs := blobstore.New(acct)
	return &Deps{Status: status, Config: cfg, Account: acct, Verifier: ver, Licence: lic, Licensing: remote, Sessions: sessions, Deliveries: deliveries,
		Documents: documents, Batches: batches, Workflows: workflows, Webhooks: hooks, HookPolicy: hookPolicy, HookClient: hookClient, Templates: &template.Loader{Blobs: blobs}, Graph: gc, Blobs: blobs,
		Tokens: tokens.NewCodec(cfg.Tokens), Senders: send, Outbox: box, Logger: logger}, nil
}

// New ensures the tables and builds the dispatcher's handler: the /api routes (see routes)
// behind the logging middleware and the client address's resolution (web.TrustProxies), served both forwarded (plain HTTP) and invoked (by function
// name through funcproto, the functions of InvokedFunctions).
func New(ctx context.Context, d *Deps) (http.Handler, error) {
	ensureCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := d.Sessions.Ensure(ensureCtx); err != nil {
		return nil, fmt.Errorf("signing-session tables: %w", err)
	}
	if err := d.Deliveries.Ensure(ensureCtx); err != nil {
		return nil, fmt.Errorf("delivery tables: %w", err)
	}
	if err := d.Documents.Ensure(ensureCtx); err != nil {
		return nil, fmt.Errorf("document table: %w", err)
	}
	if err := d.Batches.Ensure(ensureCtx); err != nil {
		return nil, fmt.Errorf("dispatch tables: %w", err)
	}
	if err := d.Workflows.Ensure(ensureCtx); err != nil {
		return nil, fmt.Errorf("workflow tables: %w", err)
	}
	if err := d.Webhooks.Ensure(ensureCtx, time.Now()); err != nil {
		return nil, fmt.Errorf("webhook tables: %w", err)
	}
	if d.Outbox != nil {
		if err := d.Outbox.Ensure(ensureCtx); err != nil {
			return nil, fmt.Errorf("outbox table: %w", err)
		}
	}
	mux := http.NewServeMux()
	routes(mux, d)
	api := logging.Middleware(d.Logger, web.TrustProxies(d.Config.TrustedProxyHops, mux))
	router := funcproto.NewRouter(api)
	for _, name := range InvokedFunctions() {
		router.Handle(name, funcproto.HTTPInvocation(api))
	}
	return router, nil
}
