package notify

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/esign-svc/esign/shared/settings"
)

type namedSender struct{ name string }

func (namedSender) Send(context.Context, Message) error { return nil }

func TestFromConfig(t *testing.T) {
	t.Parallel()
	reg := NewRegistry()
	for _, ch := range []Channel{Email, SMS} {
		reg.Register(ProviderOutbox, ch, func(settings.Lookup) (Sender, error) { return namedSender{"outbox"}, nil })
	}
	reg.Register(ProviderOperator, Email, func(l settings.Lookup) (Sender, error) {
		if _, ok := l("NOTIFICATION_SERVICE_URL"); !ok {
			return nil, errors.New("setting NOTIFICATION_SERVICE_URL: is required")
		}
		return namedSender{"operator"}, nil
	})
	tests := []struct {
		name               string
		settings           map[string]string
		wantEmail, wantSMS string
		wantErr            []string
	}{
		{"defaults", nil, "outbox", "outbox", nil},
		{"operator", map[string]string{"EMAIL_PROVIDER": "operator", "NOTIFICATION_SERVICE_URL": "https://x"}, "operator", "outbox", nil},
		{"operator without its setting", map[string]string{"EMAIL_PROVIDER": "operator"}, "", "", []string{"EMAIL_PROVIDER=operator", "NOTIFICATION_SERVICE_URL"}},
		{"unknown e-mail provider", map[string]string{"EMAIL_PROVIDER": "pigeon"}, "", "", []string{"EMAIL_PROVIDER", "pigeon", "outbox, operator, customer-acs, smtp"}},
		{"smtp is not an SMS provider", map[string]string{"SMS_PROVIDER": "smtp"}, "", "", []string{"SMS_PROVIDER", "outbox, customer-acs"}},
		{"known but not registered", map[string]string{"EMAIL_PROVIDER": "customer-acs", "SMS_PROVIDER": "customer-acs"}, "", "",
			[]string{"EMAIL_PROVIDER", "SMS_PROVIDER", "not built into this app"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := reg.FromConfig(settings.MapLookup(tt.settings))
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatal("no error")
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Email.(namedSender).name != tt.wantEmail || p.SMS.(namedSender).name != tt.wantSMS {
				t.Fatalf("providers %+v", p)
			}
		})
	}
}

func TestRegisterReplacesAndDedupeID(t *testing.T) {
	t.Parallel()
	reg := NewRegistry()
	reg.Register(ProviderSMTP, Email, func(settings.Lookup) (Sender, error) { return namedSender{"one"}, nil })
	reg.Register(ProviderSMTP, Email, func(settings.Lookup) (Sender, error) { return namedSender{"two"}, nil })
	reg.Register(ProviderOutbox, SMS, func(settings.Lookup) (Sender, error) { return namedSender{"o"}, nil })
	p, err := reg.FromConfig(settings.MapLookup(map[string]string{"EMAIL_PROVIDER": "smtp"}))
	if err != nil || p.Email.(namedSender).name != "two" {
		t.Fatalf("%+v %v", p, err)
	}
	if DedupeID(context.Background()) != "" || DedupeID(WithDedupeID(context.Background(), "x")) != "x" {
		t.Fatal("dedupe id not carried")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("nil builder accepted")
		}
	}()
	reg.Register("x", Email, nil)
}
