package deliverystore

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/esign-svc/esign/shared/audit"
	"github.com/esign-svc/esign/shared/azure/tablestore"
	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/otp"
)

// Row keys inside a delivery's partition (PartitionKey = deliveryId).
const (
	rowSession  = "session"
	prefixEvent = audit.RowPrefix
)

func sessionEntity(s *delivery.Session) (tablestore.Entity, error) {
	o, err := json.Marshal(s.OTP.Stored())
	if err != nil {
		return tablestore.Entity{}, err
	}
	target := ""
	if s.SharePoint != nil {
		b, err := json.Marshal(s.SharePoint)
		if err != nil {
			return tablestore.Entity{}, err
		}
		target = string(b)
	}
	reminders := ""
	if s.Reminders != nil {
		b, err := json.Marshal(s.Reminders)
		if err != nil {
			return tablestore.Entity{}, err
		}
		reminders = string(b)
	}
	return tablestore.Entity{PartitionKey: s.DeliveryID, RowKey: rowSession, ETag: s.ETag, Props: map[string]any{
		"tenantId": s.TenantID, "createdBy": s.CreatedBy, "correlationId": s.CorrelationID, "documentId": s.DocumentID,
		"documentName": s.DocumentName, "pdfBlobPath": s.PDFBlobPath, "mode": string(s.Mode), "state": string(s.State),
		"recipientHash": s.RecipientHash, "recipientEnc": s.RecipientEnc, "recipientName": s.RecipientName,
		"recipientRole": s.RecipientRole, "recipientLocale": s.RecipientLocale, "requesterOrg": s.RequesterOrg, "message": s.Message,
		"requireOtp": s.RequireOTP, "otp": string(o), "sharePointTarget": target,
		"uploadState": string(s.UploadState), "uploadError": s.UploadError, "uploadWebUrl": s.UploadWebURL,
		"uploadItemId": s.UploadItemID, "viewCount": int64(s.ViewCount),
		"createdAtNs": ns(s.CreatedAt), "sentAtNs": ns(s.SentAt), "openedAtNs": ns(s.OpenedAt),
		"downloadedAtNs": ns(s.DownloadedAt), "expiresAtNs": ns(s.ExpiresAt), "revokedAtNs": ns(s.RevokedAt),
		"reminders": reminders, "remindCount": int64(s.RemindCount), "remindedAtNs": ns(s.RemindedAt),
	}}, nil
}

func sessionFrom(e tablestore.Entity) (*delivery.Session, error) {
	s := &delivery.Session{
		DeliveryID: e.PartitionKey, TenantID: e.String("tenantId"), CreatedBy: e.String("createdBy"),
		CorrelationID: e.String("correlationId"), DocumentID: e.String("documentId"), DocumentName: e.String("documentName"),
		PDFBlobPath: e.String("pdfBlobPath"), Mode: delivery.Mode(e.String("mode")), State: delivery.State(e.String("state")),
		RecipientHash: e.String("recipientHash"), RecipientEnc: e.String("recipientEnc"), RecipientName: e.String("recipientName"),
		RecipientRole: e.String("recipientRole"), RecipientLocale: e.String("recipientLocale"), RequesterOrg: e.String("requesterOrg"), Message: e.String("message"),
		RequireOTP: e.Bool("requireOtp"), UploadState: delivery.UploadState(e.String("uploadState")),
		UploadError: e.String("uploadError"), UploadWebURL: e.String("uploadWebUrl"), UploadItemID: e.String("uploadItemId"),
		ViewCount: int(e.Int64("viewCount")), CreatedAt: at(e.Int64("createdAtNs")), SentAt: at(e.Int64("sentAtNs")),
		OpenedAt: at(e.Int64("openedAtNs")), DownloadedAt: at(e.Int64("downloadedAtNs")), ExpiresAt: at(e.Int64("expiresAtNs")),
		RevokedAt: at(e.Int64("revokedAtNs")), RemindCount: int(e.Int64("remindCount")),
		RemindedAt: at(e.Int64("remindedAtNs")), ETag: e.ETag,
	}
	if v := e.String("reminders"); v != "" {
		if err := json.Unmarshal([]byte(v), &s.Reminders); err != nil {
			return nil, fmt.Errorf("deliverystore: %s reminders: %w", s.DeliveryID, err)
		}
	}
	if v := e.String("otp"); v != "" {
		var o otp.Record
		if err := json.Unmarshal([]byte(v), &o); err != nil {
			return nil, fmt.Errorf("deliverystore: %s otp: %w", s.DeliveryID, err)
		}
		s.OTP = o.State()
	}
	if v := e.String("sharePointTarget"); v != "" {
		s.SharePoint = &delivery.Target{}
		if err := json.Unmarshal([]byte(v), s.SharePoint); err != nil {
			return nil, fmt.Errorf("deliverystore: %s target: %w", s.DeliveryID, err)
		}
	}
	return s, nil
}

// AuditEvent is one stored audit event (Slot is -1: a delivery has no slots).
type AuditEvent = audit.Record

func ns(t time.Time) int64 { return audit.Nanos(t) }

func at(n int64) time.Time { return audit.FromNanos(n) }
