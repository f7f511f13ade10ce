// Package documentstore keeps rendered documents in Azure Table storage on the aggregate kernel
// (shared/kernel/aggstore): one partition per (tenant, correlationId) holding the document row
// (RowKey document-<partition>, its own: aggstore.Kind.OwnRoot; "document" before issue 26,
// moved on its first read) and its audit rows (document.rendered, document.esign_started,
// document.delivery_started), each change written with its events in one transaction.
package documentstore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/audit"
	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/azure/tablestore"
	"github.com/esign-svc/esign/shared/document"
	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/kernel/aggstore"
)

// TableDocuments is the default table name.
const TableDocuments = "documents"

const rowDocument = "document"

// ErrNotFound is a correlationId never rendered.
var ErrNotFound = &apperr.Error{Kind: apperr.KindNotFound, Code: "document_not_found", Detail: "no such rendered document"}

var kind = aggstore.Kind[*document.Document]{
	Root:     rowDocument,
	OwnRoot:  true, // document-<id>: one per batch record; "document" before issue 26
	NotFound: ErrNotFound,
	ID:       func(d *document.Document) string { return partition(d.TenantID, d.CorrelationID) },
	Encode:   encode,
	Decode:   decode,
}

var _ document.Store = (*Store)(nil)

// Store is the table-backed document store. Safe for concurrent use.
type Store struct {
	tab *aggstore.Table[*document.Document]
}

// New opens the store (no I/O; Ensure creates the table).
func New(acct *azconn.Account, table string) (*Store, error) {
	tab, err := aggstore.NewTable(acct, table, kind)
	if err != nil {
		return nil, err
	}
	return &Store{tab: tab}, nil
}

// Ensure creates the table when missing.
func (s *Store) Ensure(ctx context.Context) error { return s.tab.Ensure(ctx) }

// Create stores a new document with its Rendered change. Errors: apperr conflict when the
// correlationId is stored already (its row is left as it is); the tablestore ones.
func (s *Store) Create(ctx context.Context, d *document.Document, ch kernel.Change) error {
	return s.tab.Create(ctx, d, ch)
}

// partition is a document's PartitionKey, a hash of (tenant, correlationId): correlationIds are
// unique per tenant, never across tenants (DESIGN 14), so two tenants' documents never meet and
// another tenant's id reads as a missing one.
func partition(tenant, correlationID string) string {
	return aggstore.Key{Kind: "doc", Scope: tenant, Value: correlationID}.Partition()
}

// Load reads tenant's document by one point read. Errors: ErrNotFound (also for another
// tenant's correlationId); the tablestore ones.
func (s *Store) Load(ctx context.Context, tenant, correlationID string) (*document.Document, error) {
	return s.tab.Load(ctx, partition(tenant, correlationID))
}

// The one Update shape of the stores (issue 23).
var _ kernel.Updater[*document.Document, document.Step] = (*Store)(nil)

// Update loads document id (document.ID of the tenant's correlationId), runs step and applies
// its change (the kernel's Update: a bounded retry on a lost race; a step error comes back with
// nothing written). Errors: ErrNotFound (also for an id that is not a document's); the
// tablestore ones.
func (s *Store) Update(ctx context.Context, id string, step document.Step) (*document.Document, kernel.Change, error) {
	tenant, correlationID, ok := document.SplitID(id)
	if !ok {
		return nil, kernel.Change{}, ErrNotFound
	}
	return s.tab.Update(ctx, partition(tenant, correlationID), aggstore.Plain(step))
}

// Events is the document's audit trail in time order.
func (s *Store) Events(ctx context.Context, tenant, correlationID string) ([]audit.Record, error) {
	return s.tab.Events(ctx, partition(tenant, correlationID))
}

func encode(d *document.Document) (tablestore.Entity, error) {
	ids, err := json.Marshal(d.DeliveryIDs)
	if err != nil {
		return tablestore.Entity{}, err
	}
	return tablestore.Entity{PartitionKey: partition(d.TenantID, d.CorrelationID), RowKey: rowDocument, ETag: d.ETag, Props: map[string]any{
		"tenantId": d.TenantID, "correlationId": d.CorrelationID, "createdBy": d.CreatedBy, "documentId": d.DocumentID, "docType": d.DocType,
		"title": d.Title, "templatePath": d.TemplatePath, "templateName": d.TemplateName,
		"templateVersion": int64(d.TemplateVersion), "pdfBlobPath": d.PDFBlobPath, "pdfHash": d.PDFHash,
		"manifestPath": d.ManifestPath, "pages": int64(d.Pages), "requestHash": d.RequestHash,
		"generatedBy": d.GeneratedBy, "sourceSystem": d.SourceSystem, "referenceId": d.ReferenceID,
		"createdAtNs":  kernel.Nanos(d.CreatedAt),
		"esignGroupId": d.ESignGroupID, "deliveryIds": string(ids),
	}}, nil
}

func decode(e tablestore.Entity) (*document.Document, error) {
	d := &document.Document{
		CorrelationID: e.String("correlationId"), TenantID: e.String("tenantId"), CreatedBy: e.String("createdBy"),
		DocumentID: e.String("documentId"), DocType: e.String("docType"), Title: e.String("title"),
		TemplatePath: e.String("templatePath"), TemplateName: e.String("templateName"),
		TemplateVersion: int(e.Int64("templateVersion")), PDFBlobPath: e.String("pdfBlobPath"),
		PDFHash: e.String("pdfHash"), ManifestPath: e.String("manifestPath"), Pages: int(e.Int64("pages")),
		RequestHash: e.String("requestHash"), GeneratedBy: e.String("generatedBy"),
		SourceSystem: e.String("sourceSystem"), ReferenceID: e.String("referenceId"),
		CreatedAt:    kernel.FromNanos(e.Int64("createdAtNs")),
		ESignGroupID: e.String("esignGroupId"), ETag: e.ETag,
	}
	if v := e.String("deliveryIds"); v != "" && v != "null" {
		if err := json.Unmarshal([]byte(v), &d.DeliveryIDs); err != nil {
			return nil, fmt.Errorf("documentstore: %s deliveryIds: %w", d.CorrelationID, err)
		}
	}
	return d, nil
}
