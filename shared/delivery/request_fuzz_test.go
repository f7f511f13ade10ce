package delivery

import (
	"encoding/json"
	"testing"

	"github.com/esign-svc/esign/shared/apperr"
)

// FuzzCreateRequest: any body that decodes is validated without panicking; a refusal is always
// a 4xx naming at least one field; an accepted request normalises within the limits.
func FuzzCreateRequest(f *testing.F) {
	f.Add([]byte(`{"correlationId":"c1","documentName":"a.pdf","pdfBlobPath":"documents/a.pdf","mode":"secure-email","recipients":[{"email":"r@example.test"}]}`))
	f.Add([]byte(`{"mode":"both","recipients":[],"sharePointTarget":{"siteUrl":"https://x.sharepoint.com/sites/a","libraryPath":"Docs","folderPath":"../x"}}`))
	f.Add([]byte(`{"mode":"sharepoint","expiresInHours":0,"recipients":[{"email":"x"},{"email":"x"}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var req CreateRequest
		if json.Unmarshal(body, &req) != nil {
			return
		}
		if err := req.Validate(); err != nil {
			e, ok := apperr.As(err)
			if !ok || e.Kind.Status() < 400 || e.Kind.Status() >= 500 || len(e.Fields) == 0 {
				t.Fatalf("refusal is not a 4xx naming a field: %v", err)
			}
			return
		}
		req.Normalize()
		if len(req.Recipients) == 0 || len(req.Recipients) > MaxRecipients || req.ExpiresInHours == nil ||
			*req.ExpiresInHours < 1 || *req.ExpiresInHours > MaxExpiresInHours {
			t.Fatalf("accepted out of limits: %+v", req)
		}
	})
}
