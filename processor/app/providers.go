package app

import (
	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/notify/outbox"
	"github.com/esign-svc/esign/shared/notify/senders"
)

// OutboxTable is the outbox provider's table (DESIGN 1a).
const OutboxTable = senders.OutboxTable

func providers(cfg Config, acct *azconn.Account) (notify.Providers, *outbox.Outbox, error) {
	return senders.FromConfig(cfg.Lookup, acct)
}
