package esign

import (
	"encoding/json"
	"testing"

	"github.com/esign-svc/esign/shared/apperr"
)

// FuzzCreateRequest: any body that decodes is validated without panicking; a refusal is always
// a 400 invalid_request naming at least one field; an accepted request normalises to the limits.
func FuzzCreateRequest(f *testing.F) {
	f.Add([]byte(validCreate))
	f.Add([]byte(`{"signers":[{"slotIndex":0}]}`))
	f.Add([]byte(`{"signingMode":"single","expiresInMinutes":-5,"signers":[{"slotIndex":0,"role":"r","email":"a@b.c","otpChannel":"sms"}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var req CreateRequest
		if json.Unmarshal(body, &req) != nil {
			return
		}
		err := req.Validate()
		if err != nil {
			e, ok := apperr.As(err)
			if !ok || e.Kind != apperr.KindInvalid || len(e.Fields) == 0 {
				t.Fatalf("refusal is not a 400 naming a field: %v", err)
			}
			return
		}
		req.Normalize()
		if *req.ExpiresInMinutes < 1 || *req.ExpiresInMinutes > MaxExpiresInMinutes || len(req.Signers) == 0 || len(req.Signers) > MaxSigners {
			t.Fatalf("accepted out of limits: %+v", req)
		}
	})
}
