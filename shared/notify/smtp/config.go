// Package smtp sends notification e-mail through an SMTP submission server (EMAIL_PROVIDER
// "smtp"). It uses the standard library's net/smtp client (stable, no extra dependency, and its
// PLAIN auth refuses to send a password over an unencrypted non-loopback connection) with:
// STARTTLS whenever offered and required unless SMTP_INSECURE=true on a loopback host;
// implicit TLS on port 465; AUTH PLAIN or LOGIN when credentials are set; a MIME
// multipart/alternative UTF-8 message (quoted-printable parts, RFC 2047 Subject, Date,
// Message-ID); bounded dial and I/O time. Recipients, bodies and the password never appear in
// errors.
package smtp

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/mail"
	"strings"
	"time"

	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/settings"
)

// Names of the settings; configuration errors name them.
const (
	SettingHost     = "SMTP_HOST"
	SettingPort     = "SMTP_PORT"
	SettingUsername = "SMTP_USERNAME"
	SettingPassword = "SMTP_PASSWORD"
	SettingFrom     = "SMTP_FROM"
	SettingInsecure = "SMTP_INSECURE"
	SettingTimeout  = "SMTP_TIMEOUT"
)

// ProviderName is the EMAIL_PROVIDER value that selects this package.
const ProviderName = notify.ProviderSMTP

// Config says how to reach the submission server.
type Config struct {
	Host     string
	Port     int // 587 by default; 465 means implicit TLS
	Username string
	Password string
	From     mail.Address // the From header and envelope sender
	// Insecure allows a plaintext session (no STARTTLS offered) and skips certificate checks;
	// only for a loopback Host (a local mail catcher).
	Insecure bool
	// DialTimeout bounds connecting; Timeout bounds the whole session after that.
	DialTimeout time.Duration
	Timeout     time.Duration
	// RootCAs verifies the server certificate; nil uses the system roots.
	RootCAs *x509.CertPool
	// Now is the clock for the Date header (tests); time.Now when nil.
	Now func() time.Time
}

// ConfigFromLookup reads SMTP_HOST (required), SMTP_PORT (587), SMTP_USERNAME and
// SMTP_PASSWORD (both or neither), SMTP_FROM (required; "Name <addr>" or addr), SMTP_INSECURE
// (false; true only with a loopback host) and SMTP_TIMEOUT (30s). The error names every
// setting at fault.
func ConfigFromLookup(lookup settings.Lookup) (Config, error) {
	r := settings.NewReader(lookup)
	cfg := Config{
		Host:        r.Required(SettingHost),
		Port:        r.Int(SettingPort, 587, 1, 65535),
		Username:    r.String(SettingUsername, ""),
		Password:    r.OptionalSecret(SettingPassword),
		Insecure:    r.Bool(SettingInsecure, false),
		Timeout:     r.Duration(SettingTimeout, 30*time.Second),
		DialTimeout: 10 * time.Second,
	}
	if strings.ContainsAny(cfg.Host, " /:@\r\n") && net.ParseIP(cfg.Host) == nil {
		r.Check(SettingHost, errors.New("must be a host name or IP address without a port"))
	}
	if (cfg.Username == "") != (cfg.Password == "") {
		r.Check(SettingPassword, fmt.Errorf("set both %s and %s, or neither", SettingUsername, SettingPassword))
	}
	if cfg.Insecure && cfg.Host != "" && !isLoopback(cfg.Host) {
		r.Check(SettingInsecure, fmt.Errorf("may be true only when %s is a loopback host", SettingHost))
	}
	if from := r.Required(SettingFrom); from != "" {
		a, err := parseFrom(from)
		r.Check(SettingFrom, err)
		if a != nil {
			cfg.From = *a
		}
	}
	if err := r.Err(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

func parseFrom(s string) (*mail.Address, error) {
	a, err := mail.ParseAddress(s)
	if err != nil || strings.ContainsAny(a.Name+a.Address, "\r\n") {
		return nil, errors.New("must be an address such as \"E-Sign <no-reply@example.com>\"")
	}
	return a, nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
