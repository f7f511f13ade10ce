// Package app wires the processor: configuration, dependencies, and the router that maps each
// queue and timer function to its job.
package app

import (
	"errors"
	"fmt"
	"net"
	"net/url"

	"github.com/esign-svc/esign/processor/seal"
	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/callbacksig"
	"github.com/esign-svc/esign/shared/config"
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/notify/operator"
	"github.com/esign-svc/esign/shared/pii"
	"github.com/esign-svc/esign/shared/portalclient"
	"github.com/esign-svc/esign/shared/tokens"
)

// Config is everything the processor needs, validated.
type Config struct {
	Port        string
	Storage     azconn.Config
	Tokens      *tokens.KeyRing
	EmailHasher *pii.Hasher
	PIICipher   *pii.Cipher
	PortalURL   string // base of the portal links in invitations; https, or http on loopback
	// PortalAPIURL is PORTAL_API_URL, the portal's API for the post-seal purge (https, or http on
	// loopback); empty when not set (local development without a portal: the purge is skipped
	// and recorded as such). PortalSecret is the first (current) of PORTAL_CALLBACK_SECRETS, read
	// and required only when PortalAPIURL is set.
	PortalAPIURL  string
	PortalSecret  string
	EmailProvider string      // EMAIL_PROVIDER: outbox (default), operator, customer-acs, smtp
	SMSProvider   string      // SMS_PROVIDER: outbox (default), customer-acs
	Seal          seal.Config // the seal key and chain, SEAL_TSA_URL, SEAL_RECONCILE_AFTER
	Settings      map[string]string

	// lookup is kept for the notification providers, which read their own settings when Build
	// makes them (Communication Services, SMTP).
	lookup config.Lookup
}

// Load reads the configuration through lookup; the error names every setting at fault.
func Load(lookup config.Lookup) (Config, error) {
	r := config.NewReader(lookup)
	c := Config{lookup: lookup}
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
	r.Check("PORTAL_URL", httpsOrLoopback(c.PortalURL))
	c.PortalAPIURL = r.URL(portalclient.SettingURL, false)
	if c.PortalAPIURL != "" {
		_, err := portalclient.ParseBaseURL(c.PortalAPIURL)
		r.Check(portalclient.SettingURL, err)
		if v := r.Secret(portalclient.SettingSecrets); v != "" {
			secrets, err := callbacksig.ParseSecrets(v)
			r.Check(portalclient.SettingSecrets, err)
			if len(secrets) > 0 {
				c.PortalSecret = secrets[0]
			}
		}
	}
	c.EmailProvider = r.Enum(notify.SettingEmailProvider, notify.ProviderOutbox,
		notify.ProviderOutbox, notify.ProviderOperator, notify.ProviderCustomerACS, notify.ProviderSMTP)
	c.SMSProvider = r.Enum(notify.SettingSMSProvider, notify.ProviderOutbox, notify.ProviderOutbox, notify.ProviderCustomerACS)
	if c.EmailProvider == notify.ProviderOperator {
		// Read here too so that they appear in the start-up summary and fail with the rest.
		r.URL(operator.SettingURL, true)
		r.Secret(operator.SettingKey)
	}
	c.Settings = r.Summary()
	sealCfg, sealErr := seal.LoadConfig(lookup)
	c.Seal = sealCfg
	return c, errors.Join(r.Err(), sealErr)
}

// httpsOrLoopback accepts https URLs, and http only for loopback hosts (development).
func httpsOrLoopback(raw string) error {
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
