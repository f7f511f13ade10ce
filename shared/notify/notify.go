// Package notify sends e-mail and SMS. Senders are chosen by configuration: the operator's
// notification service, Azure Communication Services, SMTP, or the outbox (an Azurite table, the
// local default). Message bodies are made from the templates here, which hold only what the spec
// allows each message to say. A Message's recipient is personal data: senders never log it.
package notify

import (
	"context"
	"fmt"
)

// Channel is how a message travels.
type Channel string

const (
	Email Channel = "email"
	SMS   Channel = "sms"
)

// Kind names the message for templates, outbox rows and audit (never the recipient).
type Kind string

const (
	KindInvitation      Kind = "invitation"
	KindSignerReminder  Kind = "signer_reminder" // a reminder without a link (DESIGN 17)
	KindOTP             Kind = "otp"
	KindSignerCompleted Kind = "signer_completed"
	KindSignerNotice    Kind = "requester_signer_notice"
	KindDocumentsReady  Kind = "requester_documents_ready"
	KindDeclineNotice   Kind = "requester_decline_notice"
	KindRevokeNotice    Kind = "requester_revoke_notice"
	KindSealFailure     Kind = "requester_seal_failure"
)

// Message is one e-mail or SMS. SMS uses Text only.
type Message struct {
	Channel       Channel
	Kind          Kind
	To            string
	Subject       string
	Text          string
	HTML          string
	CorrelationID string
}

// Sender delivers messages. Send returns an *apperr.Error of KindUnavailable when the provider
// could not be reached or answered 5xx (worth retrying), KindInvalid when the provider refused
// the message itself.
type Sender interface {
	Send(ctx context.Context, m Message) error
}

// Validate checks a message before it is handed to a provider.
func (m Message) Validate() error {
	switch {
	case m.Channel != Email && m.Channel != SMS:
		return fmt.Errorf("notify: unknown channel %q", m.Channel)
	case m.To == "":
		return fmt.Errorf("notify: %s message without a recipient", m.Kind)
	case m.Channel == Email && m.Subject == "":
		return fmt.Errorf("notify: %s e-mail without a subject", m.Kind)
	case m.Text == "":
		return fmt.Errorf("notify: %s message without a body", m.Kind)
	}
	return nil
}
