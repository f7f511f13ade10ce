package smtp

import (
	"strings"
	"testing"

	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/settings"
)

func TestProvidersFromRegistry(t *testing.T) {
	t.Parallel()
	reg := notify.NewRegistry()
	reg.Register(notify.ProviderSMTP, notify.Email, NewFromLookup) // as notify/senders registers it
	// SMS_PROVIDER defaults to the outbox, which this package does not provide.
	reg.Register(notify.ProviderOutbox, notify.SMS, func(settings.Lookup) (notify.Sender, error) { return &Sender{}, nil })
	env := map[string]string{"EMAIL_PROVIDER": "smtp", "SMTP_HOST": "smtp.example.com", "SMTP_FROM": "no-reply@example.com"}
	p, err := reg.FromConfig(settings.MapLookup(env))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.Email.(*Sender); !ok {
		t.Errorf("Email = %T", p.Email)
	}
	delete(env, "SMTP_HOST")
	if _, err := reg.FromConfig(settings.MapLookup(env)); err == nil || !strings.Contains(err.Error(), "SMTP_HOST") {
		t.Errorf("err = %v", err)
	}
}
