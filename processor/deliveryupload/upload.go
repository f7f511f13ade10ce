package deliveryupload

import (
	"context"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/funcproto"
	"github.com/esign-svc/esign/shared/graph"
	"github.com/esign-svc/esign/shared/pdf/pdfdoc"
)

// Upload failure codes of this job (besides graph's: graph_forbidden, graph_auth_failed,
// graph_unavailable, sharepoint_target_not_found, invalid_sharepoint_target, ...).
const (
	CodeNotConfigured    = "graph_not_configured"
	CodeDocumentMissing  = pdfdoc.CodeNotFound
	CodeRetriesExhausted = "upload_retries_exhausted"
)

// HandleUpload is the DeliveryUpload queue function (delivery.UploadMessage). Errors: Permanent
// for messages that can never succeed (recorded as delivery.upload_failed); a Graph or storage
// failure worth retrying (unavailable, throttled, a dropped connection) is returned so the host
// retries; after the last retry the poison handler records the failure.
func (j *Job) HandleUpload(ctx context.Context, qm funcproto.QueueMessage) error {
	var m delivery.UploadMessage
	if err := qm.Decode(&m); err != nil {
		return funcproto.Permanent(err)
	}
	s, err := j.load(ctx, m.DeliveryID, m.TenantID)
	if err != nil {
		return err
	}
	switch {
	case !s.Mode.Uploads() || s.SharePoint == nil:
		return funcproto.Permanent(apperr.New(apperr.KindInvalid, "no_upload", "the delivery's mode uploads nothing"))
	case s.UploadState == delivery.UploadDone:
		funcproto.Logf(ctx, "deliveryupload: %s already uploaded; acknowledged", s.DeliveryID)
		return nil
	case s.State == delivery.StateRevoked:
		return j.fail(ctx, s, qm.DequeueCount, funcproto.Permanent(delivery.ErrRevoked))
	case j.graph == nil:
		return j.fail(ctx, s, qm.DequeueCount, funcproto.Permanent(apperr.New(apperr.KindUnavailable, CodeNotConfigured,
			"the service has no document-library connection (GRAPH_* settings)")))
	}
	src, err := delivery.SourceOf(s) // documents/..., or signed/<the session's tenant>/...
	if err != nil {
		return j.fail(ctx, s, qm.DequeueCount, funcproto.Permanent(apperr.New(apperr.KindInvalid, CodeDocumentMissing, "the stored document path is invalid")))
	}
	body, props, err := j.blobs.Open(ctx, src.Container, src.Name)
	if apperr.KindOf(err) == apperr.KindNotFound {
		return j.fail(ctx, s, qm.DequeueCount, funcproto.Permanent(apperr.New(apperr.KindInvalid, CodeDocumentMissing, "the document is no longer stored")))
	}
	if err != nil {
		return err
	}
	defer body.Close()
	t := graph.Target{SiteURL: s.SharePoint.SiteURL, LibraryPath: s.SharePoint.LibraryPath, FolderPath: s.SharePoint.FolderPath}
	res, err := j.graph.Upload(ctx, t, s.DocumentName, body, props.Size)
	if err != nil {
		if retryable(err) {
			return err
		}
		return j.fail(ctx, s, qm.DequeueCount, funcproto.Permanent(err))
	}
	if err := j.deliveries.RecordUpload(ctx, s.DeliveryID, res.WebURL, res.ItemID, res.Name, system); err != nil {
		return err
	}
	funcproto.Logf(ctx, "deliveryupload: %s uploaded (%d bytes)", s.DeliveryID, res.Size)
	return nil
}

// retryable: a dependency that may answer later (503 unavailable, throttling), or a failure
// that is not a domain error at all (a dropped connection, a short read).
func retryable(err error) bool {
	e, ok := apperr.As(err)
	return !ok || e.Kind == apperr.KindUnavailable && e.Code != "graph_auth_failed"
}

// fail records delivery.upload_failed with the cause's code and returns cause (Permanent: the
// message is acknowledged), or the storage error (retried, so the failure is recorded next time).
func (j *Job) fail(ctx context.Context, s *delivery.Session, attempt int, cause error) error {
	code, detail := codeOf(cause), detailOf(cause)
	if err := j.deliveries.RecordUploadFailed(ctx, s.DeliveryID, code, detail, attempt, system); err != nil {
		return err
	}
	funcproto.Logf(ctx, "deliveryupload: %s upload failed for good: %s", s.DeliveryID, code)
	return cause
}

// HandleUploadPoison is the DeliveryUploadPoison function: a message the host gave up on
// (every retry failed) is recorded as delivery.upload_failed upload_retries_exhausted, unless
// the upload was recorded meanwhile.
func (j *Job) HandleUploadPoison(ctx context.Context, qm funcproto.QueueMessage) error {
	var m delivery.UploadMessage
	if err := qm.Decode(&m); err != nil {
		return funcproto.Permanent(err)
	}
	s, err := j.load(ctx, m.DeliveryID, m.TenantID)
	if err != nil {
		return err
	}
	if s.UploadState == delivery.UploadDone || s.UploadState == delivery.UploadFailed {
		return nil
	}
	return j.fail(ctx, s, qm.DequeueCount, funcproto.Permanent(apperr.New(apperr.KindUnavailable, CodeRetriesExhausted,
		"the document library could not be reached after several attempts")))
}
