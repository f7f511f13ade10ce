package client

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"net/http"
	"net/url"
)

// Recipient is one delivery recipient.
type Recipient struct {
	Email string `json:"email"`
	Name  string `json:"name,omitempty"`
	Role  string `json:"role,omitempty"`
}

// SharePointTarget is the customer's document library (modes sharepoint and both).
type SharePointTarget struct {
	SiteURL     string `json:"siteUrl"`
	LibraryPath string `json:"libraryPath"`
	FolderPath  string `json:"folderPath,omitempty"`
}

// CreateDeliveryRequest is POST /delivery's body.
type CreateDeliveryRequest struct {
	CorrelationID    string            `json:"correlationId"`
	DocumentID       string            `json:"documentId,omitempty"`
	DocumentName     string            `json:"documentName"`
	PDFBlobPath      string            `json:"pdfBlobPath"`
	Mode             string            `json:"mode"`
	Recipients       []Recipient       `json:"recipients"`
	RequesterOrg     string            `json:"requesterOrg,omitempty"`
	Message          string            `json:"message,omitempty"`
	ExpiresInHours   int               `json:"expiresInHours,omitempty"`
	RequireOTP       bool              `json:"requireOtp,omitempty"`
	SharePointTarget *SharePointTarget `json:"sharePointTarget,omitempty"`
}

// DeliverySession is one recipient's session of a create answer.
type DeliverySession struct {
	DeliveryID string `json:"deliveryId"`
	Recipient  string `json:"recipient"`
	PortalURL  string `json:"portalUrl"`
}

// Delivery is the create answer; Replayed when the service answered a repeat of the request.
type Delivery struct {
	CorrelationID string            `json:"correlationId"`
	ExpiresAt     string            `json:"expiresAt"`
	Sessions      []DeliverySession `json:"sessions"`
	Replayed      bool              `json:"-"`
}

// DeliverySummary is one delivery of GET /delivery-sessions.
type DeliverySummary struct {
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
	Recipient     string `json:"recipient,omitempty"`
	RecipientName string `json:"recipientName,omitempty"`
	RecipientRole string `json:"recipientRole,omitempty"`
	RequireOTP    bool   `json:"requireOtp"`
	OTPVerified   bool   `json:"otpVerified"`
	UploadState   string `json:"uploadState,omitempty"`
	UploadError   string `json:"uploadError,omitempty"`
	UploadWebURL  string `json:"uploadWebUrl,omitempty"`
}

// DeliveryMetadata is what the recipient's page shows (GET /delivery/{id}?t=).
type DeliveryMetadata struct {
	DeliveryID    string `json:"deliveryId"`
	DocumentName  string `json:"documentName"`
	RecipientName string `json:"recipientName"`
	RecipientRole string `json:"recipientRole"`
	RequesterOrg  string `json:"requesterOrg"`
	Message       string `json:"message,omitempty"`
	Mode          string `json:"mode"`
	SentAt        string `json:"sentAt,omitempty"`
	ExpiresAt     string `json:"expiresAt"`
	State         string `json:"state"`
	ViewCount     int    `json:"viewCount"`
	RequireOTP    bool   `json:"requireOtp"`
	OTPVerified   bool   `json:"otpVerified"`
}

// SAS is a read-only URL of a delivered document.
type SAS struct {
	SASURL    string `json:"sasUrl"`
	ExpiresAt string `json:"expiresAt"`
}

// OTPSent is the answer of an OTP send.
type OTPSent struct {
	OK        bool   `json:"ok"`
	ExpiresAt string `json:"expiresAt"`
}

// OTPVerified is the answer of an OTP verify.
type OTPVerified struct {
	OK       bool `json:"ok"`
	Verified bool `json:"verified"`
}

// NewIdempotencyKey is a random key for CreateDelivery.
func NewIdempotencyKey() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// CreateDelivery creates one delivery session per recipient (201, or 200 when the service
// replays an earlier identical request). idempotencyKey makes a retry safe ("" : a new one, which
// the client keeps across its own retries).
func (c *Client) CreateDelivery(ctx context.Context, req CreateDeliveryRequest, idempotencyKey string) (*Delivery, error) {
	if idempotencyKey == "" {
		idempotencyKey = NewIdempotencyKey()
	}
	var d Delivery
	r, err := c.do(ctx, call{method: http.MethodPost, path: "/delivery", json: req, idempotent: true,
		header: http.Header{"Idempotency-Key": {idempotencyKey}}, ok: []int{http.StatusCreated, http.StatusOK}}, &d)
	if err == nil {
		d.Replayed = r.Header.Get("Idempotent-Replayed") == "true"
	}
	return &d, err
}

// ListDeliveries lists the tenant's delivery sessions of a correlationId.
func (c *Client) ListDeliveries(ctx context.Context, correlationID string) ([]DeliverySummary, error) {
	var out struct {
		Sessions []DeliverySummary `json:"sessions"`
	}
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/delivery-sessions", query: url.Values{"correlationId": {correlationID}}}, &out)
	return out.Sessions, err
}

// RevokeDelivery revokes a delivery: its links stop working.
func (c *Client) RevokeDelivery(ctx context.Context, deliveryID string) (state string, err error) {
	var out struct {
		State string `json:"state"`
	}
	_, err = c.do(ctx, call{method: http.MethodPost, path: "/delivery/" + esc(deliveryID) + "/revoke"}, &out)
	return out.State, err
}

// The recipient's routes take the delivery token of the link (`t`), not a JWT.

func recipientCall(method, deliveryID, suffix, token string) call {
	return call{method: method, path: "/delivery/" + esc(deliveryID) + suffix, query: url.Values{"t": {token}}, anonymous: true}
}

// DeliveryMetadata reads what the recipient's page shows.
func (c *Client) DeliveryMetadata(ctx context.Context, deliveryID, token string) (*DeliveryMetadata, error) {
	var m DeliveryMetadata
	_, err := c.do(ctx, recipientCall(http.MethodGet, deliveryID, "", token), &m)
	return &m, err
}

// DeliverySAS is a read-only URL of the document.
func (c *Client) DeliverySAS(ctx context.Context, deliveryID, token string) (*SAS, error) {
	var s SAS
	_, err := c.do(ctx, recipientCall(http.MethodGet, deliveryID, "/sas", token), &s)
	return &s, err
}

// DeliveryDownload is the read-only URL, recorded as a download.
func (c *Client) DeliveryDownload(ctx context.Context, deliveryID, token string) (*SAS, error) {
	var s SAS
	_, err := c.do(ctx, recipientCall(http.MethodPost, deliveryID, "/download", token), &s)
	return &s, err
}

// DeliveryAccess records that the recipient opened or downloaded the document (eventType
// opened or downloaded; ip may be empty).
func (c *Client) DeliveryAccess(ctx context.Context, deliveryID, token, eventType, ip string) error {
	cl := recipientCall(http.MethodPost, deliveryID, "/access", token)
	body := map[string]string{"eventType": eventType}
	if ip != "" {
		body["ip"] = ip
	}
	cl.json = body
	_, err := c.do(ctx, cl, nil)
	return err
}

// DeliveryOTPSend e-mails the recipient a code (429 otp_rate_limited within a minute).
func (c *Client) DeliveryOTPSend(ctx context.Context, deliveryID, token string) (*OTPSent, error) {
	var o OTPSent
	_, err := c.do(ctx, recipientCall(http.MethodPost, deliveryID, "/otp/send", token), &o)
	return &o, err
}

// DeliveryOTPVerify checks the recipient's code.
func (c *Client) DeliveryOTPVerify(ctx context.Context, deliveryID, token, otp string) (*OTPVerified, error) {
	cl := recipientCall(http.MethodPost, deliveryID, "/otp/verify", token)
	cl.json = map[string]string{"otp": otp}
	var o OTPVerified
	_, err := c.do(ctx, cl, &o)
	return &o, err
}

// Upload is the answer of POST /documents.
type Upload struct {
	PDFBlobPath string `json:"pdfBlobPath"`
	PDFHash     string `json:"pdfHash"`
	Pages       int    `json:"pages"`
	Size        int64  `json:"size"`
}

// UploadDocument stores a PDF (at most 50 MiB) for a signing session or a delivery (201).
// Errors: *Error (400 pdf_unreadable or pdf_encrypted, 413 body_too_large, ...).
func (c *Client) UploadDocument(ctx context.Context, pdf io.Reader) (*Upload, error) {
	var u Upload
	_, err := c.do(ctx, call{method: http.MethodPost, path: "/documents", raw: pdf, contentType: "application/pdf",
		ok: []int{http.StatusCreated}}, &u)
	return &u, err
}
