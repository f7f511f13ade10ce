// Package app wires the dispatcher: it reads and validates the configuration, builds the
// stores, verifiers and handlers, and returns the one http.Handler the custom-handler process
// serves (invocations by function name, forwarded /api routes, the readiness ping).
package app

import (
	"crypto/ed25519"
	"fmt"
	"net"
	"net/url"

	"github.com/esign-svc/esign/shared/auth"
	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/callbacksig"
	"github.com/esign-svc/esign/shared/config"
	"github.com/esign-svc/esign/shared/licence"
	"github.com/esign-svc/esign/shared/pii"
	"github.com/esign-svc/esign/shared/tokens"
)

// Config is everything the dispatcher needs, validated.
type Config struct {
	Port             string
	Storage          azconn.Config
	Tokens           *tokens.KeyRing
	EmailHasher      *pii.Hasher
	PIICipher        *pii.Cipher
	CallbackSecrets  []string
	PortalURL        string // base of portalUrl; https, or http on loopback for development
	PortalOrigin     string // CORS origin of the portal
	Auth             auth.Config
	LicencePath      string
	LicenceText      string
	LicencePublicKey ed25519.PublicKey
	Settings         map[string]string // what was read, secrets masked (for the start-up log)

	// lookup is kept for the notification providers (OTP codes are sent by the dispatcher),
	// which read their own settings when Build makes them.
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
	if v := r.Secret("PORTAL_CALLBACK_SECRETS"); v != "" {
		c.CallbackSecrets, err = callbacksig.ParseSecrets(v)
		r.Check("PORTAL_CALLBACK_SECRETS", err)
	}
	c.PortalURL = r.URL("PORTAL_URL", true)
	r.Check("PORTAL_URL", httpsOrLoopback(c.PortalURL))
	c.PortalOrigin = r.URL("PORTAL_ORIGIN", false)
	if c.PortalOrigin == "" && c.PortalURL != "" {
		u, _ := url.Parse(c.PortalURL)
		c.PortalOrigin = u.Scheme + "://" + u.Host
	}
	c.Auth = auth.Config{
		Issuer:   r.Required("AUTH_ISSUER"),
		Audience: r.Required("AUTH_AUDIENCE"),
		JWKSURL:  r.String("AUTH_JWKS_URL", ""),
		JWKSFile: r.String("AUTH_JWKS_FILE", ""),
	}
	if (c.Auth.JWKSURL == "") == (c.Auth.JWKSFile == "") {
		r.Check("AUTH_JWKS_URL", fmt.Errorf("set exactly one of AUTH_JWKS_URL (Azure) and AUTH_JWKS_FILE (development)"))
	}
	c.LicencePath = r.String("LICENCE_FILE", "")
	c.LicenceText = r.OptionalSecret("LICENCE")
	if (c.LicencePath == "") == (c.LicenceText == "") {
		r.Check("LICENCE", fmt.Errorf("set exactly one of LICENCE (the signed licence) and LICENCE_FILE (its path)"))
	}
	if v := r.Required("LICENCE_PUBLIC_KEY"); v != "" {
		c.LicencePublicKey, err = licence.ParsePublicKey(v)
		r.Check("LICENCE_PUBLIC_KEY", err)
	}
	c.Settings = r.Summary()
	return c, r.Err()
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
