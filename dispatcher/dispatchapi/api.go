// Package dispatchapi serves the batch dispatch routes (spec "Batch dispatch", DESIGN 9): the
// tenant's batches, one batch, its records (paged), its intake receipt, and the approver's
// decide and the initiator's cancel. Every route needs an Entra ID JWT and the licence's
// dispatch feature (dispatcher/guard); a batch of another tenant is not found. Every route
// calls one method of the batch use cases (dispatch.Batches: the reads, and the state moves
// under the batch's ETag, which queue what they ask for); this package decodes, authorises,
// calls it and encodes.
package dispatchapi

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/esign-svc/esign/dispatcher/guard"
	"github.com/esign-svc/esign/dispatcher/renderapi"
	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/auth"
	"github.com/esign-svc/esign/shared/dispatch"
	"github.com/esign-svc/esign/shared/effects"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/licence"
	"github.com/esign-svc/esign/shared/web"
)

// Paging of the records route.
const (
	DefaultPage = 100
	MaxPage     = 1000
)

// API holds what the routes need.
type API struct {
	// Store is the batch store (batchstore.Store) the use cases run on; the routes reach it
	// only through dispatch.Batches.
	Store    dispatch.BatchStore
	Blobs    dispatch.Blobs
	Verifier *auth.Verifier
	Licence  *licence.Licence
	// AllowSelfApproval is DISPATCH_ALLOW_SELF_APPROVAL: the submitter may decide their own
	// batch.
	AllowSelfApproval bool
	Now               func() time.Time
}

// Routes registers the batch routes. Decide's function is invoked (queue output dispatch).
func (a *API) Routes(mux *http.ServeMux) {
	mux.Handle("GET /api/dispatch/batch", web.Handle(a.list))
	mux.Handle("GET /api/dispatch/batch/{batchId}", web.Handle(a.get))
	mux.Handle("GET /api/dispatch/batch/{batchId}/records", web.Handle(a.records))
	mux.Handle("GET /api/dispatch/batch/{batchId}/receipt", web.Handle(a.receipt))
	mux.Handle("POST /api/dispatch/batch/{batchId}/decide", web.Handle(a.decide))
	mux.Handle("POST /api/dispatch/batch/{batchId}/cancel", web.Handle(a.cancel))
}

// readers are the roles that may read batches: their submitters and their approvers.
var readers = []string{auth.RoleInitiator, auth.RoleDispatchApprover}

func (a *API) caller(r *http.Request, roles ...string) (auth.Principal, error) {
	return guard.Gate{Verifier: a.Verifier, Licence: a.Licence, Feature: licence.FeatureDispatch}.Caller(r, roles...)
}

// reader is the prologue of the routes that read one batch: a reader of the tenant, no body.
// The use case answers another tenant's batch as not found.
func (a *API) reader(r *http.Request) (auth.Principal, error) {
	p, err := a.caller(r, readers...)
	if err != nil {
		return p, err
	}
	return p, web.NoBody(r)
}

// Summary is a batch in the list (spec: batch summary).
type Summary struct {
	BatchID           string `json:"batchId"`
	State             string `json:"state"`
	DispatchReadiness string `json:"dispatchReadiness"`
	Title             string `json:"title"`
	DocumentCount     int    `json:"documentCount"`
	ReadyCount        int    `json:"readyCount"`
	FailedCount       int    `json:"failedCount"`
	WarningCount      int    `json:"warningCount"`
	ActivityItemID    string `json:"activityItemId"`
	CreatedAt         string `json:"createdAt"`
	UpdatedAt         string `json:"updatedAt"`
}

// Full is the batch resource (spec "Batch").
type Full struct {
	Summary
	TemplatePath      string                      `json:"templatePath"`
	TemplateName      string                      `json:"templateName"`
	TemplateVersion   int                         `json:"templateVersion"`
	CorrelationID     string                      `json:"correlationId"`
	ProcessedCount    int                         `json:"processedCount"`
	ErrorCount        int                         `json:"errorCount"`
	SubmittedBy       string                      `json:"submittedBy"`
	ApprovedBy        string                      `json:"approvedBy,omitempty"`
	DecisionComments  string                      `json:"decisionComments,omitempty"`
	DecidedAt         string                      `json:"decidedAt,omitempty"`
	QueuedAt          string                      `json:"queuedAt,omitempty"`
	CompletedAt       string                      `json:"completedAt,omitempty"`
	Supersedes        string                      `json:"supersedes,omitempty"`
	Mode              string                      `json:"mode"`
	DeliveryMode      string                      `json:"deliveryMode"`
	ReceiptPath       string                      `json:"receiptPath"`
	CombinedPath      string                      `json:"combinedPath,omitempty"`
	BundlePath        string                      `json:"bundlePath,omitempty"`
	ValidationResults []dispatch.ValidationResult `json:"validationResults"`
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func summaryOf(b *dispatch.Batch) Summary {
	return Summary{BatchID: b.BatchID, State: string(b.State), DispatchReadiness: string(b.Readiness), Title: b.Title,
		DocumentCount: b.DocumentCount, ReadyCount: b.ReadyCount, FailedCount: b.FailedCount, WarningCount: b.WarningCount,
		ActivityItemID: b.ActivityItemID(), CreatedAt: stamp(b.CreatedAt), UpdatedAt: stamp(b.UpdatedAt)}
}

// list is GET /api/dispatch/batch?state=&continuationToken=&limit=: the tenant's batches,
// newest first, a page at a time (default 100, at most 1000), with the total the list selects
// and the next page's continuationToken. Errors: 400 naming state for a state the spec does
// not list, limit or continuationToken.
func (a *API) list(w http.ResponseWriter, r *http.Request) error {
	p, err := a.caller(r, readers...)
	if err != nil {
		return err
	}
	if err := web.NoBody(r); err != nil {
		return err
	}
	state := dispatch.State(r.URL.Query().Get("state"))
	if state != "" && !slices.Contains(dispatch.States, state) {
		return apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field("state", "is not a batch state"))
	}
	limit, err := pageLimit(r.URL.Query())
	if err != nil {
		return err
	}
	page, err := a.batches().List(r.Context(), p.TenantID, state, r.URL.Query().Get("continuationToken"), limit)
	if err != nil {
		return err
	}
	out := struct {
		Total             int       `json:"total"`
		Batches           []Summary `json:"batches"`
		ContinuationToken string    `json:"continuationToken,omitempty"`
	}{Total: page.Total, Batches: make([]Summary, 0, len(page.Batches)), ContinuationToken: page.Next}
	for _, b := range page.Batches {
		out.Batches = append(out.Batches, summaryOf(b))
	}
	return web.JSON(w, http.StatusOK, out)
}

// get is GET /api/dispatch/batch/{batchId}: the batch with its validation results (read from
// its JSON receipt). Errors: 404 batch_not_found.
func (a *API) get(w http.ResponseWriter, r *http.Request) error {
	p, err := a.reader(r)
	if err != nil {
		return err
	}
	b, rc, err := a.batches().Get(r.Context(), p.TenantID, r.PathValue("batchId"))
	if err != nil {
		return err
	}
	out := Full{Summary: summaryOf(b), TemplatePath: b.TemplatePath, TemplateName: b.TemplateName,
		TemplateVersion: b.TemplateVersion, CorrelationID: b.CorrelationID, ProcessedCount: b.ProcessedCount,
		ErrorCount: b.ErrorCount, SubmittedBy: b.SubmittedBy, ApprovedBy: b.ApprovedBy, DecisionComments: b.DecisionComments,
		DecidedAt: stamp(b.DecidedAt), QueuedAt: stamp(b.QueuedAt), CompletedAt: stamp(b.CompletedAt), Supersedes: b.Supersedes,
		Mode: b.Settings.Mode, DeliveryMode: b.Settings.DeliveryMode, ReceiptPath: b.ReceiptPath, CombinedPath: b.CombinedPath,
		BundlePath: b.BundlePath, ValidationResults: rc.ValidationResults}
	if out.ValidationResults == nil {
		out.ValidationResults = []dispatch.ValidationResult{}
	}
	return web.JSON(w, http.StatusOK, out)
}

// recordOut is one record in the records page.
type recordOut struct {
	Index         int      `json:"index"`
	Status        string   `json:"status"` // DISPATCH_READY | INVALID
	State         string   `json:"state"`  // pending | done | failed | not-queued
	Messages      []string `json:"messages"`
	CorrelationID string   `json:"correlationId,omitempty"`
	DocumentID    string   `json:"documentId,omitempty"`
	PDFBlobPath   string   `json:"pdfBlobPath,omitempty"`
	DeliveryIDs   []string `json:"deliveryIds,omitempty"`
	Error         string   `json:"error,omitempty"`
	ProcessedAt   string   `json:"processedAt,omitempty"`
}

// records is GET /api/dispatch/batch/{batchId}/records?status=&continuationToken=&limit=:
// the batch's records in index order, a page at a time (default 100, at most 1000). status
// filters by intake status (DISPATCH_READY, INVALID) or processing state (pending, done,
// failed, not-queued). Errors: 404; 400 naming status, limit or continuationToken.
func (a *API) records(w http.ResponseWriter, r *http.Request) error {
	p, err := a.reader(r)
	if err != nil {
		return err
	}
	b, page, err := a.batches().Records(r.Context(), p.TenantID, r.PathValue("batchId"), func() (dispatch.RecordQuery, error) {
		return recordQuery(r.URL.Query())
	})
	if err != nil {
		return err
	}
	out := struct {
		BatchID           string      `json:"batchId"`
		Records           []recordOut `json:"records"`
		ContinuationToken string      `json:"continuationToken,omitempty"`
	}{BatchID: b.BatchID, Records: make([]recordOut, 0, len(page.Records)), ContinuationToken: page.Next}
	for _, rec := range page.Records {
		msgs := rec.Messages
		if msgs == nil {
			msgs = []string{}
		}
		out.Records = append(out.Records, recordOut{Index: rec.Index, Status: rec.Status, State: string(rec.State),
			Messages: msgs, CorrelationID: rec.CorrelationID, DocumentID: rec.DocumentID, PDFBlobPath: rec.PDFBlobPath,
			DeliveryIDs: rec.DeliveryIDs, Error: rec.Error, ProcessedAt: stamp(rec.ProcessedAt)})
	}
	return web.JSON(w, http.StatusOK, out)
}

// recordQuery reads the records route's status, limit and continuationToken.
func recordQuery(q url.Values) (dispatch.RecordQuery, error) {
	status := q.Get("status")
	switch dispatch.RecordState(status) {
	case "", dispatch.RecordPending, dispatch.RecordDone, dispatch.RecordFailed, dispatch.RecordNotQueued:
	default:
		if status != dispatch.RecordReady && status != dispatch.RecordInvalid {
			return dispatch.RecordQuery{}, apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field("status",
				"must be DISPATCH_READY, INVALID, pending, done, failed or not-queued"))
		}
	}
	limit, err := pageLimit(q)
	if err != nil {
		return dispatch.RecordQuery{}, err
	}
	return dispatch.RecordQuery{Filter: status, After: q.Get("continuationToken"), Limit: limit}, nil
}

// pageLimit is a list route's limit: DefaultPage when absent. Errors: 400 naming limit
// outside 1 to MaxPage.
func pageLimit(q url.Values) (int, error) {
	v := q.Get("limit")
	if v == "" {
		return DefaultPage, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > MaxPage {
		return 0, apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field("limit", "must be 1 to 1000"))
	}
	return n, nil
}

// receipt is GET /api/dispatch/batch/{batchId}/receipt: the stored intake receipt PDF.
// Errors: 404.
func (a *API) receipt(w http.ResponseWriter, r *http.Request) error {
	p, err := a.reader(r)
	if err != nil {
		return err
	}
	pdf, err := a.batches().ReceiptPDF(r.Context(), p.TenantID, r.PathValue("batchId"))
	if err != nil {
		return err
	}
	return renderapi.WritePDF(w, http.StatusOK, pdf)
}

// decideRequest is the body of decide.
type decideRequest struct {
	Decision dispatch.Decision `json:"decision"`
	Comments string            `json:"comments,omitempty"`
}

// maxComments bounds a decision's comments.
const maxComments = 4000

// decide is POST /api/dispatch/batch/{batchId}/decide {decision, comments}: an approver of the
// tenant approves (the batch is queued and its dispatch message goes out), rejects or requests
// changes. Errors: 403 role_required without Dispatch.Approver; 403 self_approval for the
// submitter (unless DISPATCH_ALLOW_SELF_APPROVAL); 400 naming decision or comments; 404; 409
// invalid_state outside pending-approval and changes-requested.
func (a *API) decide(w http.ResponseWriter, r *http.Request) error {
	p, err := a.caller(r, auth.RoleDispatchApprover)
	if err != nil {
		return err
	}
	var req decideRequest
	if err := web.DecodeJSON(r, web.MaxJSONBody, &req); err != nil {
		return err
	}
	switch req.Decision {
	case dispatch.DecisionApprove, dispatch.DecisionReject, dispatch.DecisionRequestChanges:
	case "":
		return apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field("decision", "is required: approve, reject or request-changes"))
	default:
		return apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field("decision", "must be approve, reject or request-changes"))
	}
	if len(req.Comments) > maxComments {
		return apperr.Invalid(apperr.CodeInvalidRequest, apperr.Field("comments", "must be at most 4000 bytes"))
	}
	b, err := a.batches().Decide(r.Context(), p.TenantID, r.PathValue("batchId"), a.actor(r, p, "approver"), req.Decision, req.Comments)
	if err != nil {
		return err
	}
	return web.JSON(w, http.StatusOK, map[string]any{"batchId": b.BatchID, "state": b.State, "decidedAt": stamp(b.DecidedAt)})
}

// cancel is POST /api/dispatch/batch/{batchId}/cancel: an initiator of the tenant ends a batch
// that has not started. Errors: 404; 409 invalid_state outside pending-approval and
// changes-requested.
func (a *API) cancel(w http.ResponseWriter, r *http.Request) error {
	p, err := a.caller(r, auth.RoleInitiator)
	if err != nil {
		return err
	}
	if err := web.NoBody(r); err != nil {
		return err
	}
	b, err := a.batches().Cancel(r.Context(), p.TenantID, r.PathValue("batchId"), a.actor(r, p, "initiator"))
	if err != nil {
		return err
	}
	return web.JSON(w, http.StatusOK, map[string]any{"batchId": b.BatchID, "state": b.State})
}

func (a *API) actor(r *http.Request, p auth.Principal, kind string) kernel.Actor {
	return kernel.Actor{Kind: kind, ID: p.CallerID(), IP: web.ClientIP(r), UserAgent: web.UserAgent(r)}
}

// batches is the batch use-case service every route calls.
func (a *API) batches() *dispatch.Batches {
	return &dispatch.Batches{Store: a.Store, Blobs: a.Blobs, Emit: effects.EmitBatch, AllowSelfApproval: a.AllowSelfApproval, Now: a.Now}
}
