package render

import (
	"encoding/json"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/pii"
)

// SignedDeliveryKey is the idempotency key of the delivery of session groupID's signed PDF: a
// redelivered message makes the same sessions once.
func SignedDeliveryKey(groupID string) string { return "esign:" + groupID }

// CodePlanUnreadable: a complete session's delivery plan does not decrypt or decode.
const CodePlanUnreadable = "delivery_plan_unreadable"

// SignedDelivery is the delivery request that waited for session s to complete, on its signed
// PDF. Errors: esign.ErrNoDeliveryPlanned; CodePlanUnreadable (invalid kind) when the plan
// does not decrypt or decode.
func SignedDelivery(s *esign.Session, cipher *pii.Cipher) (delivery.CreateRequest, error) {
	var req delivery.CreateRequest
	if s.State != esign.SessionComplete || s.ThenDeliverEnc == "" || s.SignedPath == "" {
		return req, esign.ErrNoDeliveryPlanned
	}
	plain, err := cipher.Decrypt(s.ThenDeliverEnc, pii.AAD(s.GroupID, "thenDeliver"))
	if err != nil {
		return req, apperr.New(apperr.KindInvalid, CodePlanUnreadable, "the session's delivery plan does not decrypt")
	}
	if err := json.Unmarshal(plain, &req); err != nil {
		return req, apperr.New(apperr.KindInvalid, CodePlanUnreadable, "the session's delivery plan does not decode")
	}
	req.PDFBlobPath = s.SignedPath
	return req, nil
}
