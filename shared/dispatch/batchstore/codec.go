package batchstore

import (
	"cmp"
	"encoding/json"
	"fmt"

	"github.com/esign-svc/esign/shared/azure/tablestore"
	"github.com/esign-svc/esign/shared/dispatch"
	"github.com/esign-svc/esign/shared/kernel"
)

func batchEntity(b *dispatch.Batch) (tablestore.Entity, error) {
	settings, err := json.Marshal(b.Settings)
	if err != nil {
		return tablestore.Entity{}, err
	}
	ns := kernel.Nanos
	return tablestore.Entity{PartitionKey: b.BatchID, RowKey: rowBatch, ETag: b.ETag, Props: map[string]any{
		"tenantId": b.TenantID, "correlationId": b.CorrelationID, "title": b.Title, "templatePath": b.TemplatePath,
		"templateName": b.TemplateName, "templateVersion": int64(b.TemplateVersion), "submittedBy": b.SubmittedBy,
		"submitterEmailEnc": b.SubmitterEmailEnc, "approversEnc": b.ApproversEnc, "state": string(b.State),
		"readiness": string(b.Readiness), "settings": string(settings), "supersedes": b.Supersedes,
		"documentCount": int64(b.DocumentCount), "readyCount": int64(b.ReadyCount), "failedCount": int64(b.FailedCount),
		"warningCount": int64(b.WarningCount), "processedCount": int64(b.ProcessedCount), "errorCount": int64(b.ErrorCount),
		"approvedBy": b.ApprovedBy, "decisionComments": b.DecisionComments,
		"createdAtNs": ns(b.CreatedAt), "updatedAtNs": ns(b.UpdatedAt), "decidedAtNs": ns(b.DecidedAt),
		"queuedAtNs": ns(b.QueuedAt), "completedAtNs": ns(b.CompletedAt),
		"recordsPath": b.RecordsPath, "receiptPath": b.ReceiptPath, "combinedPath": b.CombinedPath, "bundlePath": b.BundlePath,
		"recordsPerMessage": int64(b.Group()),
	}}, nil
}

func batchFrom(e tablestore.Entity) (*dispatch.Batch, error) {
	at := kernel.FromNanos
	b := &dispatch.Batch{
		BatchID: e.PartitionKey, TenantID: e.String("tenantId"), CorrelationID: e.String("correlationId"),
		Title: e.String("title"), TemplatePath: e.String("templatePath"), TemplateName: e.String("templateName"),
		TemplateVersion: int(e.Int64("templateVersion")), SubmittedBy: e.String("submittedBy"),
		SubmitterEmailEnc: e.String("submitterEmailEnc"), ApproversEnc: e.String("approversEnc"),
		State: dispatch.State(e.String("state")), Readiness: dispatch.Readiness(e.String("readiness")),
		Supersedes: e.String("supersedes"), DocumentCount: int(e.Int64("documentCount")),
		ReadyCount: int(e.Int64("readyCount")), FailedCount: int(e.Int64("failedCount")),
		WarningCount: int(e.Int64("warningCount")), ProcessedCount: int(e.Int64("processedCount")),
		ErrorCount: int(e.Int64("errorCount")), ApprovedBy: e.String("approvedBy"),
		DecisionComments: e.String("decisionComments"), CreatedAt: at(e.Int64("createdAtNs")),
		UpdatedAt: at(e.Int64("updatedAtNs")), DecidedAt: at(e.Int64("decidedAtNs")), QueuedAt: at(e.Int64("queuedAtNs")),
		CompletedAt: at(e.Int64("completedAtNs")), RecordsPath: e.String("recordsPath"), ReceiptPath: e.String("receiptPath"),
		CombinedPath: e.String("combinedPath"), BundlePath: e.String("bundlePath"), ETag: e.ETag,
		RecordsPerMessage: groupOf(e),
	}
	if v := e.String("settings"); v != "" {
		if err := json.Unmarshal([]byte(v), &b.Settings); err != nil {
			return nil, fmt.Errorf("batchstore: %s settings: %w", b.BatchID, err)
		}
	}
	return b, nil
}

// groupOf is the record group a batch row records (Batch.Group); a row written before it
// recorded one: groups of 10 (its counter shards count those).
func groupOf(e tablestore.Entity) int {
	return cmp.Or(int(e.Int64("recordsPerMessage")), dispatch.LegacyRecordsPerMessage)
}

func recordEntity(r *dispatch.Record) (tablestore.Entity, error) {
	msgs, err := json.Marshal(r.Messages)
	if err != nil {
		return tablestore.Entity{}, err
	}
	ids, err := json.Marshal(r.DeliveryIDs)
	if err != nil {
		return tablestore.Entity{}, err
	}
	return tablestore.Entity{PartitionKey: r.BatchID, RowKey: recordKey(r.Index), ETag: r.ETag, Props: map[string]any{
		"index": int64(r.Index), "status": r.Status, "messages": string(msgs), "warning": r.Warning,
		"state": string(r.State), "dataEnc": r.DataEnc, "correlationId": r.CorrelationID, "documentId": r.DocumentID,
		"pdfBlobPath": r.PDFBlobPath, "pdfHash": r.PDFHash, "deliveryIds": string(ids), "error": r.Error,
		"processedAtNs": kernel.Nanos(r.ProcessedAt), "nameSeq": int64(r.NameSeq),
	}}, nil
}

func recordFrom(e tablestore.Entity) (*dispatch.Record, error) {
	r := &dispatch.Record{
		BatchID: e.PartitionKey, Index: int(e.Int64("index")), Status: e.String("status"), Warning: e.Bool("warning"),
		State: dispatch.RecordState(e.String("state")), DataEnc: e.String("dataEnc"),
		CorrelationID: e.String("correlationId"), DocumentID: e.String("documentId"), PDFBlobPath: e.String("pdfBlobPath"),
		PDFHash: e.String("pdfHash"), Error: e.String("error"), ProcessedAt: kernel.FromNanos(e.Int64("processedAtNs")),
		NameSeq: int(e.Int64("nameSeq")), ETag: e.ETag,
	}
	for prop, into := range map[string]any{"messages": &r.Messages, "deliveryIds": &r.DeliveryIDs} {
		if v := e.String(prop); v != "" && v != "null" {
			if err := json.Unmarshal([]byte(v), into); err != nil {
				return nil, fmt.Errorf("batchstore: %s record %d %s: %w", r.BatchID, r.Index, prop, err)
			}
		}
	}
	return r, nil
}
