// Package certificate renders the evidence certificate of a signing session (spec "Evidence
// certificate", "Consent", "Cross-device") as pages appended to the sealed PDF and as a
// standalone PDF. Text is set in the embedded DejaVu Sans (see package fonts for the scripts
// it covers), wrapped to the page width and paginated.
package certificate

import (
	"time"
)

// TimeFormat is RFC 3339 with exactly nine fractional digits, in UTC.
const TimeFormat = "2006-01-02T15:04:05.000000000Z07:00"

// FormatTime renders t in TimeFormat (UTC); the zero time renders as "-".
func FormatTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(TimeFormat)
}

// Certificate is everything the evidence certificate shows.
type Certificate struct {
	DocumentTitle   string
	CorrelationID   string
	DocumentID      string
	RenderedPDFHash string // "sha256:<hex>" of the rendered PDF, as given at session creation
	GroupID         string
	TenantID        string
	SigningMode     string // single, sequential, parallel
	SessionExpires  time.Time
	CompletedAt     time.Time
	EngineVersion   string
	Signers         []Signer
	// EvidenceHeadHash is the head hash of the evidence bundle (hex), also stored in the
	// document information dictionary under InfoKeyEvidenceHead.
	EvidenceHeadHash string
	// SealLevel is the PAdES level of the seal (B-B, B-T, B-LT, B-LTA), named in "How to
	// verify"; pdf.Seal sets it. Empty: the paragraph names no level.
	SealLevel string
}

// Signer is one slot's evidence.
type Signer struct {
	SlotIndex           int
	Role                string
	Name                string
	EmailHash           string // HMAC-SHA256 of the e-mail, hex, as stored in audit
	CompletionCondition string // required or optional
	State               string // final slot state
	IPAddress           string // of the signer's last recorded action (signing, declining, ...)
	UserAgent           string
	DeclineReason       string // the reason the signer gave when declining, as recorded
	// SignatureImage is the signer's drawing (PNG), shown in the signer's table; empty for a
	// signer who did not sign.
	SignatureImage []byte
	// Timeline is printed in the order given (the caller sorts it by time).
	Timeline  []Transition
	OTP       *OTPRecord
	Consents  []Consent
	Transfers []Transfer
}

// Transition is one slot state change. Pending is the time the signer was invited.
type Transition struct {
	State string // pending, activated, viewed, otp_verified, signed, declined, expired
	At    time.Time
}

// OTPRecord is the one-time passcode verification of a slot.
type OTPRecord struct {
	Channel           string // email or sms
	MaskedDestination string // e.g. "j***@example.com", "+44******789"
	SentAt            time.Time
	VerifiedAt        time.Time
	Attempts          int
}

// Consent is one of the three consent statements, frozen at signing time.
type Consent struct {
	Key        string // e.g. document_reviewed, electronic_signature, legally_binding
	Version    string
	Language   string // the language the statement was shown and accepted in ("": English)
	Text       string // verbatim, in Language
	AcceptedAt time.Time
}

// Transfer is one cross-device transfer event.
type Transfer struct {
	Event     string // created, redeemed, expired
	At        time.Time
	IPAddress string
	UserAgent string
}
