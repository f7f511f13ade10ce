package smtp

import "github.com/esign-svc/esign/shared/notify"

// Register makes "smtp" available for EMAIL_PROVIDER on notify.DefaultRegistry.
func Register() { RegisterOn(notify.DefaultRegistry) }

// RegisterOn makes "smtp" available for e-mail on reg.
func RegisterOn(reg *notify.Registry) {
	reg.Register(notify.ProviderSMTP, notify.Email, NewFromLookup)
}
