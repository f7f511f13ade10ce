package client

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
)

// RenderOptions are a render's options.
type RenderOptions struct {
	CorrelationID      string `json:"correlationId,omitempty"`
	DocumentID         string `json:"documentId,omitempty"`
	DocType            string `json:"docType,omitempty"`
	Title              string `json:"title,omitempty"`
	GeneratedBy        string `json:"generatedBy,omitempty"`
	SourceSystem       string `json:"sourceSystem,omitempty"`
	DocumentIDTemplate string `json:"documentIdTemplate,omitempty"`
	FileNameTemplate   string `json:"fileNameTemplate,omitempty"`
	Supersedes         string `json:"supersedes,omitempty"`
}

// Record is one record of a render's dataSource.
type Record = map[string]any

// RenderRequest is POST /render's body. TemplateSettings is passed as is (schema
// TemplateSettings: esign, delivery, distribution and workflow blocks).
type RenderRequest struct {
	TemplatePath     string          `json:"templatePath"`
	Options          *RenderOptions  `json:"options,omitempty"`
	TemplateSettings json.RawMessage `json:"templateSettings,omitempty"`
	Features         map[string]bool `json:"features,omitempty"`
}

// ValidationResult is a rule's result on a record or a workflow: Passed is true for a rule
// that held (a workflow's validationResults list those too).
type ValidationResult struct {
	RuleID   string `json:"ruleId,omitempty"`
	Passed   bool   `json:"passed"`
	FieldKey string `json:"fieldKey,omitempty"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
}

// Rendered is a one-record render's answer.
type Rendered struct {
	CorrelationID string `json:"correlationId"`
	DocumentID    string `json:"documentId"`
	Title         string `json:"title"`
	PDFBlobPath   string `json:"pdfBlobPath"`
	PDFHash       string `json:"pdfHash"`
	Pages         int    `json:"pages"`
	Template      struct {
		Path    string `json:"path"`
		Name    string `json:"name"`
		Version int    `json:"version"`
	} `json:"template"`
	Warnings             []ValidationResult `json:"warnings"`
	Esign                *Session           `json:"esign,omitempty"`
	Delivery             *Delivery          `json:"delivery,omitempty"`
	DeliveryAfterSigning bool               `json:"deliveryAfterSigning,omitempty"`
	// Repeated is true when the service answered 200: the same render was done before.
	Repeated bool `json:"-"`
}

// BatchValidationResult is one record's intake result.
type BatchValidationResult struct {
	Index      int      `json:"index"`
	Status     string   `json:"status"`
	DocumentID string   `json:"documentId,omitempty"`
	Messages   []string `json:"messages,omitempty"`
}

// BatchReceipt is the intake receipt as JSON.
type BatchReceipt struct {
	BatchID           string                  `json:"batchId"`
	CorrelationID     string                  `json:"correlationId"`
	State             string                  `json:"state"`
	DispatchReadiness string                  `json:"dispatchReadiness"`
	Title             string                  `json:"title"`
	TemplatePath      string                  `json:"templatePath"`
	TemplateName      string                  `json:"templateName"`
	TemplateVersion   int                     `json:"templateVersion"`
	SubmittedBy       string                  `json:"submittedBy"`
	SubmittedAt       string                  `json:"submittedAt"`
	Supersedes        string                  `json:"supersedes,omitempty"`
	DocumentCount     int                     `json:"documentCount"`
	ReadyCount        int                     `json:"readyCount"`
	FailedCount       int                     `json:"failedCount"`
	WarningCount      int                     `json:"warningCount"`
	ValidationResults []BatchValidationResult `json:"validationResults"`
}

type renderBody struct {
	RenderRequest
	DataSource any `json:"dataSource"`
}

// Render renders one record (201, or 200 for a repeat of the same render: Repeated). The
// request is keyed by its correlationId, so the client may send it again after a lost answer.
// Errors: *Error (400 record_invalid naming each field and rule, 409 document_exists, ...).
func (c *Client) Render(ctx context.Context, req RenderRequest, record Record) (*Rendered, error) {
	var out Rendered
	idem := req.Options != nil && req.Options.CorrelationID != ""
	r, err := c.do(ctx, call{method: http.MethodPost, path: "/render", json: renderBody{req, record},
		idempotent: idem, ok: []int{http.StatusCreated, http.StatusOK}}, &out)
	if err == nil {
		out.Repeated = r.Status == http.StatusOK
	}
	return &out, err
}

// SubmitBatch submits records (1 to 10,000) as a batch for dispatch and returns the intake
// receipt (202: READY or PARTIAL). A batch with an invalid record is stored as invalid and
// nothing is queued: *InvalidBatchError with its receipt. Not sent again on a lost answer (a
// second batch would be made). Errors: *InvalidBatchError, *Error (400 dispatch_required, ...).
func (c *Client) SubmitBatch(ctx context.Context, req RenderRequest, records []Record) (*BatchReceipt, error) {
	var rc BatchReceipt
	r, err := c.do(ctx, call{method: http.MethodPost, path: "/render", json: renderBody{req, records},
		ok: []int{http.StatusAccepted, http.StatusUnprocessableEntity}}, &rc)
	if err != nil {
		return nil, err
	}
	if r.Status == http.StatusUnprocessableEntity {
		return &rc, &InvalidBatchError{Receipt: rc}
	}
	return &rc, nil
}

// IsInvalidBatch reports whether err is an *InvalidBatchError.
func IsInvalidBatch(err error) bool {
	var e *InvalidBatchError
	return errors.As(err, &e)
}

// BatchSummary is one batch of a list.
type BatchSummary struct {
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

// Batch is the batch resource.
type Batch struct {
	BatchSummary
	TemplatePath      string                  `json:"templatePath"`
	TemplateName      string                  `json:"templateName"`
	TemplateVersion   int                     `json:"templateVersion"`
	CorrelationID     string                  `json:"correlationId"`
	ProcessedCount    int                     `json:"processedCount"`
	ErrorCount        int                     `json:"errorCount"`
	SubmittedBy       string                  `json:"submittedBy"`
	ApprovedBy        string                  `json:"approvedBy,omitempty"`
	DecisionComments  string                  `json:"decisionComments,omitempty"`
	DecidedAt         string                  `json:"decidedAt,omitempty"`
	QueuedAt          string                  `json:"queuedAt,omitempty"`
	CompletedAt       string                  `json:"completedAt,omitempty"`
	Supersedes        string                  `json:"supersedes,omitempty"`
	Mode              string                  `json:"mode"`
	DeliveryMode      string                  `json:"deliveryMode"`
	ReceiptPath       string                  `json:"receiptPath"`
	CombinedPath      string                  `json:"combinedPath,omitempty"`
	BundlePath        string                  `json:"bundlePath,omitempty"`
	ValidationResults []BatchValidationResult `json:"validationResults"`
}

// BatchRecord is one record's state in a batch.
type BatchRecord struct {
	Index         int      `json:"index"`
	Status        string   `json:"status"`
	State         string   `json:"state"`
	Messages      []string `json:"messages"`
	CorrelationID string   `json:"correlationId,omitempty"`
	DocumentID    string   `json:"documentId,omitempty"`
	PDFBlobPath   string   `json:"pdfBlobPath,omitempty"`
	DeliveryIDs   []string `json:"deliveryIds,omitempty"`
	Error         string   `json:"error,omitempty"`
	ProcessedAt   string   `json:"processedAt,omitempty"`
}

// BatchRecords is one page of a batch's records.
type BatchRecords struct {
	BatchID           string        `json:"batchId"`
	ContinuationToken string        `json:"continuationToken,omitempty"`
	Records           []BatchRecord `json:"records"`
}

// Decided is a batch decision's answer.
type Decided struct {
	BatchID   string `json:"batchId"`
	State     string `json:"state"`
	DecidedAt string `json:"decidedAt"`
}

// ListBatches lists the tenant's batches, newest first (state "" : all), every page: it follows
// the list's continuationToken until the service gives none (at most maxListPages pages).
func (c *Client) ListBatches(ctx context.Context, state string) (total int, batches []BatchSummary, err error) {
	q := url.Values{}
	if state != "" {
		q.Set("state", state)
	}
	for page := 0; page < maxListPages; page++ {
		var out struct {
			Total             int            `json:"total"`
			Batches           []BatchSummary `json:"batches"`
			ContinuationToken string         `json:"continuationToken"`
		}
		if _, err = c.do(ctx, call{method: http.MethodGet, path: "/dispatch/batch", query: q}, &out); err != nil {
			return total, batches, err
		}
		total = out.Total
		batches = append(batches, out.Batches...)
		if out.ContinuationToken == "" {
			return total, batches, nil
		}
		q.Set("continuationToken", out.ContinuationToken)
	}
	return total, batches, nil
}

// maxListPages bounds the pages ListBatches reads (the service's pages hold up to 100 batches).
const maxListPages = 1000

// GetBatch reads one batch. Errors: *Error (404 batch_not_found).
func (c *Client) GetBatch(ctx context.Context, batchID string) (*Batch, error) {
	var b Batch
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/dispatch/batch/" + esc(batchID)}, &b)
	return &b, err
}

// BatchRecords reads a page of a batch's records (status "" : all; limit 0: the service's
// default; continuation "" : the first page).
func (c *Client) BatchRecords(ctx context.Context, batchID, status string, limit int, continuation string) (*BatchRecords, error) {
	q := url.Values{}
	if status != "" {
		q.Set("status", status)
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	if continuation != "" {
		q.Set("continuationToken", continuation)
	}
	var out BatchRecords
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/dispatch/batch/" + esc(batchID) + "/records", query: q}, &out)
	return &out, err
}

// BatchReceiptPDF reads the stored intake receipt (a PDF).
func (c *Client) BatchReceiptPDF(ctx context.Context, batchID string) ([]byte, error) {
	r, err := c.do(ctx, call{method: http.MethodGet, path: "/dispatch/batch/" + esc(batchID) + "/receipt",
		header: http.Header{"Accept": {"application/pdf"}}}, nil)
	if err != nil {
		return nil, err
	}
	return r.Body, nil
}

// DecideBatch approves, rejects or requests changes (decision approve, reject or
// request-changes). Errors: *Error (403 self_approval, 409 invalid_state, ...).
func (c *Client) DecideBatch(ctx context.Context, batchID, decision, comments string) (*Decided, error) {
	body := map[string]string{"decision": decision}
	if comments != "" {
		body["comments"] = comments
	}
	var d Decided
	_, err := c.do(ctx, call{method: http.MethodPost, path: "/dispatch/batch/" + esc(batchID) + "/decide", json: body}, &d)
	return &d, err
}

// CancelBatch cancels a batch that has not started. Errors: *Error (409 invalid_state).
func (c *Client) CancelBatch(ctx context.Context, batchID string) (state string, err error) {
	var out struct {
		State string `json:"state"`
	}
	_, err = c.do(ctx, call{method: http.MethodPost, path: "/dispatch/batch/" + esc(batchID) + "/cancel"}, &out)
	return out.State, err
}
