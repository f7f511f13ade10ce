package funcproto

import (
	"encoding/json"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
)

// QueueMessage is a queue trigger's message and metadata.
type QueueMessage struct {
	ID              string
	PopReceipt      string
	DequeueCount    int
	InsertionTime   time.Time
	ExpirationTime  time.Time
	NextVisibleTime time.Time
	// Body is the message text once decoded: for this project's messages, a JSON object.
	Body []byte
}

// CodeInvalidMessage is the code of QueueMessage.Decode's error.
const CodeInvalidMessage = apperr.CodeInvalidMessage

// CodeTenantMismatch refuses a message whose tenant is not its session's (permanent).
const CodeTenantMismatch = "tenant_mismatch"

// TenantMismatch is the permanent refusal of a message whose tenant is not that of the
// aggregate it names (what: "session", "batch", "delivery").
func TenantMismatch(what string) error {
	return Permanent(apperr.New(apperr.KindInvalid, CodeTenantMismatch, "the message's tenant is not the %s's", what))
}

// QueueMessage decodes the queue trigger binding named binding ("" or a missing name with a
// single Data member takes that member) and its metadata. Errors: *apperr.Error KindInvalid
// code "invalid_invocation" naming the field at fault.
func (in *InvocationRequest) QueueMessage(binding string) (QueueMessage, error) {
	raw, field, err := in.trigger(binding)
	if err != nil {
		return QueueMessage{}, err
	}
	var m QueueMessage
	if m.Body, err = unwrapText(raw, field); err != nil {
		return m, err
	}
	md := in.Metadata.Fields
	if m.ID, err = flexString(member(md, "Id"), "Metadata.Id"); err != nil {
		return m, err
	}
	if m.PopReceipt, err = flexString(member(md, "PopReceipt"), "Metadata.PopReceipt"); err != nil {
		return m, err
	}
	if m.DequeueCount, err = flexInt(member(md, "DequeueCount"), "Metadata.DequeueCount"); err != nil {
		return m, err
	}
	times := []struct {
		name string
		dst  *time.Time
	}{
		{"InsertionTime", &m.InsertionTime},
		{"ExpirationTime", &m.ExpirationTime},
		{"NextVisibleTime", &m.NextVisibleTime},
	}
	for _, t := range times {
		if *t.dst, err = flexTime(member(md, t.name), "Metadata."+t.name); err != nil {
			return m, err
		}
	}
	return m, nil
}

// Decode unmarshals the message body into v. A body that does not decode can never succeed, so
// the error is marked Permanent: QueueHandler acknowledges it rather than retrying. Errors:
// Permanent(*apperr.Error KindInvalid code "invalid_message").
func (m QueueMessage) Decode(v any) error {
	if err := json.Unmarshal(m.Body, v); err != nil {
		return Permanent(apperr.Wrap(err, apperr.KindInvalid, CodeInvalidMessage, "the queue message is not the expected JSON"))
	}
	return nil
}
