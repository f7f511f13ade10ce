// Package app wires the processor: configuration, dependencies, and the router that maps each
// queue and timer function to its job.
package app

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/esign-svc/esign/shared/config"

	"github.com/esign-svc/esign/processor/internal/sealcfg"
	"github.com/esign-svc/esign/shared/callbacksig"
	"github.com/esign-svc/esign/shared/licence"
	"github.com/esign-svc/esign/shared/portalclient"
	"github.com/esign-svc/esign/shared/renewal"
	"github.com/esign-svc/esign/shared/settings"
)

// Config is everything the processor needs, validated.
type Config struct {
	config.Common // port, storage, key rings, PORTAL_URL, GRAPH_*, the providers
	// PortalAPIURL is PORTAL_API_URL, the portal's API for the post-seal purge (https, or http on
	// loopback); empty when not set (local development without a portal: the purge is skipped
	// and recorded as such). PortalSecret is the first (current) of PORTAL_CALLBACK_SECRETS, read
	// and required only when PortalAPIURL is set.
	PortalAPIURL string
	PortalSecret string
	Seal         sealcfg.Config // the seal key and chain, SEAL_TSA_URL, SEAL_LEVEL, SEAL_RECONCILE_AFTER
	// RenewBefore is EVIDENCE_RENEW_BEFORE (a Go duration, or whole days as "180d"; default
	// 180 days): how long before its archive timestamp's certificate expires a sealed
	// document's evidence is renewed (processor/evidencerenew).
	RenewBefore time.Duration
	// DispatchApprovers is DISPATCH_APPROVERS (comma-separated addresses): who is e-mailed a
	// batch waiting for approval when the batch names no approversEmail. Kept out of the
	// settings summary (addresses are personal data).
	DispatchApprovers []string
	// WebhookSecret is the first (current) of WEBHOOK_SECRETS, which signs the workflows'
	// terminal callbacks; "" when not set (each callback then ends as failed,
	// webhook_not_configured). WebhookAllowLoopback is WEBHOOK_ALLOW_LOOPBACK (default false):
	// callback URLs on loopback hosts, over http too, for local development and tests.
	WebhookSecret        string
	WebhookAllowLoopback bool
	// Licence is LICENCE or LICENCE_FILE and LICENCE_PUBLIC_KEY, as the dispatcher reads them:
	// the jobs that act later on an accepted workflow or batch check it again.
	Licence  licence.Settings
	Settings map[string]string
}

// Load reads the configuration through lookup; the error names every setting at fault.
func Load(lookup settings.Lookup) (Config, error) {
	r := settings.NewReader(lookup)
	c := Config{Common: config.Read(r, lookup)}
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
	c.DispatchApprovers = splitAddresses(r.OptionalSecret(SettingDispatchApprovers))
	if v := r.OptionalSecret(SettingWebhookSecrets); v != "" {
		secrets, err := callbacksig.ParseSecrets(v)
		r.Check(SettingWebhookSecrets, err)
		if len(secrets) > 0 {
			c.WebhookSecret = secrets[0]
		}
	}
	c.WebhookAllowLoopback = r.Bool(SettingWebhookAllowLoopback, false)
	c.Licence = licence.ReadSettings(r)
	c.RenewBefore = renewBefore(r)
	c.Settings = r.Summary()
	sealCfg, sealErr := sealcfg.LoadConfig(lookup)
	c.Seal = sealCfg
	return c, errors.Join(r.Err(), sealErr)
}

// renewBefore reads EVIDENCE_RENEW_BEFORE: "<n>d" (days) or a Go duration, at least a day.
func renewBefore(r *settings.Reader) time.Duration {
	v := r.String(SettingRenewBefore, "")
	if v == "" {
		return renewal.DefaultRenewBefore
	}
	if days, found := strings.CutSuffix(v, "d"); found {
		n, err := strconv.Atoi(days)
		if err != nil || n < 1 || n > 3650 {
			r.Check(SettingRenewBefore, errors.New("must be whole days from 1d to 3650d, or a Go duration of at least 24h"))
			return renewal.DefaultRenewBefore
		}
		return time.Duration(n) * 24 * time.Hour
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 24*time.Hour {
		r.Check(SettingRenewBefore, errors.New("must be whole days from 1d to 3650d, or a Go duration of at least 24h"))
		return renewal.DefaultRenewBefore
	}
	return d
}

// Settings of the processor's own.
const (
	// SettingRenewBefore is the evidence renewal window (processor/evidencerenew).
	SettingRenewBefore = "EVIDENCE_RENEW_BEFORE"
	// SettingDispatchApprovers names the deployment's batch approvers.
	SettingDispatchApprovers = "DISPATCH_APPROVERS"
	// SettingWebhookSecrets signs the workflows' terminal callbacks (comma-separated, current
	// first, as callbacksig.ParseSecrets reads them).
	SettingWebhookSecrets = "WEBHOOK_SECRETS"
	// SettingWebhookAllowLoopback admits loopback callback URLs (development).
	SettingWebhookAllowLoopback = "WEBHOOK_ALLOW_LOOPBACK"
)

// splitAddresses is a comma-separated list's non-empty entries, trimmed.
func splitAddresses(v string) []string {
	var out []string
	for _, a := range strings.Split(v, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}
