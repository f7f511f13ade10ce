package notify

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/esign-svc/esign/shared/settings"
)

// Provider names, the values of the EMAIL_PROVIDER and SMS_PROVIDER settings.
const (
	ProviderOutbox      = "outbox"       // the local default: an Azurite table (package outbox)
	ProviderOperator    = "operator"     // the operator's notification service (package operator), e-mail only
	ProviderCustomerACS = "customer-acs" // the customer's Azure Communication Services
	ProviderSMTP        = "smtp"         // an SMTP relay, e-mail only
)

// Settings that choose the providers.
const (
	SettingEmailProvider = "EMAIL_PROVIDER"
	SettingSMSProvider   = "SMS_PROVIDER"
)

// providerNames are the values each channel's setting accepts (in the order error messages list
// them).
var providerNames = map[Channel][]string{
	Email: {ProviderOutbox, ProviderOperator, ProviderCustomerACS, ProviderSMTP},
	SMS:   {ProviderOutbox, ProviderCustomerACS},
}

// Builder makes a provider's Sender from the app settings (it reads its own settings, such as
// a connection string or a host name, through lookup). It returns an error naming the setting
// at fault when they are missing or invalid.
type Builder func(lookup settings.Lookup) (Sender, error)

// Providers are the senders the configuration chose, one per channel.
type Providers struct {
	Email Sender
	SMS   Sender
}

// Registry maps (provider name, channel) to a Builder. Provider packages cannot be imported by
// this package (they import it), so the app's wiring registers the ones it links in: the outbox
// and operator builders need the storage account or their settings, the Communication Services
// and SMTP packages plug in the same way, for example
//
//	reg.Register(notify.ProviderCustomerACS, notify.Email, acs.EmailFromLookup)
//
// A Registry is safe for concurrent use.
type Registry struct {
	mu       sync.RWMutex
	builders map[string]Builder // "<channel>/<name>"
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{builders: map[string]Builder{}} }

// Register makes name available for channel ch. A later registration of the same name and
// channel replaces the earlier one (so an app built twice, as in tests, registers again).
// Registering an empty name, an unknown channel or a nil builder is a programming error and
// panics at start-up, like http.ServeMux.
func (r *Registry) Register(name string, ch Channel, b Builder) {
	if name == "" || b == nil || (ch != Email && ch != SMS) {
		panic(fmt.Sprintf("notify: Register(%q, %q): empty name, unknown channel or nil builder", name, ch))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.builders[string(ch)+"/"+name] = b
}

func (r *Registry) builder(name string, ch Channel) (Builder, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	b, ok := r.builders[string(ch)+"/"+name]
	return b, ok
}

// FromConfig reads EMAIL_PROVIDER (default outbox; outbox, operator, customer-acs or smtp) and
// SMS_PROVIDER (default outbox; outbox or customer-acs) and builds each chosen sender with its
// registered Builder. Errors (joined, each naming its setting): a value outside the channel's
// list, a provider this app has not registered, and whatever the provider's Builder returns.
func (r *Registry) FromConfig(lookup settings.Lookup) (Providers, error) {
	var p Providers
	var errs []error
	build := func(setting string, ch Channel, dst *Sender) {
		name := ProviderOutbox
		if v, ok := lookup(setting); ok && strings.TrimSpace(v) != "" {
			name = strings.TrimSpace(v)
		}
		if !allowed(ch, name) {
			errs = append(errs, fmt.Errorf("setting %s: %q is not a %s provider; use one of %s", setting, name, ch, strings.Join(providerNames[ch], ", ")))
			return
		}
		b, ok := r.builder(name, ch)
		if !ok {
			errs = append(errs, fmt.Errorf("setting %s: provider %q is not built into this app (registered: %s)", setting, name, strings.Join(r.names(ch), ", ")))
			return
		}
		s, err := b(lookup)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("setting %s=%s: %w", setting, name, err))
		case s == nil:
			errs = append(errs, fmt.Errorf("setting %s=%s: the provider built no sender", setting, name))
		default:
			*dst = s
		}
	}
	build(SettingEmailProvider, Email, &p.Email)
	build(SettingSMSProvider, SMS, &p.SMS)
	return p, errors.Join(errs...)
}

func allowed(ch Channel, name string) bool {
	for _, n := range providerNames[ch] {
		if n == name {
			return true
		}
	}
	return false
}

func (r *Registry) names(ch Channel) []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []string
	for k := range r.builders {
		if n, ok := strings.CutPrefix(k, string(ch)+"/"); ok {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	if len(out) == 0 {
		out = []string{"none"}
	}
	return out
}

type dedupeKey struct{}

// WithDedupeID attaches to ctx the id of the notification being sent: the same id on a second
// Send means the same notification (a redelivered queue message), a different one a different
// notification even when kind and recipient are equal (a resend with a new link, a notice for
// another slot). Providers with an idempotency header (the operator service, Communication
// Services' repeatability id) build it from this id. It must not be personal data.
func WithDedupeID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, dedupeKey{}, id)
}

// DedupeID is the id WithDedupeID attached, or "".
func DedupeID(ctx context.Context) string {
	id, _ := ctx.Value(dedupeKey{}).(string)
	return id
}
