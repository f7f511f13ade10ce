package app

import (
	"net/http"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/esign-svc/esign/dispatcher/callbackapi"
	"github.com/esign-svc/esign/dispatcher/deliveryapi"
	"github.com/esign-svc/esign/dispatcher/dispatchapi"
	"github.com/esign-svc/esign/dispatcher/documentapi"
	"github.com/esign-svc/esign/dispatcher/esignapi"
	"github.com/esign-svc/esign/dispatcher/health"
	"github.com/esign-svc/esign/dispatcher/portalapi"
	"github.com/esign-svc/esign/dispatcher/renderapi"
	"github.com/esign-svc/esign/dispatcher/webhookapi"
	"github.com/esign-svc/esign/dispatcher/workflowapi"
	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/dispatch"
	"github.com/esign-svc/esign/shared/document"
	"github.com/esign-svc/esign/shared/effects"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/event"
	"github.com/esign-svc/esign/shared/graph"
	"github.com/esign-svc/esign/shared/licensing"
	"github.com/esign-svc/esign/shared/render"
	"github.com/esign-svc/esign/shared/version"
	"github.com/esign-svc/esign/shared/webhook"
	"github.com/esign-svc/esign/shared/workflow"
)

// invoked are the functions whose function.json has bindings besides the HTTP trigger and
// output (queue outputs): the host invokes them by name instead of forwarding the request, and
// writes their outputs. Every other route is forwarded. A test keeps the list equal to the
// function folders with queue bindings.
var invoked = []string{
	"CreateSession", "ResendInvite", "RevokeSession", // requester routes (notify output)
	"RetrySeal",      // admin seal route (seal output)
	"PortalDecline",  // notify and seal outputs
	"Callback",       // seal and notify outputs
	"CreateDelivery", // delivery invitation and upload queues
	"Render",         // auto-trigger: notify, delivery invitation and upload queues; batch: dispatch, dispatch-notify
	"DecideBatch",    // approve: the dispatch queue
	// workflow transitions: workflow-notify, workflow-seal, workflow-callback
	"CreateWorkflow", "WorkflowAdvance", "WorkflowApprove", "WorkflowReject", "WorkflowRequestChanges",
	"WorkflowGovernanceDecision", "WorkflowEscalate", "WorkflowCancel", "WorkflowSeal", "WorkflowResendInvite",
}

// InvokedFunctions lists the functions invoked by name (see invoked).
func InvokedFunctions() []string { return slices.Clone(invoked) }

// routes builds each area of the API once, from d, and registers its routes on mux, in this
// order: health; the signing sessions' requester routes with the admin seal routes; the portal
// (session, document proxy, then the signer's OTP challenge and cross-device transfer, which
// share the portal's API); the signed portal callback; secure delivery; document upload; render
// (with the batch intake); the batch routes; the workflows; the webhook subscriptions.
func routes(mux *http.ServeMux, d *Deps) {
	hh := health.Handler{Prober: d.Account, Notices: d.Status, Version: version.Engine}
	var remote licensing.Validator // nil: the offline licence alone
	if d.Licensing != nil {
		hh.Licensing, remote = d.Licensing, d.Licensing
	}
	meter := licensing.Meter{On: d.Licensing != nil, Now: time.Now}
	mux.Handle("GET /api/health", hh)

	sessions := &esign.Creator{Store: d.Sessions, Docs: d.Blobs, Templates: d.Templates, Tokens: d.Tokens,
		Hasher: d.Config.EmailHasher, Cipher: d.Config.PIICipher, PortalURL: d.Config.PortalURL, Now: time.Now, Licensing: remote}
	useCases := &esign.Sessions{Store: d.Sessions, Effects: effects.SessionOutputs{}, Cipher: d.Config.PIICipher,
		OTPBlock: d.Config.OTPBlock, Now: time.Now}
	reads := &esign.SessionReads{Store: d.Sessions, Cipher: d.Config.PIICipher, Now: time.Now}
	requester := &esignapi.API{
		Creator: sessions, Sessions: useCases, Reads: reads,
		Tokens: d.Tokens, Verifier: d.Verifier, Licence: d.Licence, PortalURL: d.Config.PortalURL,
	}
	requester.Routes(mux)
	requester.SealAdminRoutes(mux)

	signer := &portalapi.API{
		Reads: reads, Sessions: useCases, Blobs: d.Blobs, Tokens: d.Tokens, Lapsed: portalapi.LapsedCodec(d.Config.Tokens),
		PortalOrigin: d.Config.PortalOrigin,
	}
	signer.Routes(mux) // also answers the CORS preflights of /api/esign/portal/
	(&portalapi.Challenge{
		API: signer, Senders: d.Senders, Hasher: d.Config.EmailHasher, PortalURL: d.Config.PortalURL,
	}).Routes(mux)

	(&callbackapi.API{Sessions: useCases, Tokens: d.Tokens, Lapsed: signer.Lapsed, Secrets: d.Config.CallbackSecrets, Now: time.Now}).Routes(mux)

	deliveries := &delivery.Creator{Store: d.Deliveries, Docs: d.Blobs, CheckTarget: graph.DeliveryTargets(d.Graph), Tokens: d.Tokens,
		Hasher: d.Config.EmailHasher, Cipher: d.Config.PIICipher, PortalURL: d.Config.PortalURL, Now: time.Now, Licensing: remote}
	(&deliveryapi.API{
		Creator: deliveries,
		Deliveries: &delivery.Deliveries{Store: d.Deliveries, Blobs: d.Blobs, Cipher: d.Config.PIICipher,
			OTPBlock: d.Config.OTPBlock, Now: time.Now},
		Tokens: d.Tokens, Lapsed: deliveryapi.LapsedCodec(d.Config.Tokens),
		Hasher: d.Config.EmailHasher, Verifier: d.Verifier, Licence: d.Licence, Meter: meter,
		Email: d.Senders.Email, PortalURL: d.Config.PortalURL, PortalOrigin: d.Config.PortalOrigin, Now: time.Now,
	}).Routes(mux)

	(&renderapi.API{Renderer: &render.Renderer{Templates: d.Templates, Blobs: d.Blobs, Store: d.Documents,
		Sessions: d.Sessions, ESign: sessions, Delivery: deliveries, Now: time.Now, Licensing: remote},
		Intake: &dispatch.Intake{Templates: d.Templates, Blobs: d.Blobs, Store: d.Batches, Intakes: d.Batches.Intakes(),
			Cipher: d.Config.PIICipher, Now: time.Now, NewID: uuid.NewString, Licensing: remote},
		Verifier: d.Verifier, Licence: d.Licence, Meter: meter}).Routes(mux)
	(&documentapi.API{
		Uploader: &document.Uploader{Blobs: d.Blobs, Now: time.Now, NewID: document.NewID},
		Verifier: d.Verifier, Licence: d.Licence,
	}).Routes(mux)
	(&dispatchapi.API{Store: d.Batches, Blobs: d.Blobs, Verifier: d.Verifier, Licence: d.Licence,
		AllowSelfApproval: d.Config.AllowSelfApproval, Now: time.Now}).Routes(mux)
	(&workflowapi.API{OTPBlock: d.Config.OTPBlock,
		Workflows: &workflow.Workflows{Store: d.Workflows, Packages: d.Templates, Blobs: d.Blobs, Emit: effects.EmitWorkflow,
			EmailHash: d.Config.EmailHasher.Email, AllowSelfApproval: d.Config.WorkflowAllowSelfApproval, Now: time.Now},
		Templates: d.Templates, Blobs: d.Blobs, Tokens: d.Tokens, Hasher: d.Config.EmailHasher,
		Verifier: d.Verifier, Licence: d.Licence, Licensing: remote, Email: d.Senders.Email, Callbacks: webhook.Policy{AllowLoopback: d.Config.CallbackAllowLoopback},
		PortalURL: d.Config.PortalURL, PortalOrigin: d.Config.PortalOrigin,
		Now: time.Now, NewID: uuid.NewString}).Routes(mux)
	(&webhookapi.API{Webhooks: &event.Webhooks{Store: d.Webhooks, Cipher: d.Config.PIICipher, Policy: d.HookPolicy,
		Sender: &event.Sender{Store: d.Webhooks, Queue: d.Webhooks, Cipher: d.Config.PIICipher, Client: d.HookClient, Now: time.Now},
		Now:    time.Now, NewID: uuid.NewString}, Verifier: d.Verifier, Licence: d.Licence}).Routes(mux)
}
