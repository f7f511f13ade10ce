// Package acs sends e-mail and SMS through Azure Communication Services (the EMAIL_PROVIDER /
// SMS_PROVIDER value "customer-acs") over its REST API, without the SDK. Requests are signed with
// the resource's access key exactly as Microsoft documents for Communication Services (HMAC-SHA256
// over the verb, path and query, x-ms-date, host and body hash), or carry an Entra bearer token
// when no key is configured (managed identity). Recipients, bodies, keys and tokens never appear
// in errors.
package acs

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"

	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/settings"
)

// Names of the settings; configuration errors name them.
const (
	SettingEndpoint         = "ACS_ENDPOINT"
	SettingAccessKey        = "ACS_ACCESS_KEY"
	SettingConnectionString = "ACS_CONNECTION_STRING"
	SettingClientID         = "ACS_CLIENT_ID"
	SettingEmailSender      = "ACS_EMAIL_SENDER"
	SettingSMSFrom          = "ACS_SMS_FROM"
	SettingEmailWait        = "ACS_EMAIL_WAIT"
	SettingTimeout          = "ACS_TIMEOUT"
)

// ProviderName is the EMAIL_PROVIDER / SMS_PROVIDER value that selects this package.
const ProviderName = notify.ProviderCustomerACS

// TokenScope is the Entra scope of the Communication Services data plane (the double slash is
// how Microsoft's SDKs spell it).
const TokenScope = "https://communication.azure.com//.default"

// Config says where the resource is and how to authenticate. Exactly one of AccessKey and
// Credential is set.
type Config struct {
	// Endpoint is https://<resource>.communication.azure.com (http only for loopback tests).
	Endpoint *url.URL
	// AccessKey is the decoded resource access key (HMAC signing).
	AccessKey []byte
	// Credential supplies bearer tokens for TokenScope when there is no access key.
	Credential azcore.TokenCredential
	// EmailSender is the senderAddress (DoNotReply@<verified domain>).
	EmailSender string
	// SMSFrom is the sending number in E.164 form or a short code.
	SMSFrom string
	// EmailWait bounds how long Send polls an accepted e-mail's operation for its final
	// status; 0 does not poll (accepted counts as sent).
	EmailWait time.Duration
	// Timeout bounds each HTTP exchange with the service.
	Timeout time.Duration
	// HTTPClient is used when set (tests); otherwise a client with Timeout.
	HTTPClient *http.Client
	// Now is the clock for x-ms-date (tests); time.Now when nil.
	Now func() time.Time
}

// ConfigFromLookup reads the ACS settings. needEmail and needSMS say which channel(s) the caller
// will use, so only their sender setting is required. Without an access key (from
// ACS_ACCESS_KEY or ACS_CONNECTION_STRING) a managed identity is used (ACS_CLIENT_ID selects a
// user-assigned one). The error joins every problem, each naming its setting.
func ConfigFromLookup(lookup settings.Lookup, needEmail, needSMS bool) (Config, error) {
	r := settings.NewReader(lookup)
	var cfg Config
	cs := r.OptionalSecret(SettingConnectionString)
	endpoint := r.String(SettingEndpoint, "")
	key := r.OptionalSecret(SettingAccessKey)
	if cs != "" {
		ep, k, err := parseConnectionString(cs)
		r.Check(SettingConnectionString, err)
		if endpoint == "" {
			endpoint = ep
		}
		if key == "" {
			key = k
		}
	}
	if endpoint == "" {
		r.Check(SettingEndpoint, errors.New("is required (or set "+SettingConnectionString+")"))
	} else {
		u, err := parseEndpoint(endpoint)
		r.Check(SettingEndpoint, err)
		cfg.Endpoint = u
	}
	if key != "" {
		b, err := settings.DecodeBase64(key)
		if err != nil || len(b) < 16 {
			r.Check(SettingAccessKey, errors.New("must be the resource's base64 access key"))
		}
		cfg.AccessKey = b
	}
	if needEmail {
		cfg.EmailSender = r.Required(SettingEmailSender)
		if cfg.EmailSender != "" && !plausibleEmail(cfg.EmailSender) {
			r.Check(SettingEmailSender, errors.New("must be an e-mail address such as DoNotReply@example.com"))
		}
	}
	if needSMS {
		cfg.SMSFrom = r.Required(SettingSMSFrom)
		if cfg.SMSFrom != "" && !validFrom(cfg.SMSFrom) {
			r.Check(SettingSMSFrom, errors.New("must be an E.164 number (+15551234567) or a short code"))
		}
	}
	cfg.EmailWait = durationOrZero(r, SettingEmailWait, 10*time.Second)
	cfg.Timeout = r.Duration(SettingTimeout, 15*time.Second)
	clientID := r.String(SettingClientID, "")
	if err := r.Err(); err != nil {
		return Config{}, err
	}
	if cfg.AccessKey == nil {
		opts := &azidentity.ManagedIdentityCredentialOptions{}
		if clientID != "" {
			opts.ID = azidentity.ClientID(clientID)
		}
		mi, err := azidentity.NewManagedIdentityCredential(opts)
		if err != nil {
			return Config{}, fmt.Errorf("setting %s: managed identity: %w", SettingClientID, err)
		}
		cfg.Credential = mi
	}
	return cfg, nil
}

// durationOrZero reads a duration setting where "0" (or "0s") switches the feature off.
func durationOrZero(r *settings.Reader, name string, def time.Duration) time.Duration {
	v := strings.TrimSpace(r.String(name, ""))
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if v == "0" {
		d, err = 0, nil
	}
	if err != nil || d < 0 || d > 5*time.Minute {
		r.Check(name, errors.New("must be a duration from 0 to 5m"))
		return def
	}
	return d
}

// parseConnectionString reads "endpoint=https://...;accesskey=...". Keys are case-insensitive;
// the key's value may end in '='. Segments are never echoed (they may hold the key).
func parseConnectionString(cs string) (endpoint, key string, err error) {
	for i, part := range strings.Split(cs, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			return "", "", fmt.Errorf("segment %d is not key=value", i+1)
		}
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "endpoint":
			endpoint = strings.TrimSpace(v)
		case "accesskey":
			key = strings.TrimSpace(v)
		}
	}
	if endpoint == "" || key == "" {
		return "", "", errors.New("must be endpoint=https://<resource>.communication.azure.com/;accesskey=<key>")
	}
	return endpoint, key, nil
}

// parseEndpoint accepts https URLs, and http only for loopback hosts (local tests).
func parseEndpoint(s string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("must be https://<resource>.communication.azure.com")
	}
	if u.Scheme != "https" && !(u.Scheme == "http" && isLoopback(u.Hostname())) {
		return nil, errors.New("must use https")
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

func isLoopback(host string) bool {
	return host == "localhost" || host == "127.0.0.1" || host == "::1"
}

func plausibleEmail(s string) bool {
	at := strings.LastIndexByte(s, '@')
	return at > 0 && at < len(s)-1 && !strings.ContainsAny(s, " \t\r\n<>,;\"")
}

// validFrom accepts E.164 (+ and 7-15 digits) or a short code (3-8 digits).
func validFrom(s string) bool {
	digits := strings.TrimPrefix(s, "+")
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	if strings.HasPrefix(s, "+") {
		return len(digits) >= 7 && len(digits) <= 15
	}
	return len(digits) >= 3 && len(digits) <= 8
}
