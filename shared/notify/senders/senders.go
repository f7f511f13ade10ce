// Package senders builds the e-mail and SMS senders that EMAIL_PROVIDER and SMS_PROVIDER choose,
// for either app: the outbox (the local default, an Azure table), the operator's notification
// service, the customer's Azure Communication Services, or an SMTP relay. Each provider reads its
// own settings through the lookup and names the one at fault.
package senders

import (
	"sync"

	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/notify/acs"
	"github.com/esign-svc/esign/shared/notify/operator"
	"github.com/esign-svc/esign/shared/notify/outbox"
	"github.com/esign-svc/esign/shared/notify/smtp"
	"github.com/esign-svc/esign/shared/settings"
)

// OutboxTable is the outbox provider's table (DESIGN 1a).
const OutboxTable = outbox.DefaultTable

// FromConfig builds the providers. It returns the outbox too when either channel uses it (the
// caller ensures its table at start), else nil. Errors name the setting at fault.
func FromConfig(lookup settings.Lookup, acct *azconn.Account) (notify.Providers, *outbox.Outbox, error) {
	reg := notify.NewRegistry()
	var (
		once sync.Once
		box  *outbox.Outbox
		err  error
	)
	outboxBuilder := func(settings.Lookup) (notify.Sender, error) {
		once.Do(func() { box, err = outbox.New(acct, OutboxTable) })
		return box, err
	}
	reg.Register(notify.ProviderOutbox, notify.Email, outboxBuilder)
	reg.Register(notify.ProviderOutbox, notify.SMS, outboxBuilder)
	reg.Register(notify.ProviderOperator, notify.Email, operator.FromLookup)
	reg.Register(notify.ProviderCustomerACS, notify.Email, acs.NewEmailFromLookup)
	reg.Register(notify.ProviderCustomerACS, notify.SMS, acs.NewSMSFromLookup)
	reg.Register(notify.ProviderSMTP, notify.Email, smtp.NewFromLookup)
	p, perr := reg.FromConfig(lookup)
	return p, box, perr
}
