package app

import (
	"context"
	"net/http"
	"time"

	"github.com/rs/zerolog"

	"github.com/esign-svc/esign/processor/deliveryupload"
	"github.com/esign-svc/esign/processor/dispatchjob"
	"github.com/esign-svc/esign/processor/eventjob"
	"github.com/esign-svc/esign/processor/evidencerenew"
	"github.com/esign-svc/esign/processor/expiry"
	"github.com/esign-svc/esign/processor/internal/jobkit"
	"github.com/esign-svc/esign/processor/invitecheck"
	"github.com/esign-svc/esign/processor/licenceusage"
	"github.com/esign-svc/esign/processor/notifyjob"
	"github.com/esign-svc/esign/processor/portalpurge"
	"github.com/esign-svc/esign/processor/reminders"
	"github.com/esign-svc/esign/processor/seal"
	"github.com/esign-svc/esign/processor/signeddelivery"
	"github.com/esign-svc/esign/processor/workflowcallback"
	"github.com/esign-svc/esign/processor/workflownotify"
	"github.com/esign-svc/esign/processor/workflowseal"
	"github.com/esign-svc/esign/processor/workflowtrigger"
	"github.com/esign-svc/esign/shared/appstatus"
	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/azure/blobstore"
	"github.com/esign-svc/esign/shared/azure/keyvault"
	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/delivery/deliverystore"
	"github.com/esign-svc/esign/shared/dispatch"
	"github.com/esign-svc/esign/shared/dispatch/batchstore"
	"github.com/esign-svc/esign/shared/document/documentstore"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/esign/sessionstore"
	"github.com/esign-svc/esign/shared/event"
	"github.com/esign-svc/esign/shared/event/webhookstore"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/graph"
	"github.com/esign-svc/esign/shared/kernel/aggstore"
	"github.com/esign-svc/esign/shared/licence"
	"github.com/esign-svc/esign/shared/licensing"
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/notify/outbox"
	"github.com/esign-svc/esign/shared/render"
	"github.com/esign-svc/esign/shared/template"
	"github.com/esign-svc/esign/shared/tokens"
	"github.com/esign-svc/esign/shared/version"
	"github.com/esign-svc/esign/shared/webhook"
	"github.com/esign-svc/esign/shared/workflow/workflowstore"
)

// Table names (DESIGN 3).
const (
	SessionsTable = "esignsessions"
	IndexTable    = "esignindex"
)

// Deps are the built dependencies the jobs share.
type Deps struct {
	Config   Config
	Account  *azconn.Account
	Logger   zerolog.Logger
	Sessions *sessionstore.Store
	// Deliveries is the delivery store the delivery jobs and the invitation reconciler share.
	Deliveries *deliverystore.Store
	// Batches and Documents are the batch dispatch's stores (the record jobs' document rows).
	Batches   *batchstore.Store
	Documents *documentstore.Store
	// Workflows is the workflow store (the workflow seal job).
	Workflows *workflowstore.Store
	// Webhooks are the integrator event subscriptions, EventOutbox the kernel's outbox of
	// events (the events job, DESIGN 17).
	Webhooks    *webhookstore.Store
	EventOutbox *aggstore.Outbox
	Tokens      *tokens.Codec
	Providers   notify.Providers
	Outbox      *outbox.Outbox // nil unless a channel uses the outbox
	Graph       *graph.Client  // the document-library uploads; nil without GRAPH_* settings
	Licence     *licence.Licence
	// Licensing is LICENSING_URL's service (the metering job posts to it); nil: none.
	Licensing *licensing.Client
	// Status is where New records, at start, the features a missing setting leaves off (the
	// dispatcher's /api/health reports them).
	Status *appstatus.Store
	// SealVault are the Key Vault client options of a vault seal key (SEAL_KEY_VAULT_KEY_ID):
	// zero in Azure (the managed identity, the SDK's transport); tests set the local vault's.
	SealVault keyvault.Options
	Now       func() time.Time
}

// Build makes the dependencies from the configuration. It does no I/O (New ensures the
// tables) but reading the licence file. Errors: storage configuration, the notification
// providers' settings (each naming the setting at fault), the Graph client's checks, the
// licence's.
func Build(cfg Config, logger zerolog.Logger) (*Deps, error) {
	lic, err := cfg.Licence.Load()
	if err != nil {
		return nil, err
	}
	remote, err := licensing.Open(cfg.Licence, lic)
	if err != nil {
		return nil, err
	}
	storage := cfg.Storage
	storage.ApplicationID = "esign-processor" // in the User-Agent of every storage request
	acct, err := azconn.New(storage)
	if err != nil {
		return nil, err
	}
	sessions, err := sessionstore.New(acct, SessionsTable, IndexTable)
	if err != nil {
		return nil, err
	}
	deliveries, err := deliverystore.New(acct, deliverystore.TableSessions, deliverystore.TableIndex)
	if err != nil {
		return nil, err
	}
	batches, err := batchstore.New(acct, batchstore.TableBatches, batchstore.TableIndex)
	if err != nil {
		return nil, err
	}
	documents, err := documentstore.New(acct, documentstore.TableDocuments)
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
	events, err := aggstore.OpenOutbox(acct, aggstore.TableOutbox)
	if err != nil {
		return nil, err
	}
	p, box, err := providers(cfg, acct)
	if err != nil {
		return nil, err
	}
	gc, err := cfg.Graph.Client()
	if err != nil {
		return nil, err
	}
	status, err := appstatus.New(acct, appstatus.Table)
	if err != nil {
		return nil, err
	}
	return &Deps{Status: status, Config: cfg, Account: acct, Logger: logger, Sessions: sessions, Deliveries: deliveries,
		Batches: batches, Documents: documents, Workflows: workflows, Webhooks: hooks, EventOutbox: events, Tokens: tokens.NewCodec(cfg.Tokens), Providers: p, Outbox: box, Graph: gc,
		Licence: lic, Licensing: remote, Now: time.Now}, nil
}

// Ensure creates the tables the jobs use when missing. Errors: the storage ones.
func (d *Deps) Ensure(ctx context.Context) error {
	if err := d.Sessions.Ensure(ctx); err != nil {
		return err
	}
	if err := d.Deliveries.Ensure(ctx); err != nil {
		return err
	}
	if err := d.Batches.Ensure(ctx); err != nil {
		return err
	}
	if err := d.Documents.Ensure(ctx); err != nil {
		return err
	}
	if err := d.Workflows.Ensure(ctx); err != nil {
		return err
	}
	if err := d.Webhooks.Ensure(ctx, d.Now()); err != nil {
		return err
	}
	if err := d.EventOutbox.Ensure(ctx); err != nil {
		return err
	}
	if d.Outbox != nil {
		return d.Outbox.Ensure(ctx)
	}
	return nil
}

// Function is one queue or timer function: its folder name under processor/functions and its
// invocation handler (funcproto.QueueHandler or TimerHandler).
type Function = jobkit.Function

// job is what every job package builds: New(Deps) (*Job, error), whose Functions are its
// function table.
type job interface{ Functions() []jobkit.Function }

// table gathers the jobs' function tables; the first error stops it.
type table struct {
	fns []Function
	err error
}

// add takes a job package's New(...) results.
func (t *table) add(j job, err error) {
	if t.err != nil {
		return
	}
	if err != nil {
		t.err = err
		return
	}
	t.fns = append(t.fns, j.Functions()...)
}

// Functions are the processor's jobs' function tables: every job package is built the same
// way (New with its Deps) and brings its own functions (the constants next to its
// processor/functions folders): the notifications (notifyjob), session expiry and the sweep of
// dead batch intakes (expiry), the seal (seal), the delivery uploads and invitations (deliveryupload), the portal purge
// (portalpurge), the invitation reconciler (invitecheck), the delivery that waited for signing
// (signeddelivery), batch dispatch (dispatchjob), the workflow seal (workflowseal), its
// auto-trigger (workflowtrigger), the workflows' terminal callbacks (workflowcallback) and
// e-mails (workflownotify), licence metering (licenceusage), the renewal of sealed documents'
// long-term evidence (evidencerenew) and the integrator events (eventjob).
// Errors: a wiring mistake (a missing dependency), a client's configuration.
func Functions(d *Deps) ([]Function, error) {
	// one blob client and one template-package cache (by ETag) for every job
	blobs := blobstore.New(d.Account)
	templates := &template.Loader{Blobs: blobs}
	// usage records are queued only where a licensing service will take them (DESIGN 19)
	meter := licensing.Meter{On: d.Licensing != nil, Now: d.Now}
	creator := &delivery.Creator{Store: d.Deliveries, Docs: blobs, CheckTarget: graph.DeliveryTargets(d.Graph),
		Tokens: d.Tokens, Hasher: d.Config.EmailHasher, Cipher: d.Config.PIICipher, PortalURL: d.Config.PortalURL, Now: d.Now}
	jobs := &esign.SessionJobs{Store: d.Sessions, InviteChecks: d.Sessions.InviteChecks(), Reminders: d.Sessions.Reminders()} // the session jobs' use cases
	// the invitation reconciler drives the notification and invitation jobs' own steps
	notifier, err := notifyjob.New(notifyjob.Deps{Sessions: jobs, Tokens: d.Tokens, Cipher: d.Config.PIICipher,
		Email: d.Providers.Email, PortalURL: d.Config.PortalURL, Now: d.Now})
	if err != nil {
		return nil, err
	}
	deliveries, err := deliveryupload.New(deliveryupload.Deps{Blobs: blobs, Graph: d.Graph,
		Deliveries: &delivery.Deliveries{Store: d.Deliveries, Now: d.Now},
		Tokens:     d.Tokens, Cipher: d.Config.PIICipher, Email: d.Providers.Email, PortalURL: d.Config.PortalURL, Now: d.Now})
	if err != nil {
		return nil, err
	}
	purge, err := portalPurgeDeps(d, jobs)
	if err != nil {
		return nil, err
	}
	var t table
	t.add(notifier, nil)
	t.add(deliveries, nil)
	t.add(expiry.New(expiry.Deps{Sessions: jobs, Now: d.Now,
		Deliveries: &delivery.Expiries{Schedule: d.Deliveries.Expiries(), Store: d.Deliveries},
		Intakes:    &dispatch.IntakeSweep{Schedule: d.Batches.Intakes(), Store: d.Batches, Blobs: blobs}}))
	t.add(invitecheck.New(invitecheck.Deps{Sessions: jobs,
		Deliveries: &delivery.InviteChecks{Schedule: d.Deliveries.InviteChecks(), Store: d.Deliveries}, Notify: notifier.Notify,
		MessageID: notifyjob.MessageID, Invite: deliveries.Invite, Now: d.Now}))
	t.add(reminders.New(reminders.Deps{Sessions: jobs, Notify: notifier.Notify, MessageID: notifyjob.MessageID,
		Deliveries: &delivery.Reminders{Schedule: d.Deliveries.Reminders(), Store: d.Deliveries}, Remind: deliveries.Remind, Now: d.Now}))
	t.add(seal.New(seal.Deps{Sessions: jobs, Blobs: blobs, Key: d.Config.Seal.Key, TSAURL: d.Config.Seal.TSAURL, Level: d.Config.Seal.Level,
		StuckAfter: d.Config.Seal.StuckAfter, LockTTL: d.Config.Seal.LockTTL, EngineVersion: version.Engine, Now: d.Now, Meter: meter}))
	t.add(portalpurge.New(purge))
	t.add(signeddelivery.New(signeddelivery.Deps{Sessions: jobs, Cipher: d.Config.PIICipher, Now: d.Now,
		Creator: creator, Licence: d.Licence, Meter: meter}))
	t.add(dispatchjob.New(dispatchDeps(d, creator, blobs, templates, meter)))
	t.add(workflowCallback(d))
	t.add(workflownotify.New(workflownotify.Deps{Workflows: d.Workflows, Packages: templates,
		Blobs: blobs, Tokens: d.Tokens, Email: d.Providers.Email, PortalURL: d.Config.PortalURL, Now: d.Now}))
	// the workflow auto-trigger starts sessions and deliveries as a render does
	t.add(workflowtrigger.New(workflowtrigger.Deps{Workflows: d.Workflows, Now: d.Now, Licence: d.Licence, Meter: meter,
		Starter: render.Starter{Sessions: d.Sessions, Delivery: creator,
			ESign: &esign.Creator{Store: d.Sessions, Docs: blobs, Templates: templates,
				Tokens: d.Tokens, Hasher: d.Config.EmailHasher, Cipher: d.Config.PIICipher, PortalURL: d.Config.PortalURL, Now: d.Now}}}))
	t.add(workflowseal.New(workflowseal.Deps{Workflows: d.Workflows, Templates: templates,
		Blobs: blobs, Key: d.Config.Seal.Key, TSAURL: d.Config.Seal.TSAURL, Level: d.Config.Seal.Level, Now: d.Now, Meter: meter}))
	t.add(licenceusage.New(licenceUsageDeps(d)))
	t.add(evidencerenew.New(evidencerenew.Deps{Blobs: blobs, TSAURL: d.Config.Seal.TSAURL, Level: d.Config.Seal.Level,
		RenewBefore: d.Config.RenewBefore, Now: d.Now}))
	t.add(events(d))
	return t.fns, t.err
}

// events is the integrator events job, the one sender: posts signed per subscription under
// the URL policy (loopback only with WEBHOOK_ALLOW_LOOPBACK), and the workflows' terminal
// callbacks signed with WEBHOOK_SECRETS' current secret (none without it), audited on the
// workflow.
func events(d *Deps) (*eventjob.Job, error) {
	sender, err := sender(d)
	if err != nil {
		return nil, err
	}
	return eventjob.New(eventjob.Deps{Outbox: outboxSource{d.EventOutbox}, Store: d.Webhooks, Queue: d.Webhooks, Now: d.Now, Sender: sender})
}

// sender is the events job's sender (events).
func sender(d *Deps) (*event.Sender, error) {
	policy := webhook.WithPolicy(webhook.Policy{AllowLoopback: d.Config.WebhookAllowLoopback})
	client, err := webhook.NewUnsigned(policy)
	if err != nil {
		return nil, err
	}
	sender := &event.Sender{Store: d.Webhooks, Queue: d.Webhooks, Cipher: d.Config.PIICipher, Client: client, Now: d.Now,
		OnDirect: workflowcallback.Audit(d.Workflows, d.Now)}
	if d.Config.WebhookSecret != "" {
		if sender.DirectClient, err = webhook.New(d.Config.WebhookSecret, policy); err != nil {
			return nil, err
		}
	}
	return sender, nil
}

// outboxSource is the kernel's outbox as the events' fan-out reads it.
type outboxSource struct{ o *aggstore.Outbox }

func (s outboxSource) Due(ctx context.Context, now time.Time, limit int) ([]event.OutboxBatch, error) {
	due, err := s.o.Due(ctx, now, limit)
	out := make([]event.OutboxBatch, 0, len(due))
	for _, b := range due {
		out = append(out, b)
	}
	return out, err
}

// New ensures the tables, opens a Key Vault seal key, and builds the processor's handler: one
// invocation route per queue or timer function, and the readiness ping. Anything else is 404:
// the processor has no HTTP routes. Every function needs a folder
// processor/functions/<Name>/function.json. Errors: storage, the seal key's vault, a
// wiring mistake; a function name registered twice panics (funcproto.Router.Handle).
func New(ctx context.Context, d *Deps) (http.Handler, error) {
	if err := d.Ensure(ctx); err != nil {
		return nil, err
	}
	if err := d.Status.Ensure(ctx); err != nil {
		return nil, err
	}
	if err := announceCallbacks(ctx, d.Status, d.Config, d.Logger, d.Now()); err != nil {
		return nil, err
	}
	// a vault seal key is opened (its public part and chain read and checked) before any job
	if err := d.Config.Seal.OpenKey(ctx, d.SealVault); err != nil {
		return nil, err
	}
	if s, ok := d.Config.Seal.Key.Signer.(*keyvault.Signer); ok {
		// the version a version-less SEAL_KEY_VAULT_KEY_ID was pinned to until the next start
		d.Logger.Info().Str("keyId", s.KeyID().String()).Msg("seal key in the vault")
	}
	fns, err := Functions(d)
	if err != nil {
		return nil, err
	}
	router := funcproto.NewRouter(nil)
	for _, f := range fns {
		router.Handle(f.Name, f.Handler)
	}
	return router, nil
}

// dispatchDeps are the batch processor's: record PDFs rendered through the render use case's
// Produce (no auto-trigger: the batch's delivery is its own; written before looking for an
// earlier run, WriteFirst; one field manifest per batch folder, SharedManifests), deliveries
// through creator.
func dispatchDeps(d *Deps, creator *delivery.Creator, blobs *blobstore.Store, templates *template.Loader, meter licensing.Meter) dispatchjob.Deps {
	return dispatchjob.Deps{Batches: d.Batches, Templates: templates, Creator: creator, Blobs: blobs,
		Producer: &render.Renderer{Templates: templates, Blobs: blobs, Store: d.Documents, Now: d.Now, WriteFirst: true,
			SharedManifests: &render.ManifestNames{}},
		Cipher: d.Config.PIICipher, Email: d.Providers.Email, Approvers: d.Config.DispatchApprovers, Licence: d.Licence,
		Meter: meter, Now: d.Now}
}

// licenceUsageDeps are the metering job's: the licensing service when LICENSING_URL is set
// (a nil *licensing.Client must not become a non-nil Recorder).
func licenceUsageDeps(d *Deps) licenceusage.Deps {
	if d.Licensing == nil {
		return licenceusage.Deps{}
	}
	return licenceusage.Deps{Service: d.Licensing}
}

// ReasonNoWebhookSecret is why the workflows' callbacks are off: the processor's start log and
// /api/health say it.
const ReasonNoWebhookSecret = "WEBHOOK_SECRETS is not set: no workflow callback is sent " +
	"(each is recorded as failed, webhook_not_configured)"

// announceCallbacks says at start whether the workflows' terminal callbacks can be sent: without
// WEBHOOK_SECRETS one warning line in the log, and in status the reason the dispatcher's
// /api/health reports (a start with the secret records them on again). Errors: storage.
func announceCallbacks(ctx context.Context, status *appstatus.Store, cfg Config, log zerolog.Logger, now time.Time) error {
	n := appstatus.Notice{App: appstatus.AppProcessor, Feature: appstatus.FeatureWorkflowCallbacks, At: now}
	if cfg.WebhookSecret == "" {
		n.Reason = ReasonNoWebhookSecret
		log.Warn().Str("feature", n.Feature).Msg(n.Reason)
	}
	return status.Record(ctx, n)
}

// workflowCallback is the terminal-callback job: it hands each callback to the events' sender
// (events), which posts and retries it.
func workflowCallback(d *Deps) (*workflowcallback.Job, error) {
	return workflowcallback.New(workflowcallback.Deps{Workflows: d.Workflows, Sends: d.Webhooks, Now: d.Now})
}
