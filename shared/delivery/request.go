package delivery

import (
	"fmt"
	"net/mail"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/i18n"
	"github.com/esign-svc/esign/shared/pii"
	"github.com/esign-svc/esign/shared/text"
)

// Limits of the create request. The spec fixes 20 recipients and the 168-hour default; the
// maximum expiry of 720 hours (30 days) is decided here: a document link should not outlive a
// month, and the recipient routes' 410 for lapsed tokens relies on this bound.
const (
	MaxRecipients         = 20
	DefaultExpiresInHours = 168
	MaxExpiresInHours     = 720
	MaxDocumentName       = 200  // characters
	MaxName               = 200  // recipient name, requesterOrg
	MaxRole               = 100  // recipient role
	MaxMessage            = 2000 // characters
	MaxEmail              = 254  // RFC 5321 path limit
	MaxTargetField        = 1024
)

// CreateRequest is the body of POST /api/delivery (spec "Create-delivery request body").
type CreateRequest struct {
	CorrelationID    string      `json:"correlationId"`
	DocumentID       string      `json:"documentId,omitempty"`
	DocumentName     string      `json:"documentName"`
	PDFBlobPath      string      `json:"pdfBlobPath"`
	Mode             Mode        `json:"mode"`
	Recipients       []Recipient `json:"recipients"`
	RequesterOrg     string      `json:"requesterOrg,omitempty"`
	Message          string      `json:"message,omitempty"`
	ExpiresInHours   *int        `json:"expiresInHours,omitempty"`
	RequireOTP       *bool       `json:"requireOtp,omitempty"`
	SharePointTarget *Target     `json:"sharePointTarget,omitempty"`
	// Reminders asks for automatic reminders of a recipient who has not opened the delivery
	// (DESIGN 17; modes secure-email and both); nil: none.
	Reminders *ReminderPolicy `json:"reminders,omitempty"`
}

// ExpiryProblem is "" when hours is a delivery's expiry (1 to MaxExpiresInHours), else why not:
// the one rule for every request that makes deliveries (a batch's deliveryConfig too).
func ExpiryProblem(hours int) string {
	if hours < 1 || hours > MaxExpiresInHours {
		return fmt.Sprintf("a whole number of hours from 1 to %d", MaxExpiresInHours)
	}
	return ""
}

// Recipient is one entry of CreateRequest.Recipients.
type Recipient struct {
	Email string `json:"email"`
	Name  string `json:"name,omitempty"`
	Role  string `json:"role,omitempty"`
	// Locale is the recipient's language (BCP 47, a supported one: shared/i18n) for the
	// invitation and the portal's page; empty: the browser's, else English.
	Locale string `json:"locale,omitempty"`
}

var reCorrelation = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:~-]{0,127}$`)

// Validate checks every field and limit and returns one 400 (code invalid_request) naming each
// field at fault, or nil. pdfBlobPath's shape and container, and the sharePointTarget's parts,
// are checked by the caller with blobstore.ParseFieldPath and graph.Client.Validate; here only
// their presence.
func (r *CreateRequest) Validate() error {
	var bad []apperr.FieldError
	add := func(field, msg string) { bad = append(bad, apperr.Field(field, msg)) }
	// check adds field's problem: not acceptable text of the form (shared/text), or longer
	// than max characters.
	check := func(field, v string, max int, form text.Form) {
		if msg := text.Problem(v, form); msg != "" {
			add(field, msg)
		} else if utf8.RuneCountInString(v) > max {
			add(field, fmt.Sprintf("at most %d characters", max))
		}
	}
	if r.CorrelationID == "" {
		add("correlationId", "is required")
	} else if !reCorrelation.MatchString(r.CorrelationID) {
		add("correlationId", "1-128 characters: letters, digits and . _ : ~ -, starting with a letter or digit")
	}
	check("documentId", r.DocumentID, 200, text.Line)
	switch {
	case strings.TrimSpace(r.DocumentName) == "":
		add("documentName", "is required")
	case strings.ContainsAny(r.DocumentName, `/\`):
		add("documentName", "a file name, without / or \\")
	default:
		check("documentName", r.DocumentName, MaxDocumentName, text.Line)
	}
	if strings.TrimSpace(r.PDFBlobPath) == "" {
		add("pdfBlobPath", "is required")
	}
	switch {
	case r.Mode == "":
		add("mode", "is required: secure-email, sharepoint or both")
	case !r.Mode.Valid():
		add("mode", "must be secure-email, sharepoint or both")
	}
	switch n := len(r.Recipients); {
	case n == 0:
		add("recipients", "name at least one recipient")
	case n > MaxRecipients:
		add("recipients", fmt.Sprintf("at most %d recipients per request", MaxRecipients))
	default:
		seen := map[string]int{}
		for i, rc := range r.Recipients {
			f := fmt.Sprintf("recipients[%d]", i)
			if msg := checkEmail(rc.Email); msg != "" {
				add(f+".email", msg)
			} else if msg := text.Problem(rc.Email, text.Line); msg != "" {
				add(f+".email", msg)
			} else if j, dup := seen[pii.NormaliseEmail(rc.Email)]; dup {
				add(f+".email", fmt.Sprintf("the same address as recipients[%d]: one session per recipient", j))
			} else {
				seen[pii.NormaliseEmail(rc.Email)] = i
			}
			check(f+".name", rc.Name, MaxName, text.Line)
			check(f+".role", rc.Role, MaxRole, text.Line)
			bad = append(bad, i18n.CheckLocale(f+".locale", rc.Locale)...)
		}
	}
	check("requesterOrg", r.RequesterOrg, MaxName, text.Line)
	check("message", r.Message, MaxMessage, text.Lines)
	if r.ExpiresInHours != nil {
		if msg := ExpiryProblem(*r.ExpiresInHours); msg != "" {
			add("expiresInHours", msg)
		}
	}
	t := r.SharePointTarget
	switch {
	case r.Mode.Uploads() && t == nil:
		add("sharePointTarget", "is required for modes sharepoint and both")
	case r.Mode.Uploads():
		if strings.TrimSpace(t.SiteURL) == "" {
			add("sharePointTarget.siteUrl", "is required")
		}
		if strings.TrimSpace(t.LibraryPath) == "" {
			add("sharePointTarget.libraryPath", "is required")
		}
		for _, f := range []struct{ name, v string }{{"siteUrl", t.SiteURL}, {"libraryPath", t.LibraryPath}, {"folderPath", t.FolderPath}} {
			if len(f.v) > MaxTargetField {
				add("sharePointTarget."+f.name, fmt.Sprintf("at most %d bytes", MaxTargetField))
			} else if msg := text.Problem(f.v, text.Line); msg != "" {
				add("sharePointTarget."+f.name, msg)
			}
		}
	case r.Mode == ModeSecureEmail && t != nil:
		add("sharePointTarget", "only for modes sharepoint and both")
	}
	bad = append(bad, r.Reminders.Check("reminders")...)
	if r.Reminders != nil && r.Mode == ModeSharePoint {
		add("reminders", "only for modes secure-email and both: sharepoint sends no e-mail")
	}
	if len(bad) > 0 {
		return apperr.Invalid(apperr.CodeInvalidRequest, bad...)
	}
	return nil
}

// Normalize applies the defaults (expiresInHours 168, requireOtp false) and trims the
// addresses. Call it after Validate succeeds.
func (r *CreateRequest) Normalize() {
	if r.ExpiresInHours == nil {
		h := DefaultExpiresInHours
		r.ExpiresInHours = &h
	}
	if r.RequireOTP == nil {
		f := false
		r.RequireOTP = &f
	}
	r.DocumentName = strings.TrimSpace(r.DocumentName)
	for i := range r.Recipients {
		r.Recipients[i].Email = strings.TrimSpace(r.Recipients[i].Email)
	}
}

func checkEmail(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return "is required"
	}
	if len(s) > MaxEmail {
		return fmt.Sprintf("at most %d characters", MaxEmail)
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s || !strings.Contains(s[strings.LastIndexByte(s, '@')+1:], ".") {
		return "must be a plain e-mail address (name@example.com)"
	}
	return ""
}

// Source names the request's document: the field and its "<container>/<blob name>" path.
func (r *CreateRequest) Source() (field, path string) { return "pdfBlobPath", r.PDFBlobPath }
