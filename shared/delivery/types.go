// Package delivery is the secure document delivery domain (spec "Delivery"; DESIGN 3-5): one
// delivery session per recipient of a rendered PDF, reached through a time-limited link
// (portalUrl with the delivery access token `t`), optionally behind an e-mailed OTP, and/or
// uploaded to the customer's SharePoint document library. The state machine is plain functions
// over Session that return a Change (the audit events to write with the new session row); the
// store (deliverystore) writes both in one transaction.
//
// States (the spec names opened, downloaded, revoked and says an expired session answers 410;
// the rest is decided here):
//
//	sent       the session exists and its link was issued (initial state)
//	opened     the recipient opened the link (first opened access)
//	downloaded the recipient downloaded the document (a later opened access keeps downloaded)
//	revoked    the initiator revoked it (terminal; every recipient route answers 410)
//	expired    now >= expiresAt (every recipient route answers 410): derived by StateAt, and
//	           stored once the expiry timer records delivery.expired (Expire; issue 27)
package delivery

import (
	"time"

	"github.com/esign-svc/esign/shared/kernel"
	"github.com/esign-svc/esign/shared/otp"
)

// Mode is where the document goes (DESIGN 6a).
type Mode string

// Modes.
const (
	ModeSecureEmail Mode = "secure-email" // link e-mailed to the recipient
	ModeSharePoint  Mode = "sharepoint"   // uploaded to the customer's document library
	ModeBoth        Mode = "both"
)

// Valid reports whether m is one of the three modes.
func (m Mode) Valid() bool { return m == ModeSecureEmail || m == ModeSharePoint || m == ModeBoth }

// Emails reports whether the mode sends the recipient an invitation e-mail.
func (m Mode) Emails() bool { return m == ModeSecureEmail || m == ModeBoth }

// Uploads reports whether the mode uploads the document to a library.
func (m Mode) Uploads() bool { return m == ModeSharePoint || m == ModeBoth }

// State is a delivery session's state (see the package doc).
type State string

// States.
const (
	StateSent       State = "sent"
	StateOpened     State = "opened"
	StateDownloaded State = "downloaded"
	StateRevoked    State = "revoked"
	StateExpired    State = "expired" // derived by StateAt; stored by Expire
)

// UploadState is the progress of the document-library upload (modes sharepoint and both).
type UploadState string

// Upload states; "" for secure-email.
const (
	UploadPending  UploadState = "pending"
	UploadDone     UploadState = "uploaded"
	UploadFailed   UploadState = "failed"
	UploadNotAsked UploadState = ""
)

// Target is the request's sharePointTarget.
type Target struct {
	SiteURL     string `json:"siteUrl"`
	LibraryPath string `json:"libraryPath"`
	FolderPath  string `json:"folderPath"`
}

// Session is one recipient's delivery session.
type Session struct {
	DeliveryID    string
	TenantID      string // the creator's tenant (tid)
	CreatedBy     string // the creator's object id
	CorrelationID string
	DocumentID    string
	DocumentName  string
	PDFBlobPath   string // documents/<name>
	Mode          Mode
	State         State

	// The recipient's address: keyed hash for audit and lookups, AES-GCM for display and
	// sending (AAD: pii.AAD(deliveryId, "recipient")). Never in logs or audit data.
	RecipientHash string
	RecipientEnc  string
	RecipientName string
	RecipientRole string
	// RecipientLocale is the recipient's language from the create body ("": none chosen).
	RecipientLocale string
	RequesterOrg    string
	Message         string

	RequireOTP bool
	OTP        otp.State

	SharePoint   *Target
	UploadState  UploadState
	UploadError  string // stable code of the last failure (graph_forbidden, ...)
	UploadWebURL string
	UploadItemID string

	// Reminders is the delivery's reminders block (DESIGN 17; nil: none); RemindCount counts
	// the reminders sent, RemindedAt is the latest one's time.
	Reminders   *ReminderPolicy
	RemindCount int
	RemindedAt  time.Time

	ViewCount    int
	CreatedAt    time.Time
	SentAt       time.Time // when the invitation e-mail was sent (zero for sharepoint only)
	OpenedAt     time.Time // first opened
	DownloadedAt time.Time // first downloaded
	ExpiresAt    time.Time
	RevokedAt    time.Time

	ETag string
}

// StateAt is the state as callers see it at now: expired once now >= ExpiresAt (unless revoked).
func (s *Session) StateAt(now time.Time) State {
	if s.State != StateRevoked && !now.Before(s.ExpiresAt) {
		return StateExpired
	}
	return s.State
}

// OTPVerified reports whether the recipient passed the OTP challenge.
func (s *Session) OTPVerified() bool { return s.OTP.Verified(0) }

// The event, actor and change of a transition are the kernel's, shared by every aggregate. A
// delivery has no children: its events carry kernel.NoSlot.
type (
	Actor  = kernel.Actor
	Event  = kernel.Event
	Change = kernel.Change
	// ReminderPolicy is the reminders block, the same as a signing session's.
	ReminderPolicy = kernel.ReminderPolicy
)

func record(c *Change, kind string, at time.Time, data map[string]any) {
	c.Record(kind, kernel.NoSlot, at, data)
}
