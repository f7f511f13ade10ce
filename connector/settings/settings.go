// Package settings reads the connector's configuration: the spec's source-system connection
// settings (every SERVICE_* key, with its default) and the few the connector adds, from a
// lookup function (the environment, a file, or both layered), validated with messages that name
// the key at fault. The client secret is never printed: String masks it.
package settings

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/esign-svc/esign/shared/webhook"
)

// The spec's keys ("Source-system connection settings").
const (
	KeyBaseURL          = "SERVICE_DISPATCHER_BASE_URL"
	KeyCode             = "SERVICE_DISPATCHER_CODE"
	KeyTenantID         = "SERVICE_DISPATCHER_TENANT_ID"
	KeyClientID         = "SERVICE_DISPATCHER_CLIENT_ID"
	KeyClientSecret     = "SERVICE_DISPATCHER_CLIENT_SECRET"
	KeyScope            = "SERVICE_DISPATCHER_SCOPE"
	KeyPortalURL        = "SERVICE_PORTAL_URL"
	KeyAsyncThreshold   = "SERVICE_BATCH_ASYNC_THRESHOLD"
	KeyRetentionDays    = "SERVICE_LOG_RETENTION_DAYS"
	KeyNotifyWebhookURL = "SERVICE_BATCH_NOTIFY_WEBHOOK_URL"
	KeyNotifyOn         = "SERVICE_BATCH_NOTIFY_ON"
	KeyMaxRetries       = "SERVICE_GEN_QUEUE_MAX_RETRIES"
	KeyWarnThreshold    = "service_batchwarningthreshold"
	KeyMaxThreshold     = "service_batchmaxthreshold"
)

// Keys the connector adds (not in the spec; documented in the README).
const (
	// KeyAuthorityURL is the OAuth authority; the token endpoint is
	// <authority>/<tenant>/oauth2/v2.0/token (Entra ID's shape).
	KeyAuthorityURL = "SERVICE_DISPATCHER_AUTHORITY_URL"
	// KeyNotifySecret signs the completion webhook (X-Esign-Signature, as the service signs
	// its callbacks) when set; without it the webhook is posted unsigned (Warnings says so).
	KeyNotifySecret = "SERVICE_BATCH_NOTIFY_SECRET"
	// KeyStorePath is the SQLite file of the background jobs and the upload log.
	KeyStorePath = "SERVICE_STORE_PATH"
)

// Defaults of the spec's table.
const (
	DefaultAsyncThreshold = 500
	DefaultRetentionDays  = 90
	DefaultNotifyOn       = NotifyFailureOnly
	DefaultMaxRetries     = 3
	DefaultWarnThreshold  = 25
	DefaultMaxThreshold   = 100
	DefaultAuthorityURL   = "https://login.microsoftonline.com"
)

// NotifyOn values.
const (
	NotifyAlways      = "Always"
	NotifyFailureOnly = "FailureOnly"
)

// MinNotifySecretLen is the shortest webhook signing secret (the service's rule for its own).
const MinNotifySecretLen = 32

// Settings are the validated configuration.
type Settings struct {
	BaseURL      string // without a trailing slash, e.g. https://app.azurewebsites.net/api
	Code         string
	TenantID     string
	ClientID     string
	ClientSecret string
	Scope        string
	AuthorityURL string
	PortalURL    string

	AsyncThreshold   int
	RetentionDays    int
	NotifyWebhookURL string
	NotifyOn         string
	NotifySecret     string
	MaxRetries       int
	WarnThreshold    int
	MaxThreshold     int
	StorePath        string
}

// TokenURL is the OAuth 2.0 token endpoint of the client-credentials grant.
func (s Settings) TokenURL() string {
	return s.AuthorityURL + "/" + url.PathEscape(s.TenantID) + "/oauth2/v2.0/token"
}

// Lookup returns a setting's value and whether it is set.
type Lookup func(key string) (string, bool)

// Layer looks a key up in each lookup in turn; the first that has it wins.
func Layer(lookups ...Lookup) Lookup {
	return func(k string) (string, bool) {
		for _, l := range lookups {
			if l == nil {
				continue
			}
			if v, ok := l(k); ok {
				return v, true
			}
		}
		return "", false
	}
}

// Map is a Lookup over a map.
func Map(m map[string]string) Lookup {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// Load reads and validates the settings. Every problem is reported, each naming its key; the
// error never holds the client secret.
func Load(get Lookup) (Settings, error) {
	var errs []error
	str := func(key string, required bool) string {
		v, _ := get(key)
		v = strings.TrimSpace(v)
		if v == "" && required {
			errs = append(errs, fmt.Errorf("%s is required", key))
		}
		return v
	}
	num := func(key string, def, min int) int {
		v, ok := get(key)
		v = strings.TrimSpace(v)
		if !ok || v == "" {
			return def
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < min {
			errs = append(errs, fmt.Errorf("%s must be a whole number of at least %d, not %q", key, min, v))
			return def
		}
		return n
	}
	s := Settings{
		BaseURL:      strings.TrimRight(str(KeyBaseURL, true), "/"),
		Code:         str(KeyCode, true),
		TenantID:     str(KeyTenantID, true),
		ClientID:     str(KeyClientID, true),
		ClientSecret: str(KeyClientSecret, true),
		Scope:        str(KeyScope, true),
		AuthorityURL: strings.TrimRight(str(KeyAuthorityURL, false), "/"),
		PortalURL:    str(KeyPortalURL, false),

		AsyncThreshold:   num(KeyAsyncThreshold, DefaultAsyncThreshold, 1),
		RetentionDays:    num(KeyRetentionDays, DefaultRetentionDays, 0),
		NotifyWebhookURL: str(KeyNotifyWebhookURL, false),
		NotifyOn:         str(KeyNotifyOn, false),
		NotifySecret:     str(KeyNotifySecret, false),
		MaxRetries:       num(KeyMaxRetries, DefaultMaxRetries, 1),
		WarnThreshold:    num(KeyWarnThreshold, DefaultWarnThreshold, 1),
		MaxThreshold:     num(KeyMaxThreshold, DefaultMaxThreshold, 1),
		StorePath:        str(KeyStorePath, false),
	}
	if s.AuthorityURL == "" {
		s.AuthorityURL = DefaultAuthorityURL
	}
	for _, u := range []struct {
		key, v string
		secret bool // the URL carries a secret, so plain http only to a loopback host
	}{
		{KeyBaseURL, s.BaseURL, true},           // the host key as ?code=, the JWT
		{KeyAuthorityURL, s.AuthorityURL, true}, // the client secret, posted to the token URL
		{KeyPortalURL, s.PortalURL, carriesSecret(s.PortalURL)},
		{KeyNotifyWebhookURL, s.NotifyWebhookURL, carriesSecret(s.NotifyWebhookURL)},
	} {
		if u.v == "" {
			continue
		}
		if !httpURL(u.v) {
			errs = append(errs, fmt.Errorf("%s must be an absolute http or https URL", u.key))
		} else if err := CheckSecretURL(u.v); u.secret && err != nil {
			errs = append(errs, fmt.Errorf("%s %w: it carries a secret", u.key, err))
		}
	}
	switch s.NotifyOn {
	case "":
		s.NotifyOn = DefaultNotifyOn
	case NotifyAlways, NotifyFailureOnly:
	default:
		errs = append(errs, fmt.Errorf("%s must be %s or %s, not %q", KeyNotifyOn, NotifyAlways, NotifyFailureOnly, s.NotifyOn))
	}
	if s.NotifySecret != "" && len(s.NotifySecret) < MinNotifySecretLen {
		errs = append(errs, fmt.Errorf("%s must be at least %d characters when set", KeyNotifySecret, MinNotifySecretLen))
	}
	if s.WarnThreshold > s.MaxThreshold {
		errs = append(errs, fmt.Errorf("%s (%d) must not be above %s (%d)", KeyWarnThreshold, s.WarnThreshold, KeyMaxThreshold, s.MaxThreshold))
	}
	if s.StorePath == "" {
		s.StorePath = defaultStorePath()
	}
	return s, errors.Join(errs...)
}

// Warnings are what the settings allow but an operator should know: the completion webhook set
// without a signing secret (its notices are posted unsigned).
func (s Settings) Warnings() []string {
	var w []string
	if s.NotifyWebhookURL != "" && s.NotifySecret == "" {
		w = append(w, fmt.Sprintf("%s is set without %s: completion notices are posted unsigned (no X-Esign-Signature)", KeyNotifyWebhookURL, KeyNotifySecret))
	}
	return w
}

func httpURL(v string) bool {
	u, err := url.Parse(v)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// CheckSecretURL checks a URL a secret is sent to: https, or http to a loopback host
// (127.0.0.0/8, ::1, localhost) so a local `make run` works; no credentials in it. It is the
// service's rule for the URLs its operator configures (shared/webhook's Policy). The error says
// what is wrong without repeating the URL.
func CheckSecretURL(v string) error {
	_, err := webhook.Policy{AllowLoopback: true, AllowPrivate: true}.CheckURL(v)
	return err
}

// carriesSecret says whether a URL holds credentials of its own: user information or a query
// (a token or key in it).
func carriesSecret(v string) bool {
	u, err := url.Parse(v)
	return err == nil && (u.User != nil || u.RawQuery != "")
}

func defaultStorePath() string {
	if dir, err := os.UserHomeDir(); err == nil && dir != "" {
		return filepath.Join(dir, ".local", "state", "svcconnect", "jobs.db")
	}
	return "svcconnect.db"
}

// String lists the settings for an operator, the secrets masked.
func (s Settings) String() string {
	mask := func(v string) string {
		if v == "" {
			return "(not set)"
		}
		return "(set, hidden)"
	}
	rows := [][2]string{
		{KeyBaseURL, s.BaseURL}, {KeyCode, mask(s.Code)}, {KeyTenantID, s.TenantID},
		{KeyClientID, s.ClientID}, {KeyClientSecret, mask(s.ClientSecret)}, {KeyScope, s.Scope},
		{KeyAuthorityURL, s.AuthorityURL}, {KeyPortalURL, s.PortalURL},
		{KeyAsyncThreshold, strconv.Itoa(s.AsyncThreshold)}, {KeyRetentionDays, strconv.Itoa(s.RetentionDays)},
		{KeyNotifyWebhookURL, s.NotifyWebhookURL}, {KeyNotifyOn, s.NotifyOn}, {KeyNotifySecret, mask(s.NotifySecret)},
		{KeyMaxRetries, strconv.Itoa(s.MaxRetries)}, {KeyWarnThreshold, strconv.Itoa(s.WarnThreshold)},
		{KeyMaxThreshold, strconv.Itoa(s.MaxThreshold)}, {KeyStorePath, s.StorePath},
	}
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "%s=%s\n", r[0], r[1])
	}
	return b.String()
}

// GoString masks too, so %#v never prints the secret.
func (s Settings) GoString() string { return "settings.Settings{\n" + s.String() + "}" }
