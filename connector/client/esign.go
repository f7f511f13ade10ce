package client

import (
	"context"
	"net/http"
	"strconv"
)

// Signer is one signer of a session (schema SignerRequest).
type Signer struct {
	SlotIndex           int    `json:"slotIndex"`
	Role                string `json:"role"`
	Email               string `json:"email"`
	NamePrefill         string `json:"namePrefill,omitempty"`
	CompletionCondition string `json:"completionCondition,omitempty"`
	OTPChannel          string `json:"otpChannel,omitempty"`
	PhoneNumber         string `json:"phoneNumber,omitempty"`
}

// CreateSessionRequest is POST /esign/session's body.
type CreateSessionRequest struct {
	CorrelationID        string   `json:"correlationId"`
	DocumentID           string   `json:"documentId"`
	DocType              string   `json:"docType"`
	DocumentName         string   `json:"documentName,omitempty"` // the certificate's title; else documentId
	PDFBlobPath          string   `json:"pdfBlobPath"`
	PDFHash              string   `json:"pdfHash"`
	SigningMode          string   `json:"signingMode"`
	ExpiresInMinutes     int      `json:"expiresInMinutes,omitempty"`
	Signers              []Signer `json:"signers"`
	TemplatePath         string   `json:"templatePath,omitempty"`
	RequestedBy          string   `json:"requestedBy,omitempty"`
	RequestedByEmail     string   `json:"requestedByEmail,omitempty"`
	OrganizationName     string   `json:"organizationName,omitempty"`
	SendPerSignerNotices bool     `json:"sendPerSignerNotices,omitempty"`

	// Reminders asks for automatic reminders (DESIGN 17); nil: none.
	Reminders *Reminders `json:"reminders,omitempty"`
}

// Reminders is a session's reminders block: the first reminder FirstAfterHours after a signer's
// invitation, then every EveryHours, at most Max (1 to 10).
type Reminders struct {
	FirstAfterHours int `json:"firstAfterHours"`
	EveryHours      int `json:"everyHours"`
	Max             int `json:"max"`
}

// CreatedSlot is a slot of a created session with the signer's single-use portal link.
type CreatedSlot struct {
	SlotIndex int    `json:"slotIndex"`
	SessionID string `json:"sessionId"`
	PortalURL string `json:"portalUrl"`
}

// Session is the create answer (schema CreateSessionResponse).
type Session struct {
	GroupID       string        `json:"groupId"`
	CorrelationID string        `json:"correlationId"`
	State         string        `json:"state"`
	ExpiresAt     string        `json:"expiresAt"`
	Slots         []CreatedSlot `json:"slots"`
}

// SlotStatus is one slot of SessionStatus.
type SlotStatus struct {
	SlotIndex           int               `json:"slotIndex"`
	SessionID           string            `json:"sessionId"`
	Role                string            `json:"role"`
	Email               string            `json:"email,omitempty"`
	NamePrefill         string            `json:"namePrefill,omitempty"`
	CompletionCondition string            `json:"completionCondition"`
	OTPChannel          string            `json:"otpChannel"`
	State               string            `json:"state"`
	Invited             bool              `json:"invited"`
	Timeline            map[string]string `json:"timeline"`
	SignerName          string            `json:"signerName,omitempty"`

	Reminders      int    `json:"reminders"` // automatic reminders sent so far
	LastRemindedAt string `json:"lastRemindedAt,omitempty"`
}

// SessionEvent is one row of a session's audit timeline.
type SessionEvent struct {
	Kind string `json:"kind"`
	At   string `json:"at"`
	Slot *int   `json:"slot,omitempty"`
}

// SessionStatus is GET /esign/session/{correlationId}/status.
type SessionStatus struct {
	GroupID            string         `json:"groupId"`
	CorrelationID      string         `json:"correlationId"`
	DocumentID         string         `json:"documentId"`
	DocType            string         `json:"docType"`
	PDFBlobPath        string         `json:"pdfBlobPath"`
	PDFHash            string         `json:"pdfHash"`
	SigningMode        string         `json:"signingMode"`
	State              string         `json:"state"`
	CancelReason       string         `json:"cancelReason,omitempty"`
	CreatedAt          string         `json:"createdAt"`
	ExpiresAt          string         `json:"expiresAt"`
	CompletedAt        string         `json:"completedAt,omitempty"`
	SignedDocumentPath string         `json:"signedDocumentPath,omitempty"`
	CertificatePath    string         `json:"certificatePath,omitempty"`
	EvidencePath       string         `json:"evidencePath,omitempty"`
	SealError          string         `json:"sealError,omitempty"`
	ManifestSource     string         `json:"manifestSource"`
	Slots              []SlotStatus   `json:"slots"`
	Events             []SessionEvent `json:"events"`
}

// Lifecycle is the answer of cancel and revoke.
type Lifecycle struct {
	GroupID      string `json:"groupId"`
	State        string `json:"state"`
	CancelReason string `json:"cancelReason,omitempty"`
}

// Resent is the answer of resend-invite.
type Resent struct {
	GroupID string        `json:"groupId"`
	Resent  []CreatedSlot `json:"resent"`
}

// SealRetry is the answer of seal/retry.
type SealRetry struct {
	GroupID string `json:"groupId"`
	State   string `json:"state"`
	Attempt int    `json:"attempt"`
}

// Erased is the answer of the signer e-mail erasure.
type Erased struct {
	GroupID           string `json:"groupId"`
	SlotIndex         int    `json:"slotIndex"`
	Erased            bool   `json:"erased"`
	AuditRowsScrubbed int    `json:"auditRowsScrubbed"`
}

// StorageHealth is one storage service's reachability.
type StorageHealth struct {
	Reachable bool   `json:"reachable"`
	Error     string `json:"error,omitempty"`
}

// Health is GET /health (no JWT needed).
type Health struct {
	Status        string                   `json:"status"`
	EngineVersion string                   `json:"engineVersion"`
	Storage       map[string]StorageHealth `json:"storage"`
	CheckedAt     string                   `json:"checkedAt"`
}

// Health reads the service's health: 200, or 503 (degraded) which is returned with an *Error.
func (c *Client) Health(ctx context.Context) (*Health, error) {
	var h Health
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/health", anonymous: true}, &h)
	return &h, err
}

// CreateSession creates a signing session (201). Errors: *Error (400 with fields, 409
// session_exists with Problem.GroupID, ...).
func (c *Client) CreateSession(ctx context.Context, req CreateSessionRequest) (*Session, error) {
	var s Session
	_, err := c.do(ctx, call{method: http.MethodPost, path: "/esign/session", json: req, ok: []int{http.StatusCreated}}, &s)
	return &s, err
}

// SessionStatus reads a session by its correlationId. Errors: *Error (404 session_not_found).
func (c *Client) SessionStatus(ctx context.Context, correlationID string) (*SessionStatus, error) {
	var s SessionStatus
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/esign/session/" + esc(correlationID) + "/status"}, &s)
	return &s, err
}

// SessionStatusByGroup reads a session by its groupId (the same answer as SessionStatus).
// Errors: *Error (404 session_not_found, also for another tenant's session; 400 invalid_request
// for a groupId that is not a UUID).
func (c *Client) SessionStatusByGroup(ctx context.Context, groupID string) (*SessionStatus, error) {
	var s SessionStatus
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/esign/session/by-group/" + esc(groupID) + "/status"}, &s)
	return &s, err
}

// ResendInvite sends fresh links to the slots that may have one (slotIndex < 0: every such slot).
func (c *Client) ResendInvite(ctx context.Context, correlationID string, slotIndex int) (*Resent, error) {
	var body any
	if slotIndex >= 0 {
		body = map[string]int{"slotIndex": slotIndex}
	}
	var r Resent
	_, err := c.do(ctx, call{method: http.MethodPost, path: "/esign/session/" + esc(correlationID) + "/resend-invite", json: body}, &r)
	return &r, err
}

// CancelSession ends a live session without a notice.
func (c *Client) CancelSession(ctx context.Context, groupID string) (*Lifecycle, error) {
	var l Lifecycle
	_, err := c.do(ctx, call{method: http.MethodPost, path: "/esign/session/" + esc(groupID) + "/cancel"}, &l)
	return &l, err
}

// RevokeSession ends a live session and sends the requester's revoke notice.
func (c *Client) RevokeSession(ctx context.Context, groupID string) (*Lifecycle, error) {
	var l Lifecycle
	_, err := c.do(ctx, call{method: http.MethodPost, path: "/esign/session/" + esc(groupID) + "/revoke"}, &l)
	return &l, err
}

// RetrySeal queues a failed or stuck seal again (operator, Service.Admin; 202).
func (c *Client) RetrySeal(ctx context.Context, groupID string) (*SealRetry, error) {
	var s SealRetry
	_, err := c.do(ctx, call{method: http.MethodPost, path: "/esign/session/" + esc(groupID) + "/seal/retry", ok: []int{http.StatusAccepted}}, &s)
	return &s, err
}

// EraseSignerEmail erases a signer's e-mail once the session is over (operator, Service.Admin).
func (c *Client) EraseSignerEmail(ctx context.Context, groupID string, slotIndex int) (*Erased, error) {
	var e Erased
	_, err := c.do(ctx, call{method: http.MethodDelete, path: "/esign/session/" + esc(groupID) + "/slots/" + strconv.Itoa(slotIndex) + "/email"}, &e)
	return &e, err
}
