package acs

import (
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/settings"
)

// NewEmailFromLookup reads the ACS settings needed for e-mail (ACS_ENDPOINT and ACS_ACCESS_KEY,
// or ACS_CONNECTION_STRING, or a managed identity; ACS_EMAIL_SENDER; optional ACS_EMAIL_WAIT,
// ACS_TIMEOUT, ACS_CLIENT_ID) and returns the sender. The error names every setting at fault.
func NewEmailFromLookup(lookup settings.Lookup) (notify.Sender, error) {
	cfg, err := ConfigFromLookup(lookup, true, false)
	if err != nil {
		return nil, err
	}
	return NewEmail(cfg)
}

// NewSMSFromLookup reads the ACS settings needed for SMS (as NewEmailFromLookup, with
// ACS_SMS_FROM instead of ACS_EMAIL_SENDER) and returns the sender.
func NewSMSFromLookup(lookup settings.Lookup) (notify.Sender, error) {
	cfg, err := ConfigFromLookup(lookup, false, true)
	if err != nil {
		return nil, err
	}
	return NewSMS(cfg)
}
