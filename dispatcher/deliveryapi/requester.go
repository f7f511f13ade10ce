package deliveryapi

import (
	"net/http"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/auth"
	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/web"
)

type summary struct {
	DeliveryID    string `json:"deliveryId"`
	CorrelationID string `json:"correlationId"`
	DocumentName  string `json:"documentName"`
	State         string `json:"state"`
	Mode          string `json:"mode"`
	ExpiresAt     string `json:"expiresAt"`
	CreatedAt     string `json:"createdAt"`
	SentAt        string `json:"sentAt,omitempty"`
	OpenedAt      string `json:"openedAt,omitempty"`
	DownloadedAt  string `json:"downloadedAt,omitempty"`
	RevokedAt     string `json:"revokedAt,omitempty"`
	ViewCount     int    `json:"viewCount"`
	Recipient     string `json:"recipient,omitempty"` // decrypted, for the creator's tenant only
	RecipientName string `json:"recipientName,omitempty"`
	RecipientRole string `json:"recipientRole,omitempty"`
	RequireOTP    bool   `json:"requireOtp"`
	OTPVerified   bool   `json:"otpVerified"`
	UploadState   string `json:"uploadState,omitempty"`
	UploadError   string `json:"uploadError,omitempty"`
	UploadWebURL  string `json:"uploadWebUrl,omitempty"`
	// Reminders counts the automatic reminders sent so far (DESIGN 17; always present, 0
	// without a reminders block); LastRemindedAt is the latest one's time; ReminderPolicy is
	// the delivery's reminders block (absent: none).
	Reminders      int                      `json:"reminders"`
	LastRemindedAt string                   `json:"lastRemindedAt,omitempty"`
	ReminderPolicy *delivery.ReminderPolicy `json:"reminderPolicy,omitempty"`
}

// list is GET /api/delivery-sessions?correlationId=: the caller's tenant's sessions of that
// correlationId, oldest first (an empty list when there are none). Errors: 400 correlationId;
// 401; 403.
func (a *API) list(w http.ResponseWriter, r *http.Request) error {
	p, err := a.caller(r, auth.RoleInitiator, auth.RoleAdmin)
	if err != nil {
		return err
	}
	if err := web.NoBody(r); err != nil {
		return err
	}
	corr := r.URL.Query().Get("correlationId")
	probe := delivery.CreateRequest{CorrelationID: corr}
	if e, ok := apperr.As(probe.Validate()); ok {
		for _, f := range e.Fields {
			if f.Field == "correlationId" {
				return apperr.Invalid(apperr.CodeInvalidRequest, f)
			}
		}
	}
	sessions, err := a.Deliveries.List(r.Context(), p.TenantID, corr)
	if err != nil {
		return err
	}
	now := a.now()
	out := make([]summary, 0, len(sessions))
	for _, s := range sessions {
		out = append(out, summary{
			DeliveryID: s.DeliveryID, CorrelationID: s.CorrelationID, DocumentName: s.DocumentName,
			State: string(s.StateAt(now)), Mode: string(s.Mode), ExpiresAt: stamp(s.ExpiresAt), CreatedAt: stamp(s.CreatedAt),
			SentAt: stamp(s.SentAt), OpenedAt: stamp(s.OpenedAt), DownloadedAt: stamp(s.DownloadedAt), RevokedAt: stamp(s.RevokedAt),
			ViewCount: s.ViewCount, Recipient: s.Recipient, RecipientName: s.RecipientName, RecipientRole: s.RecipientRole,
			RequireOTP: s.RequireOTP, OTPVerified: s.OTPVerified(), UploadState: string(s.UploadState),
			UploadError: s.UploadError, UploadWebURL: s.UploadWebURL,
			Reminders: s.RemindCount, LastRemindedAt: stamp(s.RemindedAt), ReminderPolicy: s.Reminders,
		})
	}
	return web.JSON(w, http.StatusOK, map[string]any{"sessions": out})
}

// revoke is POST /api/delivery/{deliveryId}/revoke: the session ends for good; every recipient
// route answers 410 from now on, and the download URLs already issued fail (their copy of the
// document is deleted). Revoking again answers the same (idempotent). Errors: 401; 403;
// 404 delivery_not_found also for another tenant's session.
func (a *API) revoke(w http.ResponseWriter, r *http.Request) error {
	p, err := a.caller(r, auth.RoleInitiator, auth.RoleAdmin)
	if err != nil {
		return err
	}
	if err := web.NoBody(r); err != nil {
		return err
	}
	s, err := a.Deliveries.Revoke(r.Context(), p.TenantID, r.PathValue("deliveryId"), initiator(r, p))
	if err != nil {
		return err
	}
	return web.JSON(w, http.StatusOK, map[string]string{"deliveryId": s.DeliveryID, "state": string(s.State)})
}
