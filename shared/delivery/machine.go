package delivery

import (
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/otp"
)

// Audit event kinds (DESIGN 5: dotted names).
const (
	EvCreated       = "delivery.created"
	EvInvited       = "delivery.invited"
	EvInviteFailed  = "delivery.invite_failed"
	EvOpened        = "delivery.opened"
	EvDownloaded    = "delivery.downloaded"
	EvSASIssued     = "delivery.sas_issued"
	EvOTPSent       = "delivery.otp_sent"
	EvOTPSendFailed = "delivery.otp_send_failed"
	EvOTPVerified   = "delivery.otp_verified"
	EvOTPFailed     = "delivery.otp_failed"
	EvOTPLocked     = "delivery.otp_locked"
	EvOTPBlocked    = "delivery.otp_blocked"
	EvRevoked       = "delivery.revoked"
	EvUploaded      = "delivery.uploaded"
	EvUploadFailed  = "delivery.upload_failed"
	EvReminded      = "delivery.reminded"
	EvExpired       = "delivery.expired"
)

// Errors of the transitions.
var (
	ErrExpired     = &apperr.Error{Kind: apperr.KindGone, Code: "delivery_expired", Detail: "this delivery link has expired"}
	ErrRevoked     = &apperr.Error{Kind: apperr.KindGone, Code: "delivery_revoked", Detail: "this delivery was revoked by its sender"}
	ErrOTPRequired = &apperr.Error{Kind: apperr.KindForbidden, Code: otp.CodeRequired, Detail: "pass the one-time passcode challenge first"}
	ErrOTPNotUsed  = &apperr.Error{Kind: apperr.KindInvalid, Code: otp.CodeNotRequired, Detail: "this delivery does not use a one-time passcode"}
)

// CheckLive is nil while recipients may use the session; 410 delivery_revoked or
// delivery_expired otherwise (revoked wins when both hold).
func CheckLive(s *Session, now time.Time) error {
	switch s.StateAt(now) {
	case StateRevoked:
		return ErrRevoked
	case StateExpired:
		return ErrExpired
	}
	return nil
}

// CheckDocument is the document gate: 410 when the session ended, 403 otp_required while
// requireOtp holds and the OTP was not passed.
func CheckDocument(s *Session, now time.Time) error {
	if err := CheckLive(s, now); err != nil {
		return err
	}
	if s.RequireOTP && !s.OTPVerified() {
		return ErrOTPRequired
	}
	return nil
}

// Start makes the change of a new session: state sent, upload pending for the library modes,
// and delivery.created (mode, document name, role, expiry, requireOtp; never the address).
func Start(s *Session, now time.Time) Change {
	var c Change
	s.State, s.CreatedAt = StateSent, now
	if s.Mode.Uploads() {
		s.UploadState = UploadPending
	}
	record(&c, EvCreated, now, map[string]any{"mode": string(s.Mode), "documentName": s.DocumentName,
		"recipientRole": s.RecipientRole, "expiresAt": stamp(s.ExpiresAt), "requireOtp": s.RequireOTP,
		"correlationId": s.CorrelationID})
	return c
}

// Invited records that the invitation e-mail went out: sentAt (first), delivery.invited.
// Errors: 410 when the session ended meanwhile (the invitation is then not sent).
func Invited(s *Session, now time.Time, channel string) (Change, error) {
	var c Change
	if err := CheckLive(s, now); err != nil {
		return c, err
	}
	if s.SentAt.IsZero() {
		s.SentAt = now
	}
	record(&c, EvInvited, now, map[string]any{"channel": channel})
	return c, nil
}

// InviteFailed records an invitation the provider refused for good.
func InviteFailed(s *Session, now time.Time, code string) Change {
	var c Change
	record(&c, EvInviteFailed, now, map[string]any{"code": code})
	return c
}

// Open records an opened access: openedAt (first), viewCount + 1, state sent -> opened (a
// downloaded session stays downloaded). Errors: 410.
func Open(s *Session, now time.Time) (Change, error) {
	var c Change
	if err := CheckLive(s, now); err != nil {
		return c, err
	}
	if s.OpenedAt.IsZero() {
		s.OpenedAt = now
	}
	s.ViewCount++
	if s.State == StateSent {
		s.State = StateOpened
	}
	record(&c, EvOpened, now, map[string]any{"viewCount": s.ViewCount})
	return c, nil
}

// Download records a downloaded access: downloadedAt (first), state -> downloaded. A download
// cannot have happened before the OTP gate opened, so it is refused then. Errors: 410; 403
// otp_required.
func Download(s *Session, now time.Time) (Change, error) {
	var c Change
	if err := CheckDocument(s, now); err != nil {
		return c, err
	}
	first := s.DownloadedAt.IsZero()
	if first {
		s.DownloadedAt = now
	}
	s.State = StateDownloaded
	record(&c, EvDownloaded, now, map[string]any{"first": first})
	return c, nil
}

// IssueSAS records that a short-lived read URL was handed out (via "sas" or "download"),
// expiring at until. Errors: 410; 403 otp_required.
func IssueSAS(s *Session, now, until time.Time, via string) (Change, error) {
	var c Change
	if err := CheckDocument(s, now); err != nil {
		return c, err
	}
	record(&c, EvSASIssued, now, map[string]any{"via": via, "expiresAt": stamp(until)})
	return c, nil
}

// Revoke ends the session for good: state revoked, revokedAt, delivery.revoked. Revoking a
// revoked session changes nothing (an empty change: the call is idempotent). An expired
// session may be revoked too, which makes its end explicit.
func Revoke(s *Session, now time.Time) Change {
	var c Change
	if s.State == StateRevoked {
		return c
	}
	prev := s.StateAt(now)
	s.State, s.RevokedAt = StateRevoked, now
	record(&c, EvRevoked, now, map[string]any{"previousState": string(prev)})
	return c
}

// Expire records that a live session passed its expiry (the expiry timer, issue 27): state
// expired (stored from now on; StateAt derived it already), delivery.expired {previousState}.
// A downloaded session expires too: its link stops working at ExpiresAt like any other (the
// download stays recorded in DownloadedAt). A revoked or already expired session, or one not
// yet at its expiry, changes nothing (an empty change), so the event is recorded once.
func Expire(s *Session, now time.Time) Change {
	var c Change
	if s.State == StateRevoked || s.State == StateExpired || now.Before(s.ExpiresAt) {
		return c
	}
	prev := s.State
	s.State = StateExpired
	record(&c, EvExpired, now, map[string]any{"previousState": string(prev)})
	return c
}

// Uploaded records the library upload: uploadState uploaded, its webUrl and item id.
func Uploaded(s *Session, now time.Time, webURL, itemID, name string) Change {
	var c Change
	s.UploadState, s.UploadError, s.UploadWebURL, s.UploadItemID = UploadDone, "", webURL, itemID
	record(&c, EvUploaded, now, map[string]any{"webUrl": webURL, "itemId": itemID, "name": name})
	return c
}

// UploadFailedNow records a failed upload with the stable code of the cause (graph_forbidden
// when the app registration lacks admin consent) and a detail safe to show.
func UploadFailedNow(s *Session, now time.Time, code, detail string, attempt int) Change {
	var c Change
	s.UploadState, s.UploadError = UploadFailed, code
	record(&c, EvUploadFailed, now, map[string]any{"code": code, "detail": detail, "attempt": attempt})
	return c
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
