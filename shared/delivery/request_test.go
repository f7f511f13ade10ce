package delivery

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/esign-svc/esign/shared/apperr"
)

func valid() CreateRequest {
	return CreateRequest{CorrelationID: "c-1", DocumentName: "a.pdf", PDFBlobPath: "documents/a.pdf", Mode: ModeSecureEmail,
		Recipients: []Recipient{{Email: "a@example.com"}}}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	n := func(i int) *int { return &i }
	many := make([]Recipient, 21)
	for i := range many {
		many[i] = Recipient{Email: fmt.Sprintf("r%d@example.com", i)}
	}
	target := &Target{SiteURL: "https://c.sharepoint.com/sites/x", LibraryPath: "Documents"}
	tests := []struct {
		name  string
		edit  func(r *CreateRequest)
		field string
	}{
		{"ok", func(r *CreateRequest) {}, ""},
		{"ok sharepoint", func(r *CreateRequest) { r.Mode, r.SharePointTarget = ModeSharePoint, target }, ""},
		{"ok 20 recipients", func(r *CreateRequest) { r.Recipients = many[:20] }, ""},
		{"ok 720 hours", func(r *CreateRequest) { r.ExpiresInHours = n(720) }, ""},
		{"ok reminders", func(r *CreateRequest) { r.Reminders = &ReminderPolicy{FirstAfterHours: 24, EveryHours: 48, Max: 3} }, ""},
		{"reminders max", func(r *CreateRequest) { r.Reminders = &ReminderPolicy{FirstAfterHours: 1, EveryHours: 1, Max: 11} }, "reminders.max"},
		{"reminders first", func(r *CreateRequest) { r.Reminders = &ReminderPolicy{EveryHours: 1, Max: 1} }, "reminders.firstAfterHours"},
		{"reminders sharepoint", func(r *CreateRequest) {
			r.Mode, r.SharePointTarget, r.Reminders = ModeSharePoint, target, &ReminderPolicy{FirstAfterHours: 1, EveryHours: 1, Max: 1}
		}, "reminders"},
		{"correlationId", func(r *CreateRequest) { r.CorrelationID = "" }, "correlationId"},
		{"documentName", func(r *CreateRequest) { r.DocumentName = " " }, "documentName"},
		{"documentName slash", func(r *CreateRequest) { r.DocumentName = `a\b` }, "documentName"},
		{"pdfBlobPath", func(r *CreateRequest) { r.PDFBlobPath = "" }, "pdfBlobPath"},
		{"mode", func(r *CreateRequest) { r.Mode = "x" }, "mode"},
		{"no recipients", func(r *CreateRequest) { r.Recipients = nil }, "recipients"},
		{"21 recipients", func(r *CreateRequest) { r.Recipients = many }, "recipients"},
		{"email", func(r *CreateRequest) { r.Recipients[0].Email = "Bob <b@example.com>" }, "recipients[0].email"},
		{"duplicate", func(r *CreateRequest) { r.Recipients = append(r.Recipients, Recipient{Email: "A@example.com"}) }, "recipients[1].email"},
		{"name", func(r *CreateRequest) { r.Recipients[0].Name = "a\x00" }, "recipients[0].name"},
		{"role", func(r *CreateRequest) { r.Recipients[0].Role = strings.Repeat("r", 101) }, "recipients[0].role"},
		{"malformed locale", func(r *CreateRequest) { r.Recipients[0].Locale = "fr_FR" }, "recipients[0].locale"},
		{"unsupported locale", func(r *CreateRequest) { r.Recipients[0].Locale = "zh" }, "recipients[0].locale"},
		{"message", func(r *CreateRequest) { r.Message = strings.Repeat("m", 2001) }, "message"},
		{"ok message lines", func(r *CreateRequest) { r.Message = "Hello,\r\nplease read.\n\nThanks" }, ""},
		{"ok RTL name", func(r *CreateRequest) { r.Recipients[0].Name = "\u200fمحمد" }, ""},
		{"message lone CR", func(r *CreateRequest) { r.Message = "a\rb" }, "message"},
		{"message tab", func(r *CreateRequest) { r.Message = "a\tb" }, "message"},
		{"message bidi override", func(r *CreateRequest) { r.Message = "pay \u202e01$" }, "message"},
		{"message invalid UTF-8", func(r *CreateRequest) { r.Message = "a\xff" }, "message"},
		{"name C1", func(r *CreateRequest) { r.Recipients[0].Name = "a\u009b" }, "recipients[0].name"},
		{"name line separator", func(r *CreateRequest) { r.Recipients[0].Name = "a\u2028b" }, "recipients[0].name"},
		{"role isolate", func(r *CreateRequest) { r.Recipients[0].Role = "\u2067r" }, "recipients[0].role"},
		{"email bidi", func(r *CreateRequest) { r.Recipients[0].Email = "a\u202eb@example.com" }, "recipients[0].email"},
		{"documentId newline", func(r *CreateRequest) { r.DocumentID = "D\n1" }, "documentId"},
		{"documentName C1", func(r *CreateRequest) { r.DocumentName = "a\u0085.pdf" }, "documentName"},
		{"requesterOrg bidi", func(r *CreateRequest) { r.RequesterOrg = "\u202bAcme" }, "requesterOrg"},
		{"target folder C1", func(r *CreateRequest) {
			r.Mode, r.SharePointTarget = ModeSharePoint, &Target{SiteURL: target.SiteURL, LibraryPath: "D", FolderPath: "a\u0085"}
		}, "sharePointTarget.folderPath"},
		{"hours 0", func(r *CreateRequest) { r.ExpiresInHours = n(0) }, "expiresInHours"},
		{"hours 721", func(r *CreateRequest) { r.ExpiresInHours = n(721) }, "expiresInHours"},
		{"target missing", func(r *CreateRequest) { r.Mode = ModeBoth }, "sharePointTarget"},
		{"target siteUrl", func(r *CreateRequest) { r.Mode, r.SharePointTarget = ModeBoth, &Target{LibraryPath: "D"} }, "sharePointTarget.siteUrl"},
		{"target on secure-email", func(r *CreateRequest) { r.SharePointTarget = target }, "sharePointTarget"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := valid()
			tc.edit(&r)
			err := r.Validate()
			if tc.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			e, ok := apperr.As(err)
			if !ok || e.Kind != apperr.KindInvalid {
				t.Fatalf("%v, want 400", err)
			}
			var fields []string
			for _, f := range e.Fields {
				fields = append(fields, f.Field)
			}
			if !slices.Contains(fields, tc.field) {
				t.Fatalf("fields %v lack %s", fields, tc.field)
			}
		})
	}
}

func TestNormalizeDefaults(t *testing.T) {
	t.Parallel()
	r := valid()
	r.Normalize()
	if *r.ExpiresInHours != DefaultExpiresInHours || *r.RequireOTP {
		t.Fatalf("defaults %d %v", *r.ExpiresInHours, *r.RequireOTP)
	}
}
