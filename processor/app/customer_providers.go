package app

import (
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/notify/acs"
	"github.com/esign-svc/esign/shared/notify/smtp"
)

// registerCustomerProviders is the hook for the providers that live in their own packages
// (the customer's Azure Communication Services, an SMTP relay). Each Builder reads its own
// settings through the lookup and names the one at fault. A provider added later registers here.
func registerCustomerProviders(reg *notify.Registry) {
	reg.Register(notify.ProviderCustomerACS, notify.Email, acs.NewEmailFromLookup)
	reg.Register(notify.ProviderCustomerACS, notify.SMS, acs.NewSMSFromLookup)
	reg.Register(notify.ProviderSMTP, notify.Email, smtp.NewFromLookup)
}
