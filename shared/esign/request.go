package esign

import (
	"fmt"
	"net/mail"
	"regexp"
	"strings"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/i18n"
	"github.com/esign-svc/esign/shared/text"
)

// Limits of the create request (spec "Limits"; DESIGN section 5).
const (
	MaxSigners              = 10
	DefaultExpiresInMinutes = 30
	MaxExpiresInMinutes     = 10080
	MaxDocumentName         = 512 // bytes, as a render's options.title
)

// CreateRequest is the body of POST /api/esign/session.
type CreateRequest struct {
	CorrelationID        string          `json:"correlationId"`
	DocumentID           string          `json:"documentId"`
	DocType              string          `json:"docType"`
	DocumentName         string          `json:"documentName,omitempty"` // the title the certificate shows
	PDFBlobPath          string          `json:"pdfBlobPath"`
	PDFHash              string          `json:"pdfHash"`
	SigningMode          SigningMode     `json:"signingMode"`
	ExpiresInMinutes     *int            `json:"expiresInMinutes,omitempty"`
	Signers              []SignerRequest `json:"signers"`
	TemplatePath         string          `json:"templatePath,omitempty"`
	RequestedBy          string          `json:"requestedBy,omitempty"`
	RequestedByEmail     string          `json:"requestedByEmail,omitempty"`
	OrganizationName     string          `json:"organizationName,omitempty"`
	SendPerSignerNotices *bool           `json:"sendPerSignerNotices,omitempty"`
	// Reminders asks for automatic reminders (DESIGN 17); nil: none.
	Reminders *ReminderPolicy `json:"reminders,omitempty"`
	// ThenDeliver, set by the render use case and never by a caller, is the delivery request
	// (JSON) to create on the signed PDF once the session completes.
	ThenDeliver []byte `json:"-"`
	// Sealed, set by the workflow auto-trigger and never by a caller, admits a pdfBlobPath in
	// the tenant's folder of the signed container (signed/<tenantId>/...): the sealed workflow
	// record is signed where the seal wrote it.
	Sealed bool `json:"-"`
}

// SignerRequest is one entry of CreateRequest.Signers.
type SignerRequest struct {
	SlotIndex           *int       `json:"slotIndex"`
	Role                string     `json:"role"`
	Email               string     `json:"email"`
	NamePrefill         string     `json:"namePrefill,omitempty"`
	CompletionCondition Condition  `json:"completionCondition,omitempty"`
	OTPChannel          OTPChannel `json:"otpChannel,omitempty"`
	PhoneNumber         string     `json:"phoneNumber,omitempty"`
	// Locale is the signer's language (BCP 47, a supported one: shared/i18n) for the portal,
	// the e-mails and the consent statements; empty: the browser's, else English.
	Locale string `json:"locale,omitempty"`
}

var (
	reCorrelation = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:~-]{0,127}$`)
	reRole        = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	rePDFHash     = regexp.MustCompile(`^sha256:[0-9a-fA-F]{64}$`)
	reE164        = regexp.MustCompile(`^\+[1-9][0-9]{6,14}$`)
)

// ValidCorrelationID reports whether s is a correlationId: 1 to 128 letters, digits or . _ : ~ -
// starting with a letter or digit (it names blobs and table partitions).
func ValidCorrelationID(s string) bool { return reCorrelation.MatchString(s) }

// Normalize applies the defaults: expiry 30 minutes, condition required, OTP none, per-signer
// notices on for sequential and parallel, lower-case hash. Call it after Validate succeeds.
func (r *CreateRequest) Normalize() {
	if r.ExpiresInMinutes == nil {
		d := DefaultExpiresInMinutes
		r.ExpiresInMinutes = &d
	}
	r.PDFHash = strings.ToLower(r.PDFHash)
	for i := range r.Signers {
		s := &r.Signers[i]
		s.Email = strings.TrimSpace(s.Email)
		if s.CompletionCondition == "" {
			s.CompletionCondition = Required
		}
		if s.OTPChannel == "" {
			s.OTPChannel = OTPNone
		}
		s.Locale = i18n.Normalize(s.Locale)
	}
	if r.SendPerSignerNotices == nil {
		on := r.SigningMode != ModeSingle
		r.SendPerSignerNotices = &on
	}
}

// Validate checks every field and limit and returns a 400 naming each field at fault
// (code invalid_request), or nil.
func (r *CreateRequest) Validate() error {
	var errs []apperr.FieldError
	bad := func(field, format string, args ...any) {
		errs = append(errs, apperr.Field(field, fmt.Sprintf(format, args...)))
	}
	line := func(field, v string, required bool, max int) {
		switch {
		case required && strings.TrimSpace(v) == "":
			bad(field, "is required")
		case len(v) > max:
			bad(field, "must be at most %d characters", max)
		default:
			checkLine(&errs, field, v)
		}
	}
	switch {
	case r.CorrelationID == "":
		bad("correlationId", "is required")
	case !reCorrelation.MatchString(r.CorrelationID):
		bad("correlationId", "must be 1 to 128 letters, digits or . _ : ~ - and start with a letter or digit")
	}
	errs = append(errs, CheckDocument("", r.DocumentID, r.DocType, true)...)
	line("documentName", r.DocumentName, false, MaxDocumentName)
	line("pdfBlobPath", r.PDFBlobPath, true, 1024)
	switch {
	case r.PDFHash == "":
		bad("pdfHash", "is required")
	case !rePDFHash.MatchString(r.PDFHash):
		bad("pdfHash", "must be sha256:<64 hex digits>")
	}
	switch r.SigningMode {
	case ModeSingle, ModeSequential, ModeParallel:
	case "":
		bad("signingMode", "is required")
	default:
		bad("signingMode", "must be single, sequential or parallel")
	}
	if r.ExpiresInMinutes != nil && (*r.ExpiresInMinutes < 1 || *r.ExpiresInMinutes > MaxExpiresInMinutes) {
		bad("expiresInMinutes", "must be from 1 to %d", MaxExpiresInMinutes)
	}
	line("templatePath", r.TemplatePath, false, 1024)
	line("requestedBy", r.RequestedBy, false, 200)
	line("organizationName", r.OrganizationName, false, 200)
	if r.RequestedByEmail != "" && !validEmail(r.RequestedByEmail) {
		bad("requestedByEmail", "must be an e-mail address")
	} else {
		checkLine(&errs, "requestedByEmail", r.RequestedByEmail)
	}
	errs = append(errs, r.Reminders.Check("reminders")...)
	errs = append(errs, r.validateSigners()...)
	if len(errs) > 0 {
		return apperr.Invalid(apperr.CodeInvalidRequest, errs...)
	}
	return nil
}

func (r *CreateRequest) validateSigners() []apperr.FieldError {
	var errs []apperr.FieldError
	bad := func(field, format string, args ...any) {
		errs = append(errs, apperr.Field(field, fmt.Sprintf(format, args...)))
	}
	n := len(r.Signers)
	switch {
	case r.Signers == nil || n == 0:
		bad("signers", "at least one signer is required")
		return errs
	case n > MaxSigners:
		bad("signers", "at most %d signers are allowed", MaxSigners)
		return errs
	case r.SigningMode == ModeSingle && n != 1:
		bad("signers", "single mode takes exactly one signer")
	}
	seen := map[int]bool{}
	required := 0
	for i, s := range r.Signers {
		f := func(name string) string { return fmt.Sprintf("signers[%d].%s", i, name) }
		switch {
		case s.SlotIndex == nil:
			bad(f("slotIndex"), "is required")
		case *s.SlotIndex < 0 || *s.SlotIndex >= n:
			bad(f("slotIndex"), "must be from 0 to %d (zero-based, one per signer)", n-1)
		case seen[*s.SlotIndex]:
			bad(f("slotIndex"), "%d is used by another signer", *s.SlotIndex)
		default:
			seen[*s.SlotIndex] = true
		}
		switch {
		case s.Role == "":
			bad(f("role"), "is required")
		case !reRole.MatchString(s.Role):
			bad(f("role"), "must be 1 to 64 letters, digits, _ or -")
		}
		switch {
		case strings.TrimSpace(s.Email) == "":
			bad(f("email"), "is required")
		case !validEmail(s.Email):
			bad(f("email"), "must be an e-mail address")
		default:
			checkLine(&errs, f("email"), s.Email)
		}
		if len(s.NamePrefill) > 200 {
			bad(f("namePrefill"), "must be at most 200 characters")
		} else {
			checkLine(&errs, f("namePrefill"), s.NamePrefill)
		}
		switch s.CompletionCondition {
		case "", Required:
			required++
		case Optional:
		default:
			bad(f("completionCondition"), "must be required or optional")
		}
		switch s.OTPChannel {
		case "", OTPNone, OTPEmail:
		case OTPSMS, OTPSignerChoice:
			if s.PhoneNumber == "" {
				bad(f("phoneNumber"), "is required for otpChannel %s", s.OTPChannel)
			}
		default:
			bad(f("otpChannel"), "must be none, email, sms or signer-choice")
		}
		if s.PhoneNumber != "" && !reE164.MatchString(s.PhoneNumber) {
			bad(f("phoneNumber"), "must be an E.164 number such as +4915112345678")
		}
		errs = append(errs, i18n.CheckLocale(f("locale"), s.Locale)...)
	}
	if required == 0 && len(errs) == 0 {
		bad("signers", "at least one signer must have completionCondition required")
	}
	return errs
}

func validEmail(s string) bool {
	s = strings.TrimSpace(s)
	if len(s) > 254 {
		return false
	}
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s && a.Name == "" && strings.Contains(s[strings.LastIndexByte(s, '@')+1:], ".")
}

// checkLine adds field's problem when v is not one line of acceptable text (shared/text).
// Limits of a document's documentId and docType.
const (
	MaxDocumentID = 256
	MaxDocType    = 128
)

// CheckDocument checks a documentId and docType as the create request does: required when
// required (and never blank when given), at most MaxDocumentID and MaxDocType characters, one line of text each. The problems
// name prefix+"documentId" and prefix+"docType" (prefix "options." for a workflow's create).
func CheckDocument(prefix, documentID, docType string, required bool) []apperr.FieldError {
	var errs []apperr.FieldError
	for _, f := range []struct {
		name, v string
		max     int
	}{{"documentId", documentID, MaxDocumentID}, {"docType", docType, MaxDocType}} {
		switch {
		case required && strings.TrimSpace(f.v) == "":
			errs = append(errs, apperr.Field(prefix+f.name, "is required"))
		case f.v != "" && strings.TrimSpace(f.v) == "":
			errs = append(errs, apperr.Field(prefix+f.name, "must not be blank"))
		case len(f.v) > f.max:
			errs = append(errs, apperr.Field(prefix+f.name, fmt.Sprintf("must be at most %d characters", f.max)))
		default:
			checkLine(&errs, prefix+f.name, f.v)
		}
	}
	return errs
}

func checkLine(errs *[]apperr.FieldError, field, v string) {
	if msg := text.Problem(v, text.Line); msg != "" {
		*errs = append(*errs, apperr.Field(field, msg))
	}
}

// Source names the request's document: the field and its "<container>/<blob name>" path.
func (r *CreateRequest) Source() (field, path string) { return "pdfBlobPath", r.PDFBlobPath }
