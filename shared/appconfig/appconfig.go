// Package appconfig reads the settings both Function Apps share: the handler port, storage,
// the token and PII key rings, the portal URL and the document-library (Graph) connection.
// Each app's own Load reads its other settings with the same settings.Reader, so one error names
// every setting at fault and the start-up summary shows every setting read (secrets masked).
package appconfig

import (
	"fmt"
	"net"
	"net/url"

	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/notify/acs"
	"github.com/esign-svc/esign/shared/notify/operator"
	"github.com/esign-svc/esign/shared/notify/smtp"
	"github.com/esign-svc/esign/shared/pii"
	"github.com/esign-svc/esign/shared/settings"
	"github.com/esign-svc/esign/shared/tokens"
)

// Common are the settings both apps read.
type Common struct {
	Port        string // FUNCTIONS_CUSTOMHANDLER_PORT
	Storage     azconn.Config
	Tokens      *tokens.KeyRing // TOKEN_KEYS
	EmailHasher *pii.Hasher     // PII_HASH_KEY
	PIICipher   *pii.Cipher     // PII_ENC_KEYS
	PortalURL   string          // PORTAL_URL: https, or http on loopback for development
	Graph       Graph           // GRAPH_*: the document-library upload (optional)
	// EmailProvider is EMAIL_PROVIDER: outbox (default), operator, customer-acs, smtp;
	// SMSProvider is SMS_PROVIDER: outbox (default), customer-acs. The providers' own settings
	// are read when the senders are built (notify/senders.FromConfig through Lookup).
	EmailProvider string
	SMSProvider   string
	// Lookup is kept for the parts that read their own settings when they are built (the
	// notification providers).
	Lookup settings.Lookup
}

// Read reads the shared settings through r (problems are collected in r).
func Read(r *settings.Reader, lookup settings.Lookup) Common {
	c := Common{Lookup: lookup}
	c.Port = r.String("FUNCTIONS_CUSTOMHANDLER_PORT", "8080")
	c.Storage = azconn.ConfigFromLookup(lookup)
	if c.Storage.ConnectionString == "" && c.Storage.AccountName == "" {
		r.Check(azconn.SettingConnectionString, fmt.Errorf("set it (locally) or %s (managed identity in Azure)", azconn.SettingAccountName))
	}
	var err error
	if v := r.Secret("TOKEN_KEYS"); v != "" {
		c.Tokens, err = tokens.ParseKeyRing(v)
		r.Check("TOKEN_KEYS", err)
	}
	if v := r.Secret("PII_HASH_KEY"); v != "" {
		c.EmailHasher, err = pii.ParseHashKey(v)
		r.Check("PII_HASH_KEY", err)
	}
	if v := r.Secret("PII_ENC_KEYS"); v != "" {
		c.PIICipher, err = pii.ParseCipher(v)
		r.Check("PII_ENC_KEYS", err)
	}
	c.PortalURL = r.URL("PORTAL_URL", true)
	r.Check("PORTAL_URL", HTTPSOrLoopback(c.PortalURL))
	c.Graph = readGraph(r)
	c.EmailProvider = r.Enum(notify.SettingEmailProvider, notify.ProviderOutbox,
		notify.ProviderOutbox, notify.ProviderOperator, notify.ProviderCustomerACS, notify.ProviderSMTP)
	c.SMSProvider = r.Enum(notify.SettingSMSProvider, notify.ProviderOutbox, notify.ProviderOutbox, notify.ProviderCustomerACS)
	if c.EmailProvider == notify.ProviderOperator {
		// Read here too so that they appear in the start-up summary and fail with the rest.
		r.URL(operator.SettingURL, true)
		r.Secret(operator.SettingKey)
	}
	noteProviderSettings(r, c)
	return c
}

// noteProviderSettings puts the chosen providers' own settings in the start-up summary (secrets
// masked). The providers validate them when the senders are built, naming the setting at fault.
func noteProviderSettings(r *settings.Reader, c Common) {
	if c.EmailProvider == notify.ProviderSMTP {
		for _, name := range []string{smtp.SettingHost, smtp.SettingPort, smtp.SettingUsername, smtp.SettingFrom,
			smtp.SettingInsecure, smtp.SettingTimeout} {
			r.String(name, "")
		}
		r.OptionalSecret(smtp.SettingPassword)
	}
	if c.EmailProvider == notify.ProviderCustomerACS || c.SMSProvider == notify.ProviderCustomerACS {
		for _, name := range []string{acs.SettingEndpoint, acs.SettingClientID, acs.SettingEmailSender, acs.SettingSMSFrom,
			acs.SettingEmailWait, acs.SettingTimeout} {
			r.String(name, "")
		}
		r.OptionalSecret(acs.SettingAccessKey)
		r.OptionalSecret(acs.SettingConnectionString)
	}
}

// HTTPSOrLoopback accepts https URLs, and http only for loopback hosts (development).
func HTTPSOrLoopback(raw string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	if u.Scheme == "https" {
		return nil
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
		return nil
	}
	return fmt.Errorf("must be https (http is allowed only on loopback)")
}
