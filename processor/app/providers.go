package app

import (
	"sync"

	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/config"
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/notify/operator"
	"github.com/esign-svc/esign/shared/notify/outbox"
)

// OutboxTable is the outbox provider's table (DESIGN 1a).
const OutboxTable = outbox.DefaultTable

// providers builds the e-mail and SMS senders EMAIL_PROVIDER and SMS_PROVIDER choose. It
// returns the outbox too when either channel uses it (its table is ensured at start), else nil.
func providers(cfg Config, acct *azconn.Account) (notify.Providers, *outbox.Outbox, error) {
	reg := notify.NewRegistry()
	var (
		once sync.Once
		box  *outbox.Outbox
		err  error
	)
	outboxBuilder := func(config.Lookup) (notify.Sender, error) {
		once.Do(func() { box, err = outbox.New(acct, OutboxTable) })
		return box, err
	}
	reg.Register(notify.ProviderOutbox, notify.Email, outboxBuilder)
	reg.Register(notify.ProviderOutbox, notify.SMS, outboxBuilder)
	reg.Register(notify.ProviderOperator, notify.Email, operator.FromLookup)
	registerCustomerProviders(reg)
	p, perr := reg.FromConfig(cfg.lookup)
	return p, box, perr
}
