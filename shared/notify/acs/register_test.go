package acs

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/settings"
)

func TestProvidersFromRegistry(t *testing.T) {
	t.Parallel()
	reg := notify.NewRegistry()
	// as notify/senders registers it
	reg.Register(notify.ProviderCustomerACS, notify.Email, NewEmailFromLookup)
	reg.Register(notify.ProviderCustomerACS, notify.SMS, NewSMSFromLookup)
	env := map[string]string{
		"EMAIL_PROVIDER": "customer-acs", "SMS_PROVIDER": "customer-acs",
		"ACS_CONNECTION_STRING": "endpoint=https://r.communication.azure.com/;accesskey=" + base64.StdEncoding.EncodeToString(testKey),
		"ACS_EMAIL_SENDER":      "DoNotReply@x.example", "ACS_SMS_FROM": "+18005550100",
	}
	p, err := reg.FromConfig(settings.MapLookup(env))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.Email.(*EmailSender); !ok {
		t.Errorf("Email = %T", p.Email)
	}
	if _, ok := p.SMS.(*SMSSender); !ok {
		t.Errorf("SMS = %T", p.SMS)
	}
	delete(env, "ACS_SMS_FROM")
	if _, err := reg.FromConfig(settings.MapLookup(env)); err == nil || !strings.Contains(err.Error(), "ACS_SMS_FROM") {
		t.Errorf("err = %v", err)
	}
}
