package esign

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/esign-svc/esign/shared/apperr"
)

const validCreate = `{"correlationId":"INV-1","documentId":"D1","docType":"contract","pdfBlobPath":"documents/a.pdf",
"pdfHash":"sha256:` + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef" + `","signingMode":"parallel",
"signers":[{"slotIndex":0,"role":"buyer","email":"a@example.com"},{"slotIndex":1,"role":"seller","email":"b@example.com"}]}`

func TestCreateRequestFieldErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		patch func(m map[string]any)
		field string
	}{
		{"no correlationId", func(m map[string]any) { delete(m, "correlationId") }, "correlationId"},
		{"bad correlationId", func(m map[string]any) { m["correlationId"] = "a/b" }, "correlationId"},
		{"no documentId", func(m map[string]any) { m["documentId"] = "" }, "documentId"},
		{"no docType", func(m map[string]any) { delete(m, "docType") }, "docType"},
		{"no pdfBlobPath", func(m map[string]any) { delete(m, "pdfBlobPath") }, "pdfBlobPath"},
		{"hash without prefix", func(m map[string]any) { m["pdfHash"] = strings.Repeat("a", 64) }, "pdfHash"},
		{"short hash", func(m map[string]any) { m["pdfHash"] = "sha256:abc" }, "pdfHash"},
		{"bad mode", func(m map[string]any) { m["signingMode"] = "random" }, "signingMode"},
		{"expiry zero", func(m map[string]any) { m["expiresInMinutes"] = 0 }, "expiresInMinutes"},
		{"expiry too long", func(m map[string]any) { m["expiresInMinutes"] = 10081 }, "expiresInMinutes"},
		{"no signers", func(m map[string]any) { m["signers"] = []any{} }, "signers"},
		{"eleven signers", func(m map[string]any) {
			var s []any
			for i := 0; i < 11; i++ {
				s = append(s, map[string]any{"slotIndex": i, "role": "r", "email": "x@example.com"})
			}
			m["signers"] = s
		}, "signers"},
		{"single with two", func(m map[string]any) { m["signingMode"] = "single" }, "signers"},
		{"duplicate slotIndex", func(m map[string]any) { signer(m, 1)["slotIndex"] = 0 }, "signers[1].slotIndex"},
		{"slotIndex out of range", func(m map[string]any) { signer(m, 1)["slotIndex"] = 5 }, "signers[1].slotIndex"},
		{"negative slotIndex", func(m map[string]any) { signer(m, 0)["slotIndex"] = -1 }, "signers[0].slotIndex"},
		{"missing slotIndex", func(m map[string]any) { delete(signer(m, 0), "slotIndex") }, "signers[0].slotIndex"},
		{"missing role", func(m map[string]any) { delete(signer(m, 0), "role") }, "signers[0].role"},
		{"bad role", func(m map[string]any) { signer(m, 0)["role"] = "a b" }, "signers[0].role"},
		{"missing email", func(m map[string]any) { delete(signer(m, 1), "email") }, "signers[1].email"},
		{"bad email", func(m map[string]any) { signer(m, 1)["email"] = "Bob <b@example.com>" }, "signers[1].email"},
		{"bad condition", func(m map[string]any) { signer(m, 0)["completionCondition"] = "maybe" }, "signers[0].completionCondition"},
		{"all optional", func(m map[string]any) {
			signer(m, 0)["completionCondition"] = "optional"
			signer(m, 1)["completionCondition"] = "optional"
		}, "signers"},
		{"sms without phone", func(m map[string]any) { signer(m, 0)["otpChannel"] = "sms" }, "signers[0].phoneNumber"},
		{"bad phone", func(m map[string]any) { signer(m, 0)["otpChannel"] = "sms"; signer(m, 0)["phoneNumber"] = "0151" }, "signers[0].phoneNumber"},
		{"bad channel", func(m map[string]any) { signer(m, 0)["otpChannel"] = "pigeon" }, "signers[0].otpChannel"},
		{"malformed locale", func(m map[string]any) { signer(m, 1)["locale"] = "de_DE" }, "signers[1].locale"},
		{"unsupported locale", func(m map[string]any) { signer(m, 0)["locale"] = "ja-JP" }, "signers[0].locale"},
		{"bad requester email", func(m map[string]any) { m["requestedByEmail"] = "nope" }, "requestedByEmail"},
		{"control chars", func(m map[string]any) { m["docType"] = "a\x00b" }, "docType"},
		{"C1 in namePrefill", func(m map[string]any) { signer(m, 1)["namePrefill"] = "Bob\u0085" }, "signers[1].namePrefill"},
		{"bidi override in documentId", func(m map[string]any) { m["documentId"] = "D\u202e1" }, "documentId"},
		{"isolate in requestedBy", func(m map[string]any) { m["requestedBy"] = "\u2066Ann\u2069" }, "requestedBy"},
		{"line break in organizationName", func(m map[string]any) { m["organizationName"] = "Acme\nLtd" }, "organizationName"},
		{"line break in documentName", func(m map[string]any) { m["documentName"] = "Lease\nFlat 4B" }, "documentName"},
		{"documentName over 512 bytes", func(m map[string]any) { m["documentName"] = strings.Repeat("é", 257) }, "documentName"},
		{"line separator in templatePath", func(m map[string]any) { m["templatePath"] = "templates/a\u2028b" }, "templatePath"},
		{"DEL in pdfBlobPath", func(m map[string]any) { m["pdfBlobPath"] = "documents/a\x7f.pdf" }, "pdfBlobPath"},
		{"bidi override in email", func(m map[string]any) { signer(m, 0)["email"] = "a\u202eb@example.com" }, "signers[0].email"},
		{"C1 in requester email", func(m map[string]any) { m["requestedByEmail"] = "a\u0085b@example.com" }, "requestedByEmail"},
		{"reminders first zero", func(m map[string]any) {
			m["reminders"] = map[string]any{"firstAfterHours": 0, "everyHours": 24, "max": 3}
		}, "reminders.firstAfterHours"},
		{"reminders every missing", func(m map[string]any) { m["reminders"] = map[string]any{"firstAfterHours": 24, "max": 3} }, "reminders.everyHours"},
		{"reminders max eleven", func(m map[string]any) {
			m["reminders"] = map[string]any{"firstAfterHours": 24, "everyHours": 24, "max": 11}
		}, "reminders.max"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var m map[string]any
			if err := json.Unmarshal([]byte(validCreate), &m); err != nil {
				t.Fatal(err)
			}
			tc.patch(m)
			b, _ := json.Marshal(m)
			var req CreateRequest
			if err := json.Unmarshal(b, &req); err != nil {
				t.Fatal(err)
			}
			err := req.Validate()
			e, ok := apperr.As(err)
			if !ok || e.Kind != apperr.KindInvalid || e.Code != "invalid_request" {
				t.Fatalf("want invalid_request, got %v", err)
			}
			for _, f := range e.Fields {
				if f.Field == tc.field {
					return
				}
			}
			t.Fatalf("no error for %s in %+v", tc.field, e.Fields)
		})
	}
}

func TestCreateRequestDefaults(t *testing.T) {
	t.Parallel()
	var req CreateRequest
	if err := json.Unmarshal([]byte(validCreate), &req); err != nil {
		t.Fatal(err)
	}
	if err := req.Validate(); err != nil {
		t.Fatal(err)
	}
	req.Normalize()
	if *req.ExpiresInMinutes != 30 || !*req.SendPerSignerNotices || req.Signers[0].CompletionCondition != Required || req.Signers[0].OTPChannel != OTPNone {
		t.Fatalf("defaults not applied: %+v", req)
	}
	single := CreateRequest{SigningMode: ModeSingle}
	single.Normalize()
	if *single.SendPerSignerNotices {
		t.Error("single mode must default sendPerSignerNotices to false")
	}
}

func signer(m map[string]any, i int) map[string]any { return m["signers"].([]any)[i].(map[string]any) }

func TestCreateRequestLocale(t *testing.T) {
	t.Parallel()
	var req CreateRequest
	if err := json.Unmarshal([]byte(strings.Replace(validCreate, `"email":"a@example.com"`, `"email":"a@example.com","locale":"de-AT"`, 1)), &req); err != nil {
		t.Fatal(err)
	}
	if err := req.Validate(); err != nil {
		t.Fatal(err)
	}
	req.Normalize()
	if req.Signers[0].Locale != "de" || req.Signers[1].Locale != "" {
		t.Fatalf("locales %q %q; want de and none", req.Signers[0].Locale, req.Signers[1].Locale)
	}
}
