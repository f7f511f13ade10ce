package licence

import (
	"crypto/ed25519"
	"errors"
	"fmt"

	"github.com/esign-svc/esign/shared/settings"
	"github.com/esign-svc/esign/shared/webhook"
)

// Settings of the licence, read by both apps: LICENCE (the signed licence) or LICENCE_FILE (its
// path), exactly one, and LICENCE_PUBLIC_KEY; LICENSING_URL (optional) names the operator's
// licensing service (DESIGN 19, shared/licensing).
const (
	SettingText       = "LICENCE"
	SettingFile       = "LICENCE_FILE"
	SettingPublicKey  = "LICENCE_PUBLIC_KEY"
	SettingServiceURL = "LICENSING_URL"
)

// Settings is where the licence comes from and the key it is verified with.
type Settings struct {
	Path      string
	Text      string
	PublicKey ed25519.PublicKey
	// ServiceURL is LICENSING_URL: absolute https (http only on a loopback host), no credentials,
	// query or fragment; "" is the offline licence alone.
	ServiceURL string
}

// ReadSettings reads the licence settings through r, which collects what is at fault.
func ReadSettings(r *settings.Reader) Settings {
	var s Settings
	s.Path = r.String(SettingFile, "")
	s.Text = r.OptionalSecret(SettingText)
	if (s.Path == "") == (s.Text == "") {
		r.Check(SettingText, errors.New("set exactly one of LICENCE (the signed licence) and LICENCE_FILE (its path)"))
	}
	if v := r.Required(SettingPublicKey); v != "" {
		var err error
		s.PublicKey, err = ParsePublicKey(v)
		r.Check(SettingPublicKey, err)
	}
	if v := r.String(SettingServiceURL, ""); v != "" {
		u, err := webhook.ParseBaseURL(v)
		r.Check(SettingServiceURL, err)
		if err == nil {
			s.ServiceURL = u.String()
		}
	}
	return s
}

// Load reads and verifies the licence the settings name. Errors: Load's or Parse's, prefixed
// "licence: ".
func (s Settings) Load(opts ...Option) (*Licence, error) {
	var l *Licence
	var err error
	if s.Path != "" {
		l, err = Load(s.Path, s.PublicKey, opts...)
	} else {
		l, err = Parse(s.Text, s.PublicKey, opts...)
	}
	if err != nil {
		return nil, fmt.Errorf("licence: %w", err)
	}
	return l, nil
}
