// Package esign is the signing-session domain: the session and slot types, the create-request
// rules, and the state machines as plain functions over these types (no storage, no HTTP).
// Handlers parse, authorise, call these functions, persist what they return with its audit
// events in one transaction, and answer.
package esign

import (
	"strings"
	"time"
)

// SigningMode is how signers are invited and when the session completes.
type SigningMode string

const (
	ModeSingle     SigningMode = "single"
	ModeSequential SigningMode = "sequential"
	ModeParallel   SigningMode = "parallel"
)

// SessionState is the state of a signing session (the spec's "group").
type SessionState string

const (
	SessionPending    SessionState = "pending"
	SessionInProgress SessionState = "in_progress"
	SessionSealing    SessionState = "sealing"
	SessionComplete   SessionState = "complete"
	SessionCancelled  SessionState = "cancelled"
	SessionExpired    SessionState = "expired"
)

// Live reports whether the session can still change by a signer's action.
func (s SessionState) Live() bool { return s == SessionPending || s == SessionInProgress }

// Terminal reports whether the session can never change state again.
func (s SessionState) Terminal() bool {
	return s == SessionComplete || s == SessionCancelled || s == SessionExpired
}

// SlotState is the state of one signer's slot.
type SlotState string

const (
	SlotPending     SlotState = "pending"
	SlotActivated   SlotState = "activated"
	SlotViewed      SlotState = "viewed"
	SlotOTPVerified SlotState = "otp_verified"
	SlotSigned      SlotState = "signed"
	SlotDeclined    SlotState = "declined"
	SlotExpired     SlotState = "expired"
)

// Open reports whether a signer may still act on the slot.
func (s SlotState) Open() bool {
	return s == SlotPending || s == SlotActivated || s == SlotViewed || s == SlotOTPVerified
}

// Condition says whether a slot must be signed for the session to complete.
type Condition string

const (
	Required Condition = "required"
	Optional Condition = "optional"
)

// OTPChannel is how a slot's one-time passcode is delivered.
type OTPChannel string

const (
	OTPNone         OTPChannel = "none"
	OTPEmail        OTPChannel = "email"
	OTPSMS          OTPChannel = "sms"
	OTPSignerChoice OTPChannel = "signer-choice"
)

// CancelReason says why a session ended as cancelled.
type CancelReason string

const (
	ReasonCancelled CancelReason = "cancelled"
	ReasonRevoked   CancelReason = "revoked"
	ReasonDeclined  CancelReason = "declined"
)

// Session is a signing session. Personal data never sits here in plain text.
type Session struct {
	GroupID              string
	TenantID             string
	CorrelationID        string
	DocumentID           string
	DocType              string
	DocumentTitle        string // the document's title (a render's, or the request's documentName); "" for none
	PDFBlobPath          string
	PDFHash              string // sha256:<64 hex>
	TemplatePath         string
	SigningMode          SigningMode
	State                SessionState
	CancelReason         CancelReason
	CreatedAt            time.Time
	ExpiresAt            time.Time
	CompletedAt          time.Time
	RequestedBy          string
	RequestedByEmailEnc  string // AES-GCM, bound to the session row
	OrganizationName     string
	SendPerSignerNotices bool
	SignedPath           string
	CertificatePath      string
	EvidencePath         string
	SealError            string
	ConsentVersion       string
	Manifest             []ManifestField
	ManifestSource       string
	// ThenDeliverEnc is the delivery to create once the session completes (auto-trigger with
	// both esign and delivery, DESIGN 9): the delivery request as JSON, AES-GCM encrypted (it
	// names the recipients), cleared when the deliveries are made.
	ThenDeliverEnc string
	ETag           string

	// Reminders is the session's reminder block (DESIGN 17); nil: no reminders.
	Reminders *ReminderPolicy
}

// Slot is one signer's place in a session.
type Slot struct {
	Index       int
	SessionID   string // per-slot UUID the portal tracks
	Role        string
	EmailHash   string // HMAC-SHA256 hex, for audit
	EmailEnc    string // AES-GCM, for display; empty once erased
	PhoneEnc    string
	NamePrefill string
	Locale      string // the signer's language from the create body ("" : none chosen)
	Condition   Condition
	OTPChannel  OTPChannel
	State       SlotState
	Invited     bool
	LinkJTI     string // the live single-use portal link's id
	LinkUsed    bool
	Generation  int // device generation (a cross-device redeem or a resend-invite starts the next); access tokens of older generations are view-only
	// LinkGeneration is the generation the latest resend-invite began (0: none): a generation
	// above it was begun by a cross-device redeem (Transferred).
	LinkGeneration int
	Timeline       map[SlotState]time.Time
	OTP            OTPState
	Consents       []ConsentAcceptance
	SignerName     string
	IP             string
	UserAgent      string
	ETag           string

	// InvitedAt is when the slot's first invitation was made (zero for a slot stored before
	// reminders: the session's creation is taken instead); Reminders counts the automatic
	// reminders sent and RemindedAt is the latest one's time (DESIGN 17).
	InvitedAt  time.Time
	Reminders  int
	RemindedAt time.Time
}

// Title is the document's title as the certificate, the portal and the invitation show it: the
// session's documentTitle (a render's title, or the create request's documentName), else its
// documentId (spec 000 evidence certificate: "title").
func (s *Session) Title() string {
	if strings.TrimSpace(s.DocumentTitle) != "" {
		return s.DocumentTitle
	}
	return s.DocumentID
}

// Expired reports whether the session is past its expiry at now.
func (s *Session) Expired(now time.Time) bool { return !now.Before(s.ExpiresAt) }
